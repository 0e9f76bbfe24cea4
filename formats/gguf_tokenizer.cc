// GGUF tokenizer.ggml.* → TokenizerSpec (see gguf_tokenizer.h).
#include "formats/gguf_tokenizer.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "formats/absl_compat.h"
#include "runtime/text/tokenizer_section.h"

namespace cortiq {
namespace {

using text::TokenId;

// llama.cpp's llama_token_type (llama.h).
constexpr int64_t kTokenTypeUnknown = 2;
constexpr int64_t kTokenTypeControl = 3;
constexpr int64_t kTokenTypeUserDefined = 4;

}  // namespace

absl::StatusOr<text::TokenizerSpec> ReadGgufTokenizer(const GgufFile& file) {
  const auto error = [&](std::string_view key, auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(file.path(), ": ", ToAbsl(key), ": ", parts...));
  };
  const GgufValue* model = file.FindValue("tokenizer.ggml.model");
  if (model == nullptr) return error("tokenizer.ggml.model", "missing (the file has no tokenizer)");
  const std::optional<std::string_view> model_name = model->String();
  if (model->is_array() || !model_name) {
    return error("tokenizer.ggml.model", "must be a string, got ", model->TypeString());
  }
  if (*model_name != "gemma4" && *model_name != "llama") {
    return absl::UnimplementedError(absl::StrCat(
        file.path(), ": tokenizer.ggml.model \"", ToAbsl(*model_name),
        "\" is not supported (supported: gemma4, llama)"));
  }
  // "llama": SentencePiece by scores (llama.cpp LLAMA_VOCAB_TYPE_SPM).
  const bool spm = *model_name == "llama";
  const GgufValue* tokens = file.FindValue("tokenizer.ggml.tokens");
  if (tokens == nullptr) return error("tokenizer.ggml.tokens", "missing");
  if (!tokens->is_array() || tokens->type() != GgufValueType::kString) {
    return error("tokenizer.ggml.tokens", "must be an array of strings, got ", tokens->TypeString());
  }
  const uint64_t vocab = tokens->size();
  if (vocab == 0 || vocab > text::kMaxTokenizerVocab) {
    return error("tokenizer.ggml.tokens", vocab, " tokens (must be 1 to ", text::kMaxTokenizerVocab,
                 ")");
  }
  const auto check_parallel = [&](const char* key, bool numeric) -> absl::StatusOr<const GgufValue*> {
    const GgufValue* v = file.FindValue(key);
    if (v == nullptr) return nullptr;
    if (!v->is_array() || (numeric && v->type() == GgufValueType::kString)) {
      return error(key, "must be a numeric array, got ", v->TypeString());
    }
    if (v->size() != vocab) {
      return error(key, "has ", v->size(), " entries but tokenizer.ggml.tokens has ", vocab);
    }
    return v;
  };
  // gemma4: BPE ranks come from the merges, the scores only have to be consistent. llama: the
  // scores drive the merges (0 for every piece without them, as llama.cpp).
  CORTIQ_ASSIGN_OR_RETURN(const GgufValue* scores, check_parallel("tokenizer.ggml.scores", true));
  CORTIQ_ASSIGN_OR_RETURN(const GgufValue* types, check_parallel("tokenizer.ggml.token_type", true));

  text::TokenizerSpec spec;
  spec.source = file.path();
  spec.tokens.resize(vocab);
  absl::flat_hash_map<std::string, TokenId> ids;
  ids.reserve(vocab);
  for (uint64_t i = 0; i < vocab; ++i) {
    text::TokenEntry& e = spec.tokens[i];
    e.piece = std::string(*tokens->String(i));
    if (spm) {
      // llama.cpp's vocabulary load: an empty piece is named "[EMPTY_i]"; a repeated piece
      // maps to its last id (token_to_id[word] = i), set once every piece is read.
      if (e.piece.empty()) e.piece = absl::StrCat("[EMPTY_", i, "]");
      ids[e.piece] = static_cast<TokenId>(i);
      if (scores != nullptr) {
        const std::optional<double> score = scores->Float(i);
        const std::optional<int64_t> integer = score ? std::nullopt : scores->Int(i);
        const double value = score ? *score : static_cast<double>(integer.value_or(0));
        if (!std::isfinite(value)) {
          return error(absl::StrCat("tokenizer.ggml.scores[", i, "]"), "is not finite");
        }
        e.score = static_cast<float>(value);
      }
    } else {
      // A repeated string stays decodable but only its first id is in the BPE vocabulary.
      e.in_model = ids.emplace(e.piece, static_cast<TokenId>(i)).second;
    }
    const int64_t type = types ? types->Int(i).value_or(1) : 1;
    if (type == kTokenTypeUnknown || type == kTokenTypeControl || type == kTokenTypeUserDefined) {
      if (e.piece.empty()) continue;
      text::AddedTokenSpec t;
      t.id = static_cast<TokenId>(i);
      t.content = e.piece;
      t.special = type != kTokenTypeUserDefined;
      spec.added_tokens.push_back(std::move(t));
    }
  }

  if (spm) {
    spec.model.type = text::ModelType::kSpm;
    for (const auto& [piece, id] : ids) spec.tokens[id].in_model = true;
  }
  // An SPM vocabulary merges by scores: merges, if a file has them, are not its model's.
  const GgufValue* merges = spm ? nullptr : file.FindValue("tokenizer.ggml.merges");
  if (merges != nullptr) {
    if (!merges->is_array() || merges->type() != GgufValueType::kString) {
      return error("tokenizer.ggml.merges", "must be an array of strings, got ",
                   merges->TypeString());
    }
    if (merges->size() > text::kMaxTokenizerMerges) {
      return error("tokenizer.ggml.merges", merges->size(), " merges exceed the limit");
    }
    // llama.cpp keeps the first rank of a repeated pair (bpe_ranks.emplace).
    absl::flat_hash_map<std::pair<TokenId, TokenId>, bool> seen;
    for (uint64_t i = 0; i < merges->size(); ++i) {
      const std::string_view m = *merges->String(i);
      // Split at the first space after the first byte, as llama.cpp does (a piece never holds
      // a raw space: spaces are "▁").
      const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
      const std::string field = absl::StrCat("tokenizer.ggml.merges[", i, "]");
      if (space == std::string_view::npos) return error(field, "\"", ToAbsl(m), "\" is not \"a b\"");
      const std::string a(m.substr(0, space));
      const std::string b(m.substr(space + 1));
      const auto ia = ids.find(a);
      const auto ib = ids.find(b);
      if (ia == ids.end()) return error(field, "unknown piece \"", a, "\"");
      if (ib == ids.end()) return error(field, "unknown piece \"", b, "\"");
      const auto im = ids.find(a + b);
      if (im == ids.end()) return error(field, "the merged piece \"", a + b, "\" is not a token");
      if (!seen.emplace(std::make_pair(ia->second, ib->second), true).second) continue;
      spec.model.merges.push_back(
          text::BpeMerge{ia->second, ib->second, im->second, static_cast<uint32_t>(i)});
    }
  }

  const auto optional_id = [&](const char* key) -> absl::StatusOr<std::optional<TokenId>> {
    const GgufValue* v = file.FindValue(key);
    if (v == nullptr) return std::optional<TokenId>();
    const std::optional<int64_t> id = v->is_array() ? std::nullopt : v->Int();
    if (!id) return error(key, "must be an integer, got ", v->TypeString());
    if (*id < 0 || static_cast<uint64_t>(*id) >= vocab) {
      return error(key, *id, " is out of range [0, ", vocab, ")");
    }
    return std::optional<TokenId>(static_cast<TokenId>(*id));
  };
  const auto optional_bool = [&](const char* key, bool fallback) -> absl::StatusOr<bool> {
    const GgufValue* v = file.FindValue(key);
    if (v == nullptr) return fallback;
    const std::optional<bool> b = v->is_array() ? std::nullopt : v->Bool();
    if (!b) return error(key, "must be a bool, got ", v->TypeString());
    return *b;
  };
  CORTIQ_ASSIGN_OR_RETURN(spec.bos_id, optional_id("tokenizer.ggml.bos_token_id"));
  CORTIQ_ASSIGN_OR_RETURN(spec.eos_id, optional_id("tokenizer.ggml.eos_token_id"));
  CORTIQ_ASSIGN_OR_RETURN(spec.pad_id, optional_id("tokenizer.ggml.padding_token_id"));
  CORTIQ_ASSIGN_OR_RETURN(spec.model.unk_id, optional_id("tokenizer.ggml.unknown_token_id"));
  if (spm) {
    // llama.cpp's defaults for an SPM vocabulary without the keys: <unk> 0, <s> 1, </s> 2.
    const auto fallback = [&](std::optional<TokenId>* id, const char* key, TokenId value) {
      if (!*id && file.FindValue(key) == nullptr && static_cast<uint64_t>(value) < vocab) {
        *id = value;
      }
    };
    fallback(&spec.model.unk_id, "tokenizer.ggml.unknown_token_id", 0);
    fallback(&spec.bos_id, "tokenizer.ggml.bos_token_id", 1);
    fallback(&spec.eos_id, "tokenizer.ggml.eos_token_id", 2);
  }
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<TokenId> eot,
                          optional_id("tokenizer.ggml.eot_token_id"));
  CORTIQ_ASSIGN_OR_RETURN(const bool add_bos, optional_bool("tokenizer.ggml.add_bos_token", true));
  CORTIQ_ASSIGN_OR_RETURN(const bool add_eos, optional_bool("tokenizer.ggml.add_eos_token", false));
  // llama.cpp: SPM vocabularies prefix a space unless the file says otherwise.
  CORTIQ_ASSIGN_OR_RETURN(const bool add_space_prefix,
                          optional_bool("tokenizer.ggml.add_space_prefix", spm));
  if (add_space_prefix && !spm) {
    return absl::UnimplementedError(absl::StrCat(
        file.path(), ": tokenizer.ggml.add_space_prefix = true is not supported for gemma4"));
  }

  spec.model.byte_fallback = true;
  spec.model.fuse_unk = !spm;
  text::NormalizerSpec replace_spaces;
  replace_spaces.type = text::NormalizerType::kReplace;
  replace_spaces.pattern = {text::TextPattern::Kind::kString, " "};
  replace_spaces.content = "\xE2\x96\x81";  // ▁
  if (add_space_prefix) {
    // llama.cpp adds " " before each raw-text fragment that starts the text or follows a
    // token (is_prev_special), then escapes spaces: HF's Prepend("▁") normalizer, which runs
    // on each piece between added tokens, does the same.
    text::NormalizerSpec prepend;
    prepend.type = text::NormalizerType::kPrepend;
    prepend.content = "\xE2\x96\x81";
    text::NormalizerSpec sequence;
    sequence.type = text::NormalizerType::kSequence;
    sequence.children = {prepend, replace_spaces};
    spec.normalizer = sequence;
  } else {
    spec.normalizer = replace_spaces;
  }
  text::DecoderSpec decoder;
  decoder.type = text::DecoderType::kSequence;
  text::DecoderSpec replace;
  replace.type = text::DecoderType::kReplace;
  replace.pattern = {text::TextPattern::Kind::kString, "\xE2\x96\x81"};
  replace.content = " ";
  decoder.children.push_back(replace);
  decoder.children.push_back(text::DecoderSpec{text::DecoderType::kByteFallback});
  decoder.children.push_back(text::DecoderSpec{text::DecoderType::kFuse});
  if (add_space_prefix) {
    // The prefixed space leaves the decoded text again (HF's Llama decoder: Strip(" ", 1, 0)).
    text::DecoderSpec strip;
    strip.type = text::DecoderType::kStrip;
    strip.content = " ";
    strip.start = 1;
    decoder.children.push_back(strip);
  }
  spec.decoder = decoder;
  if (add_bos && spec.bos_id) spec.post_processor.single.push_back({false, {*spec.bos_id}});
  spec.post_processor.single.push_back({true, {}});
  if (add_eos && spec.eos_id) spec.post_processor.single.push_back({false, {*spec.eos_id}});
  if (!add_bos && !add_eos) spec.post_processor.single.clear();

  // Generation stops on eos, eot and, for Gemma 4, the end of a turn.
  if (spec.eos_id) spec.generation.eos_token_ids.push_back(*spec.eos_id);
  if (eot && *eot != spec.eos_id) spec.generation.eos_token_ids.push_back(*eot);
  const auto turn_end = ids.find("<turn|>");
  if (turn_end != ids.end()) {
    bool present = false;
    for (TokenId id : spec.generation.eos_token_ids) present |= id == turn_end->second;
    if (!present) spec.generation.eos_token_ids.push_back(turn_end->second);
  }
  // llama.cpp's recommended sampling (its converter copies them from generation_config.json;
  // llama-arch.cpp LLM_KV_GENERAL_SAMPLING_*). Other general.sampling.* keys (sequence, xtc,
  // mirostat) have no counterpart in the sampler chain and are not read.
  const auto sampling_float = [&](const char* key, std::optional<float>* out) -> absl::Status {
    const GgufValue* v = file.FindValue(key);
    if (v == nullptr) return absl::OkStatus();
    std::optional<double> value = v->is_array() ? std::nullopt : v->Float();
    if (!value && !v->is_array() && v->Int()) value = static_cast<double>(*v->Int());
    if (!value) return error(key, "must be a number, got ", v->TypeString());
    if (!std::isfinite(*value)) return error(key, "must be finite, got ", *value);
    *out = static_cast<float>(*value);
    return absl::OkStatus();
  };
  const auto sampling_int = [&](const char* key, std::optional<int32_t>* out) -> absl::Status {
    const GgufValue* v = file.FindValue(key);
    if (v == nullptr) return absl::OkStatus();
    const std::optional<int64_t> value = v->is_array() ? std::nullopt : v->Int();
    if (!value) return error(key, "must be an integer, got ", v->TypeString());
    if (*value < INT32_MIN || *value > INT32_MAX) return error(key, *value, " is out of range");
    *out = static_cast<int32_t>(*value);
    return absl::OkStatus();
  };
  CORTIQ_RETURN_IF_ERROR(sampling_float("general.sampling.temp", &spec.generation.temperature));
  CORTIQ_RETURN_IF_ERROR(sampling_float("general.sampling.top_p", &spec.generation.top_p));
  CORTIQ_RETURN_IF_ERROR(sampling_int("general.sampling.top_k", &spec.generation.top_k));
  CORTIQ_RETURN_IF_ERROR(sampling_float("general.sampling.min_p", &spec.generation.min_p));
  CORTIQ_RETURN_IF_ERROR(
      sampling_float("general.sampling.penalty_repeat", &spec.generation.repetition_penalty));
  CORTIQ_RETURN_IF_ERROR(
      sampling_int("general.sampling.penalty_last_n", &spec.generation.repeat_last_n));
  if (const GgufValue* t = file.FindValue("tokenizer.chat_template")) {
    const std::optional<std::string_view> s = t->is_array() ? std::nullopt : t->String();
    if (!s) return error("tokenizer.chat_template", "must be a string, got ", t->TypeString());
    spec.chat_template = {std::string(*s), "tokenizer.chat_template"};
  }
  return spec;
}

}  // namespace cortiq
