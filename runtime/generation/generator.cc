// The generation loop (see generator.h).
#include "runtime/generation/generator.h"

#include <chrono>
#include <optional>
#include <utility>

#include "base/status_macros.h"
#include "runtime/generation/thought_channel.h"

namespace cortiq {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kEndOfGeneration: return "end of generation";
    case FinishReason::kStopString: return "stop string";
    case FinishReason::kMaxTokens: return "token limit";
    case FinishReason::kContextFull: return "context full";
    case FinishReason::kInterrupted: return "interrupted";
  }
  return "unknown";
}

absl::StatusOr<sampling::StopUpdate> PushDecodedPiece(sampling::StopCondition& stop,
                                                      const text::StreamDecoder* decoder,
                                                      std::string_view piece) {
  // -1 is never an end-of-generation id (StopCondition::Create refuses negative ones).
  sampling::StopUpdate update = stop.Push(-1, piece);
  if (update.stopped() || decoder == nullptr || stop.stop_strings().empty()) return update;
  CORTIQ_ASSIGN_OR_RETURN(const std::string held, decoder->HeldText());
  if (!stop.WouldStop(held)) return update;
  // Stops for certain (WouldStop said so); the decoder's held text is this text, printed by
  // ending here, so the caller must not Finish the decoder into the output again.
  sampling::StopUpdate at_stop = stop.Push(-1, held);
  at_stop.text.insert(0, update.text);
  return at_stop;
}

absl::StatusOr<GenerationResult> Generate(Sequence& sequence, const text::Tokenizer* tokenizer,
                                          sampling::Sampler& sampler,
                                          sampling::StopCondition& stop,
                                          const GenerateOptions& options, TextSink sink,
                                          const std::atomic<bool>* interrupt,
                                          const TokenObserver* observer) {
  const Clock::time_point start = Clock::now();
  GenerationResult result;
  stop.Reset();
  text::DecodeOptions decode;
  decode.skip_special_tokens = !options.special;
  std::optional<text::StreamDecoder> stream;
  if (tokenizer != nullptr) stream.emplace(tokenizer, decode);
  std::optional<ThoughtChannel> thought;
  if (tokenizer != nullptr && options.reasoning && !options.special) {
    thought = ThoughtChannel::ForTokenizer(*tokenizer);
  }
  text::StreamDecoder* const decoder = stream ? &*stream : nullptr;
  ThoughtChannel* const thought_or_null = thought ? &*thought : nullptr;
  const auto think = [&](const std::string& piece) -> absl::Status {
    if (piece.empty()) return absl::OkStatus();
    result.reasoning += piece;
    return options.reasoning(piece);
  };
  const auto emit = [&](const std::string& piece) -> absl::Status {
    if (piece.empty()) return absl::OkStatus();
    result.text += piece;
    return sink(piece);
  };
  // Emits what a stop update releases; true if it reached a stop string.
  const auto apply = [&](const sampling::StopUpdate& update) -> absl::StatusOr<bool> {
    CORTIQ_RETURN_IF_ERROR(emit(update.text));
    if (update.reason == sampling::StopReason::kStopString) {
      result.reason = FinishReason::kStopString;
      result.stop_string = update.stop_string;
      return true;
    }
    return false;
  };
  // The end for a reason other than a stop string: the decoder's held bytes, then the text held
  // back for the stop strings.
  const auto finish = [&](FinishReason reason) -> absl::Status {
    result.reason = reason;
    // The held bytes go to the side the reply ended on.
    CORTIQ_ASSIGN_OR_RETURN(ThoughtSplit held, FinishReply(decoder, thought_or_null));
    CORTIQ_RETURN_IF_ERROR(think(held.reasoning));
    const std::string rest = std::move(held.content);
    // -1 is never an end-of-generation id (StopCondition::Create refuses negative ones).
    CORTIQ_ASSIGN_OR_RETURN(const bool stopped, apply(stop.Push(-1, rest)));
    if (stopped) return absl::OkStatus();
    return emit(stop.Flush());
  };

  if (options.max_tokens == 0) {
    result.reason = FinishReason::kMaxTokens;
    return result;
  }
  for (;;) {
    if (interrupt != nullptr && interrupt->load(std::memory_order_relaxed)) {
      CORTIQ_RETURN_IF_ERROR(finish(FinishReason::kInterrupted));
      break;
    }
    CORTIQ_ASSIGN_OR_RETURN(const absl::Span<const float> logits, sequence.logits());
    CORTIQ_ASSIGN_OR_RETURN(const int32_t token, sampler.Sample(logits));
    CORTIQ_RETURN_IF_ERROR(sampler.Accept(token));
    result.tokens.push_back(token);
    if (result.tokens.size() == 1) result.first_token_seconds = Since(start);
    if (!options.ignore_eos && stop.IsEndOfGeneration(token)) {
      CORTIQ_RETURN_IF_ERROR(finish(FinishReason::kEndOfGeneration));
      break;
    }
    CORTIQ_ASSIGN_OR_RETURN(ThoughtSplit split, DecodeReplyToken(decoder, thought_or_null, token));
    CORTIQ_RETURN_IF_ERROR(think(split.reasoning));
    CORTIQ_ASSIGN_OR_RETURN(
        const sampling::StopUpdate update,
        PushDecodedPiece(stop, AnswerDecoder(decoder, thought_or_null), split.content));
    CORTIQ_ASSIGN_OR_RETURN(const bool stopped, apply(update));
    if (stopped) break;
    if (options.max_tokens >= 0 &&
        static_cast<int64_t>(result.tokens.size()) >= options.max_tokens) {
      CORTIQ_RETURN_IF_ERROR(finish(FinishReason::kMaxTokens));
      break;
    }
    if (sequence.length() >= sequence.ctx_size()) {
      CORTIQ_RETURN_IF_ERROR(finish(FinishReason::kContextFull));
      break;
    }
    const Clock::time_point eval_start = Clock::now();
    const absl::Span<const int32_t> one = absl::MakeConstSpan(&token, 1);
    if (observer != nullptr) {
      CORTIQ_RETURN_IF_ERROR(sequence.Eval(one, BatchLogits::kLast, *observer));
    } else {
      CORTIQ_RETURN_IF_ERROR(sequence.Eval(one, BatchLogits::kLast));
    }
    result.eval_seconds += Since(eval_start);
    ++result.evaluated;
  }
  result.total_seconds = Since(start);
  return result;
}

}  // namespace cortiq
