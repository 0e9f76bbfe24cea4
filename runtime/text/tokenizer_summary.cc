// Tokenizer summary lines (see tokenizer_summary.h).
#include "runtime/text/tokenizer_summary.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/text/gemma4_chat.h"
#include "runtime/text/string_view_compat.h"

namespace cortiq::text {
namespace {

std::string NormalizerName(const NormalizerSpec& n) {
  static const char* const kNames[] = {"Sequence", "Replace", "Prepend", "NFC", "NFKC", "NFD", "NFKD"};
  std::string out = kNames[static_cast<int>(n.type)];
  if (n.type == NormalizerType::kSequence) {
    std::vector<std::string> children;
    for (const NormalizerSpec& c : n.children) children.push_back(NormalizerName(c));
    absl::StrAppend(&out, "(", absl::StrJoin(children, ", "), ")");
  }
  return out;
}

std::string PreTokenizerName(const PreTokenizerSpec& p) {
  static const char* const kNames[] = {"Sequence", "Split", "Metaspace"};
  std::string out = kNames[static_cast<int>(p.type)];
  if (p.type == PreTokenizerType::kSequence) {
    std::vector<std::string> children;
    for (const PreTokenizerSpec& c : p.children) children.push_back(PreTokenizerName(c));
    absl::StrAppend(&out, "(", absl::StrJoin(children, ", "), ")");
  }
  return out;
}

std::string DecoderName(const DecoderSpec& d) {
  static const char* const kNames[] = {"Sequence", "Replace", "ByteFallback", "Fuse", "Strip"};
  std::string out = kNames[static_cast<int>(d.type)];
  if (d.type == DecoderType::kSequence) {
    std::vector<std::string> children;
    for (const DecoderSpec& c : d.children) children.push_back(DecoderName(c));
    absl::StrAppend(&out, "(", absl::StrJoin(children, ", "), ")");
  }
  return out;
}

}  // namespace

std::string SummarizeTokenizer(const Tokenizer& t) {
  const TokenizerConfig& c = t.config();
  size_t special = 0;
  for (const AddedTokenEntry& e : t.section().added_tokens()) special += (e.flags & kAddedSpecial) != 0;
  const bool spm = c.model_type == ModelType::kSpm;
  std::vector<std::string> model_flags = {spm ? "SPM: merges by piece score" : "BPE"};
  if (c.byte_fallback) model_flags.push_back("byte_fallback");
  if (c.fuse_unk) model_flags.push_back("fuse_unk");
  if (c.ignore_merges) model_flags.push_back("ignore_merges");
  std::string out = absl::StrCat("tokenizer: ", t.vocab_size(), " tokens, ",
                                 spm ? "" : absl::StrCat(t.section().num_merges(), " merges "), "(",
                                 absl::StrJoin(model_flags, ", "), "), ",
                                 t.section().added_tokens().size(), " added tokens (", special,
                                 " special), from ", c.source, "\n");
  absl::StrAppend(&out, "normalizer: ", c.normalizer ? NormalizerName(*c.normalizer) : "none",
                  "; pre_tokenizer: ", c.pre_tokenizer ? PreTokenizerName(*c.pre_tokenizer) : "none",
                  "; decoder: ", c.decoder ? DecoderName(*c.decoder) : "none", "\n");
  std::vector<std::string> specials;
  const auto add = [&](const char* name, const std::optional<TokenId>& id) {
    if (!id) return;
    const absl::StatusOr<std::string_view> s = t.TokenString(*id);
    specials.push_back(absl::StrCat(name, " ", *id, " \"", s.ok() ? Av(*s) : "?", "\""));
  };
  add("bos", c.bos_id);
  add("eos", c.eos_id);
  add("pad", c.pad_id);
  add("unk", c.unk_id);
  absl::StrAppend(&out, "special: ", specials.empty() ? "none" : absl::StrJoin(specials, ", "),
                  c.post_processor.single.empty() ? "; no post-processor"
                                                  : "; post-processor adds special tokens",
                  "\n");
  const GenerationDefaults& g = c.generation;
  absl::StrAppend(&out, "generation: stop on ",
                  g.eos_token_ids.empty() ? "(none)" : absl::StrJoin(g.eos_token_ids, ", "));
  if (g.temperature) absl::StrAppend(&out, "; temperature ", *g.temperature);
  if (g.top_p) absl::StrAppend(&out, "; top_p ", *g.top_p);
  if (g.top_k) absl::StrAppend(&out, "; top_k ", *g.top_k);
  if (g.do_sample) absl::StrAppend(&out, "; do_sample ", *g.do_sample ? "true" : "false");
  if (g.min_p) absl::StrAppend(&out, "; min_p ", *g.min_p);
  if (g.typical_p) absl::StrAppend(&out, "; typical_p ", *g.typical_p);
  if (g.repetition_penalty) absl::StrAppend(&out, "; repetition_penalty ", *g.repetition_penalty);
  if (g.repeat_last_n) absl::StrAppend(&out, "; repeat_last_n ", *g.repeat_last_n);
  absl::StrAppend(&out, "\n");
  if (c.chat_template.text.empty()) {
    absl::StrAppend(&out, "chat template: none shipped (the built-in Gemma 4 format is used)\n");
  } else {
    absl::StrAppend(&out, "chat template: ", c.chat_template.source, ", ",
                    c.chat_template.text.size(), " bytes, ",
                    IsGemma4ChatTemplate(c.chat_template.text)
                        ? "Gemma 4 format (the built-in renderer applies)"
                        : "not the Gemma 4 format",
                    "\n");
  }
  return out;
}

}  // namespace cortiq::text
