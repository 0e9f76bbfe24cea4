// Generate: the loop that turns a sequence's logits into streamed text — sample (the sampler
// chain, runtime/sampling/sampler.h), stop (end-of-generation ids, stop strings held back across
// tokens: stop_condition.h), decode (text::StreamDecoder: never half a UTF-8 character), feed the
// token back (Sequence::Eval) — until the model ends, a stop string, the token limit, a full
// context or an interrupt. cortiq-run and cortiq-chat run it; hosts of the C API write the same
// loop over the sampler and stop calls of runtime/cortiq.h.
#ifndef CORTIQ_RUNTIME_GENERATION_GENERATOR_H_
#define CORTIQ_RUNTIME_GENERATION_GENERATOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/sampling/sampler.h"
#include "runtime/sampling/stop_condition.h"
#include "runtime/sequence.h"
#include "runtime/text/tokenizer.h"

namespace cortiq {

// Why a generation ended.
enum class FinishReason {
  kEndOfGeneration,  // an end-of-generation token was sampled (not printed, not evaluated)
  kStopString,       // the text reached a stop string (it and anything after it not printed)
  kMaxTokens,        // max_tokens were sampled
  kContextFull,      // the sampled token fills the context: nothing more can be evaluated
  kInterrupted,      // the interrupt flag was set (e.g. Ctrl-C)
};

// "end of generation", "stop string", "token limit", "context full", "interrupted".
const char* FinishReasonName(FinishReason reason);

struct GenerateOptions {
  // Tokens to sample at most; -1: until end of generation or a full context (llama.cpp -n -1).
  int64_t max_tokens = -1;
  // Print special tokens' text (<|turn>, ...); else they are left out of the text
  // (DecodeOptions::skip_special_tokens). End-of-generation tokens are never printed.
  bool special = false;
  // Keep going past end-of-generation tokens (llama.cpp --ignore-eos): they are then decoded,
  // printed (with `special`) and evaluated like any token.
  bool ignore_eos = false;
  // If set, and `special` is off and the tokenizer has Gemma 4's thought-channel markers
  // (thought_channel.h), the text of the reply's thought channel (<|channel>thought\n ...
  // <channel|>, without the name line) goes here instead of the sink, as it becomes final; stop
  // strings apply to the answer only. An error stops the generation, as the sink's does.
  std::function<absl::Status(absl::string_view text)> reasoning;
};

struct GenerationResult {
  // Every sampled token in order, the final end-of-generation token included. All but the last
  // were evaluated (Sequence::length() grew by tokens.size() - 1): the last one is never fed
  // back, whatever the reason, so that a host can append its own continuation (a chat turn's end).
  std::vector<int32_t> tokens;
  std::string text;       // everything the sink received, concatenated
  std::string reasoning;  // everything GenerateOptions::reasoning received, concatenated
  FinishReason reason = FinishReason::kMaxTokens;
  int stop_string = -1;  // kStopString: index into the StopCondition's strings
  // Seconds from the call to the first sampled token (its sampling included) and in all; the
  // evaluations' share of the total (decode speed = evaluated / eval_seconds).
  double first_token_seconds = 0;
  double total_seconds = 0;
  double eval_seconds = 0;
  int64_t evaluated = 0;  // tokens fed back (tokens.size() - 1, or 0)
};

// Pushes a sampled token's decoded `piece` through `stop` (StopCondition::Push; -1: no
// end-of-generation check, the caller did it) and, if that does not stop, the text `decoder`
// (may be null) still holds back when it completes a stop string: a run of byte tokens (a
// newline spelled <0x0A>) then stops at its token, not when the run ends, with the text that
// ending there prints (StreamDecoder::HeldText). Generate and cortiq-server's scheduler use it.
// Errors: the decoder's.
absl::StatusOr<sampling::StopUpdate> PushDecodedPiece(sampling::StopCondition& stop,
                                                      const text::StreamDecoder* decoder,
                                                      std::string_view piece);

// Receives each piece of text as soon as it is final: whole UTF-8 characters only, never a byte
// of a stop string. An error stops the generation and is returned by Generate.
using TextSink = absl::FunctionRef<absl::Status(absl::string_view text)>;

// Samples from `sequence`'s last logits (an evaluated prompt, Sequence::logits()), then evaluates
// each sampled token but the last, as above. Every sampled token is Accepted by `sampler` (its
// penalty history). `stop` decides the end-of-generation ids and stop strings; it is Reset first.
// `interrupt` (may be null) is checked before each token. Errors: those of Sequence::logits()
// (FailedPrecondition: no logits), the sampler (InvalidArgument: non-finite logits), the
// tokenizer (a sampled id beyond its vocabulary: ban those ids, model_text.h
// UntokenizableIdBans), Sequence::Eval, or the sink; the tokens evaluated before an error stay
// evaluated.
//
// `tokenizer` may be null (a model without one, cortiq-run --tokens): then no text is produced
// and stop strings never match. `observer`, if given, is called for each evaluated token as
// Sequence::Eval calls it (cortiq-run's --dump-layers).
absl::StatusOr<GenerationResult> Generate(Sequence& sequence, const text::Tokenizer* tokenizer,
                                          sampling::Sampler& sampler,
                                          sampling::StopCondition& stop,
                                          const GenerateOptions& options, TextSink sink,
                                          const std::atomic<bool>* interrupt = nullptr,
                                          const TokenObserver* observer = nullptr);

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_GENERATION_GENERATOR_H_
