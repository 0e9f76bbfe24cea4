// The tokenizer of an artifact and the generation settings it carries (see model_text.h).
#include "runtime/generation/model_text.h"

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cortiq {

absl::StatusOr<text::Tokenizer> LoadArtifactTokenizer(const Artifact& artifact) {
  const absl::Span<const uint8_t> bytes = artifact.tokenizer_section();
  if (bytes.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        artifact.path(),
        ": the model has no tokenizer, so it takes token ids only (it was compiled with "
        "--no-tokenizer, from a checkpoint without tokenizer files, or by a cortiq older than "
        "artifact format 3.1): recompile it without --no-tokenizer from a checkpoint with "
        "tokenizer.json or a GGUF with tokenizer.ggml.*"));
  }
  absl::StatusOr<text::Tokenizer> tokenizer = text::Tokenizer::FromSection(bytes);
  if (!tokenizer.ok()) {
    return absl::Status(tokenizer.status().code(),
                        absl::StrCat(artifact.path(), ": ", tokenizer.status().message()));
  }
  return tokenizer;
}

sampling::GenerationConfigSampling SamplingDefaults(const text::GenerationDefaults& g) {
  sampling::GenerationConfigSampling s;
  s.do_sample = g.do_sample;
  s.temperature = g.temperature;
  s.top_k = g.top_k;
  s.top_p = g.top_p;
  s.min_p = g.min_p;
  s.typical_p = g.typical_p;
  s.repetition_penalty = g.repetition_penalty;
  s.repeat_last_n = g.repeat_last_n;
  return s;
}

sampling::SamplingOptions ModelSamplingOptions(const text::Tokenizer& tokenizer) {
  return sampling::DefaultSamplingOptions(SamplingDefaults(tokenizer.config().generation));
}

std::vector<int32_t> EndOfGenerationIds(const text::Tokenizer& tokenizer) {
  const text::TokenizerConfig& c = tokenizer.config();
  if (!c.generation.eos_token_ids.empty()) return c.generation.eos_token_ids;
  if (c.eos_id) return {*c.eos_id};
  return {};
}

std::vector<int32_t> ChatEndOfTurnIds(const text::Tokenizer& tokenizer) {
  std::vector<int32_t> ids = EndOfGenerationIds(tokenizer);
  if (const std::optional<text::TokenId> turn_end = tokenizer.TokenToId("<turn|>")) {
    bool present = false;
    for (int32_t id : ids) present |= id == *turn_end;
    if (!present) ids.push_back(*turn_end);
  }
  return ids;
}

absl::StatusOr<std::string> RenderChatPrompt(const text::Tokenizer& tokenizer,
                                             absl::Span<const text::ChatMessage> messages,
                                             const text::ChatOptions& options) {
  text::ChatOptions o = options;
  if (const std::optional<text::TokenId> bos = tokenizer.config().bos_id) {
    absl::StatusOr<std::string_view> piece = tokenizer.TokenString(*bos);
    if (piece.ok()) o.bos_token = std::string(*piece);
  }
  return text::RenderGemma4Chat(messages, o);
}

absl::StatusOr<std::vector<int32_t>> EncodePrompt(const text::Tokenizer& tokenizer,
                                                  absl::string_view text) {
  text::EncodeOptions options;
  options.add_special_tokens = true;
  if (const std::optional<text::TokenId> bos = tokenizer.config().bos_id) {
    absl::StatusOr<std::string_view> piece = tokenizer.TokenString(*bos);
    if (piece.ok() && !piece->empty() &&
        absl::string_view(text).substr(0, piece->size()) ==
            absl::string_view(piece->data(), piece->size())) {
      options.add_special_tokens = false;
    }
  }
  return tokenizer.Encode(std::string_view(text.data(), text.size()), options);
}

std::vector<sampling::LogitBias> UntokenizableIdBans(int64_t model_vocab_size,
                                                     const text::Tokenizer& tokenizer) {
  std::vector<sampling::LogitBias> bans;
  for (int64_t id = tokenizer.vocab_size(); id < model_vocab_size; ++id) {
    bans.push_back({static_cast<int32_t>(id), -std::numeric_limits<float>::infinity()});
  }
  return bans;
}

}  // namespace cortiq
