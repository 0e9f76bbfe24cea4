// StopCondition: when generation ends and which text may be shown meanwhile — end-of-generation
// token ids (Gemma 4: <eos> 1 and <turn|> 106, from generation_config / GGUF) and stop strings
// matched over the emitted text across token boundaries (OpenAI `stop`, llama.cpp server
// `stop`), with the text that could still turn out to be the start of a stop string held back
// so that no part of a stop string is ever printed.
#ifndef CORTIQ_RUNTIME_SAMPLING_STOP_CONDITION_H_
#define CORTIQ_RUNTIME_SAMPLING_STOP_CONDITION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace cortiq {
namespace sampling {

// Why generation stopped (kNone: it goes on).
enum class StopReason {
  kNone,
  kEndOfGeneration,  // an end-of-generation token was sampled
  kStopString,       // the text reached a stop string
};

// What Push returns: the text that is safe to emit now, and whether to stop.
struct StopUpdate {
  // UTF-8, possibly empty: never any byte of a stop string, nor of text after one.
  std::string text;
  StopReason reason = StopReason::kNone;
  // Index in the stop strings of the one matched (kStopString), else -1.
  int stop_string = -1;

  bool stopped() const { return reason != StopReason::kNone; }
};

// The stop test of one generation. Push each sampled token with its decoded text; emit what it
// returns. The text is the concatenation of the pieces; a stop string matches wherever it
// occurs in it, also across pieces. When several stop strings complete in the same piece the
// one that starts first wins (then the first listed); the text before it is emitted and the
// rest is dropped. While the end of the text is a proper prefix of some stop string, that
// suffix (the longest such) is held back; it is released as soon as it can no longer be the
// start of a match, or by Flush. Holding back only ever starts where a stop string starts, so
// UTF-8 text is never cut inside a character (stop strings are checked to be valid UTF-8).
class StopCondition {
 public:
  // Errors: InvalidArgument if an end-of-generation id is negative
  // ("end_of_generation_ids[1] is -3") or a stop string is empty or not valid UTF-8
  // ("stop[0] is empty").
  static absl::StatusOr<StopCondition> Create(absl::Span<const int32_t> end_of_generation_ids,
                                              std::vector<std::string> stop_strings);

  // Whether `token` ends generation.
  bool IsEndOfGeneration(int32_t token) const { return end_of_generation_.contains(token); }

  // Takes the next sampled `token` and its decoded text `piece` (UTF-8; may be empty, e.g.
  // for a special token the caller does not print). An end-of-generation token stops with
  // reason kEndOfGeneration; its piece is not emitted, the held text is. Otherwise the piece is
  // appended and checked for stop strings. After a stop, returns empty text and the same
  // reason until Reset.
  StopUpdate Push(int32_t token, std::string_view piece);

  // Whether Push(-1, piece) would stop at a stop string (the held text and `piece` contain
  // one); changes nothing. For text that is final only if generation ends now: the bytes a
  // StreamDecoder holds back (text::StreamDecoder::HeldText), which a stop there would release.
  bool WouldStop(std::string_view piece) const;

  // Releases the held text, when generation ends for another reason (the token limit, a full
  // context, an interrupt). Empty after a stop.
  std::string Flush();

  // Starts a new generation (same ids and stop strings).
  void Reset();

  // Bytes currently held back.
  size_t held_bytes() const { return held_.size(); }
  const std::vector<std::string>& stop_strings() const { return stop_strings_; }

 private:
  StopCondition(absl::flat_hash_set<int32_t> end_of_generation,
                std::vector<std::string> stop_strings);

  // Length of the longest suffix of `text` that is a proper prefix of a stop string.
  size_t HeldSuffixLength(std::string_view text) const;

  absl::flat_hash_set<int32_t> end_of_generation_;
  std::vector<std::string> stop_strings_;
  std::string held_;
  StopReason stopped_ = StopReason::kNone;
  int stopped_string_ = -1;
};

}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SAMPLING_STOP_CONDITION_H_
