// The synthetic Gemma-4 tokenizer of cortiq-synth (see synth_tokenizer.h for the layout).
#include "tools/cortiq-synth/synth_tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace cortiq {
namespace {

// U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's space marker, in UTF-8.
constexpr char kSpaceMarker[] = "\xE2\x96\x81";

// Largest vocabulary: GGUF readers cap one array at 2^24 elements (formats/gguf.h).
constexpr int64_t kMaxSynthVocabSize = int64_t{1} << 24;

// Reserved ids: 0..106 (specials and control tokens), and from the first multimodal token on.
constexpr int64_t kLastLowReservedId = 106;
constexpr int64_t kFirstHighReservedId = 255999;
constexpr int64_t kNewlineId = 107;
constexpr int64_t kFirstByteId = 108;
constexpr int64_t kFirstCharacterId = kFirstByteId + 256;

struct FixedToken {
  int64_t id;
  const char* content;
};

// Gemma 4's special and control tokens at their ids (released tokenizer.json and config.json:
// image_token_id 258880, boi_token_id 255999, eoi_token_id 258882, audio_token_id 258881,
// boa_token_id 256000, eoa_token_id 258883, video_token_id 258884).
constexpr FixedToken kFixedTokens[] = {
    {0, "<pad>"},
    {1, "<eos>"},
    {2, "<bos>"},
    {3, "<unk>"},
    {4, "<mask>"},
    {46, "<|tool>"},
    {47, "<tool|>"},
    {48, "<|tool_call>"},
    {49, "<tool_call|>"},
    {50, "<|tool_response>"},
    {51, "<tool_response|>"},
    {52, "<|\"|>"},
    {98, "<|think|>"},
    {100, "<|channel>"},
    {101, "<channel|>"},
    {105, "<|turn>"},
    {106, "<turn|>"},
    {255999, "<|image>"},
    {256000, "<|audio>"},
    {258880, "<|image|>"},
    {258881, "<|audio|>"},
    {258882, "<image|>"},
    {258883, "<audio|>"},
    {258884, "<|video|>"},
};

// tokenizer_config.json's names of the multimodal tokens (HF Gemma4Processor).
constexpr std::pair<const char*, const char*> kMultimodalConfigNames[] = {
    {"boi_token", "<|image>"},    {"eoi_token", "<image|>"}, {"image_token", "<|image|>"},
    {"boa_token", "<|audio>"},    {"eoa_token", "<audio|>"}, {"audio_token", "<|audio|>"},
    {"video_token", "<|video|>"},
};

struct Vocabulary {
  std::vector<std::string> pieces;                  // by id
  std::vector<bool> added;                          // an added (special) token
  std::vector<std::pair<int64_t, int64_t>> merges;  // ids of the merged pair, in rank order
};

Vocabulary BuildVocabulary(int64_t vocab_size) {
  Vocabulary v;
  v.pieces.resize(static_cast<size_t>(vocab_size));
  v.added.assign(static_cast<size_t>(vocab_size), false);
  for (const FixedToken& t : kFixedTokens) {
    if (t.id >= vocab_size) continue;
    v.pieces[static_cast<size_t>(t.id)] = t.content;
    v.added[static_cast<size_t>(t.id)] = true;
  }
  int unused = 0;
  const auto reserve = [&](int64_t id) {
    if (!v.added[static_cast<size_t>(id)]) {
      v.pieces[static_cast<size_t>(id)] = absl::StrCat("<unused", unused++, ">");
      v.added[static_cast<size_t>(id)] = true;
    }
  };
  for (int64_t id = 0; id <= kLastLowReservedId; ++id) reserve(id);
  for (int64_t id = kFirstHighReservedId; id < vocab_size; ++id) reserve(id);
  v.pieces[kNewlineId] = "\n";
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    v.pieces[static_cast<size_t>(kFirstByteId + b)] = name;
  }
  // Single characters, then each token extended by a letter, breadth first, until the ids
  // below the high reserved range are used up. A generated piece never contains '<' followed by
  // letters and digits and '>', so it never equals a reserved or byte token.
  const int64_t end = std::min(vocab_size, kFirstHighReservedId);
  int64_t next = kFirstCharacterId;
  absl::flat_hash_set<std::string> seen;
  v.pieces[static_cast<size_t>(next++)] = kSpaceMarker;
  for (char c = '!'; c <= '~'; ++c) v.pieces[static_cast<size_t>(next++)] = std::string(1, c);
  for (int64_t id = kFirstCharacterId; id < next; ++id)
    seen.insert(v.pieces[static_cast<size_t>(id)]);
  std::vector<int64_t> letter_id(26);
  for (int i = 0; i < 26; ++i) letter_id[i] = kFirstCharacterId + 1 + ('a' - '!') + i;
  for (int64_t base = kFirstCharacterId; next < end; ++base) {
    for (int i = 0; i < 26 && next < end; ++i) {
      std::string piece = v.pieces[static_cast<size_t>(base)] + static_cast<char>('a' + i);
      if (!seen.insert(piece).second) continue;
      v.pieces[static_cast<size_t>(next)] = std::move(piece);
      v.merges.emplace_back(base, letter_id[i]);
      ++next;
    }
  }
  return v;
}

// The fields of an added token after its id (tokenizer.json) or under its id
// (tokenizer_config.json's added_tokens_decoder).
void AddedTokenJsonFields(llvm::json::OStream& j, const std::string& content) {
  j.attribute("content", content);
  j.attribute("single_word", false);
  j.attribute("lstrip", false);
  j.attribute("rstrip", false);
  j.attribute("normalized", false);
  j.attribute("special", true);
}

std::string TokenizerJson(const Vocabulary& v) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os);
  const auto string_pattern = [&](const char* pattern, const char* content) {
    j.attributeObject("pattern", [&] { j.attribute("String", pattern); });
    j.attribute("content", content);
  };
  const auto special_token = [&](const char* id) {
    j.object([&] {
      j.attributeObject("SpecialToken", [&] {
        j.attribute("id", id);
        j.attribute("type_id", 0);
      });
    });
  };
  const auto sequence = [&](const char* id, int type_id) {
    j.object([&] {
      j.attributeObject("Sequence", [&] {
        j.attribute("id", id);
        j.attribute("type_id", type_id);
      });
    });
  };
  j.object([&] {
    j.attribute("version", "1.0");
    j.attribute("truncation", nullptr);
    j.attribute("padding", nullptr);
    j.attributeArray("added_tokens", [&] {
      for (size_t id = 0; id < v.pieces.size(); ++id) {
        if (!v.added[id]) continue;
        j.object([&] {
          j.attribute("id", static_cast<int64_t>(id));
          AddedTokenJsonFields(j, v.pieces[id]);
        });
      }
    });
    j.attributeObject("normalizer", [&] {
      j.attribute("type", "Replace");
      string_pattern(" ", kSpaceMarker);
    });
    j.attribute("pre_tokenizer", nullptr);
    j.attributeObject("post_processor", [&] {
      j.attribute("type", "TemplateProcessing");
      j.attributeArray("single", [&] {
        special_token("<bos>");
        sequence("A", 0);
      });
      j.attributeArray("pair", [&] {
        special_token("<bos>");
        sequence("A", 0);
        sequence("B", 1);
      });
      j.attributeObject("special_tokens", [&] {
        j.attributeObject("<bos>", [&] {
          j.attribute("id", "<bos>");
          j.attributeArray("ids", [&] { j.value(2); });
          j.attributeArray("tokens", [&] { j.value("<bos>"); });
        });
      });
    });
    j.attributeObject("decoder", [&] {
      j.attribute("type", "Sequence");
      j.attributeArray("decoders", [&] {
        j.object([&] {
          j.attribute("type", "Replace");
          string_pattern(kSpaceMarker, " ");
        });
        j.object([&] { j.attribute("type", "ByteFallback"); });
        j.object([&] { j.attribute("type", "Fuse"); });
      });
    });
    j.attributeObject("model", [&] {
      j.attribute("type", "BPE");
      j.attribute("dropout", nullptr);
      j.attribute("unk_token", "<unk>");
      j.attribute("continuing_subword_prefix", nullptr);
      j.attribute("end_of_word_suffix", nullptr);
      j.attribute("fuse_unk", true);
      j.attribute("byte_fallback", true);
      j.attribute("ignore_merges", false);
      j.attributeObject("vocab", [&] {
        for (size_t id = 0; id < v.pieces.size(); ++id) {
          j.attribute(v.pieces[id], static_cast<int64_t>(id));
        }
      });
      j.attributeArray("merges", [&] {
        for (const auto& [left, right] : v.merges) {
          j.array([&] {
            j.value(v.pieces[static_cast<size_t>(left)]);
            j.value(v.pieces[static_cast<size_t>(right)]);
          });
        }
      });
    });
  });
  os.flush();
  return text + "\n";
}

std::string TokenizerConfigJson(const Vocabulary& v) {
  const auto present = [&](const char* content) {
    for (const FixedToken& t : kFixedTokens) {
      if (std::string(t.content) == content) return t.id < static_cast<int64_t>(v.pieces.size());
    }
    return false;
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os, /*IndentSize=*/2);
  j.object([&] {
    j.attribute("add_bos_token", true);
    j.attribute("add_eos_token", false);
    j.attribute("bos_token", "<bos>");
    j.attribute("eos_token", "<eos>");
    j.attribute("pad_token", "<pad>");
    j.attribute("unk_token", "<unk>");
    j.attribute("mask_token", "<mask>");
    for (const auto& [name, content] : kMultimodalConfigNames) {
      if (present(content)) j.attribute(name, content);
    }
    j.attribute("clean_up_tokenization_spaces", false);
    j.attribute("model_max_length", 131072);
    j.attribute("padding_side", "left");
    j.attribute("spaces_between_special_tokens", false);
    j.attribute("tokenizer_class", "GemmaTokenizer");
    j.attributeObject("added_tokens_decoder", [&] {
      for (size_t id = 0; id < v.pieces.size(); ++id) {
        if (!v.added[id]) continue;
        j.attributeObject(std::to_string(id), [&] { AddedTokenJsonFields(j, v.pieces[id]); });
      }
    });
  });
  os.flush();
  return text + "\n";
}

std::string GenerationConfigJson() {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os, /*IndentSize=*/2);
  j.object([&] {
    j.attribute("bos_token_id", 2);
    j.attribute("do_sample", true);
    j.attributeArray("eos_token_id", [&] {
      j.value(1);
      j.value(106);
    });
    j.attribute("pad_token_id", 0);
    j.attribute("temperature", 1.0);
    j.attribute("top_k", 64);
    j.attribute("top_p", 0.95);
  });
  os.flush();
  return text + "\n";
}

}  // namespace

absl::StatusOr<SynthTokenizerFiles> MakeSynthTokenizer(int64_t vocab_size) {
  if (vocab_size < kMinSynthVocabSize || vocab_size > kMaxSynthVocabSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("tokenizer: vocab_size ", vocab_size, " must be between ", kMinSynthVocabSize,
                     " (the reserved, byte and character tokens) and ", kMaxSynthVocabSize));
  }
  const Vocabulary vocabulary = BuildVocabulary(vocab_size);
  return SynthTokenizerFiles{TokenizerJson(vocabulary), TokenizerConfigJson(vocabulary),
                             GenerationConfigJson()};
}

}  // namespace cortiq
