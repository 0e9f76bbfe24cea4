// ChatSession: a multi-turn conversation with a compiled model, kept in its KV cache — each turn
// renders the whole conversation in the Gemma 4 chat format (earlier model turns without their
// thought channel, as the official template renders them), encodes it and evaluates only the
// tokens that differ from what the sequence already holds (EvalReusingPrefix: llama.cpp server's
// prompt cache), then generates the model's turn (Generate) and keeps it as the next
// assistant message. An interrupted or cut reply stays in the conversation as far as it got,
// as llama.cpp's llama-cli keeps it.
#ifndef CORTIQ_TOOLS_CORTIQ_CHAT_CHAT_SESSION_H_
#define CORTIQ_TOOLS_CORTIQ_CHAT_CHAT_SESSION_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "runtime/generation/generator.h"
#include "runtime/generation/prefix_reuse.h"
#include "runtime/sampling/sampler.h"
#include "runtime/sampling/stop_condition.h"
#include "runtime/sequence.h"
#include "runtime/text/gemma4_chat.h"
#include "runtime/text/tokenizer.h"
#include "tools/cortiq-chat/chat_file.h"

namespace cortiq {

// What one turn did.
struct ChatTurn {
  int64_t prompt_tokens = 0;  // tokens of the rendered conversation (with the generation prompt)
  PrefixReuse reuse;          // of them, taken from the cache / evaluated
  double prompt_seconds = 0;  // the evaluation of reuse.evaluated tokens
  GenerationResult generation;
};

// Called after each evaluated prompt token: the token and the number of tokens being evaluated.
using PromptObserver = absl::FunctionRef<absl::Status(const EvaluatedToken& token, int64_t total)>;

class ChatSession {
 public:
  // Everything given must outlive the session. `end_of_turn` decides the end of the model's
  // turn (ChatEndOfTurnIds) and the stop strings; `generate` the token limit per turn and
  // whether special tokens are printed; `enable_thinking` renders <|think|> in the system turn.
  ChatSession(Sequence* sequence, const text::Tokenizer* tokenizer, sampling::Sampler* sampler,
              sampling::StopCondition* stop, GenerateOptions generate, bool enable_thinking);

  // The system message ("" = none). Takes effect at the next turn (the whole conversation is
  // then re-evaluated, since it comes first).
  void set_system(std::string system) { system_ = std::move(system); }
  const std::string& system() const { return system_; }

  // One turn: the user's `message`, then the model's reply streamed to `sink`. The reply (the
  // text of its tokens with special tokens, without the final end-of-turn token; for a stop
  // string the text before it) joins the conversation whatever ended it. `interrupt` (may be
  // null) stops the reply; `progress` is called after each evaluated prompt token with the
  // number of tokens this turn evaluates (an error, e.g. Cancelled, stops the evaluation).
  //
  // Errors, after which the conversation is as before the call (the user message dropped):
  // ResourceExhausted "context full: ..." when the rendered conversation does not fit the
  // context (nothing evaluated; the caller may Clear or DropOldestExchange); Cancelled when
  // interrupted during the prompt; those of the renderer (Unimplemented, InvalidArgument), the
  // tokenizer, Sequence::Eval, the sampler and the sink.
  absl::StatusOr<ChatTurn> Turn(absl::string_view message, TextSink sink,
                                const std::atomic<bool>* interrupt,
                                PromptObserver progress);

  // Forgets the conversation (the system message stays) and starts the sequence anew.
  void Clear();

  // Drops the oldest user message and the replies to it (the system message stays); the next
  // turn re-evaluates what remains. False if there is none.
  bool DropOldestExchange();

  // Whether `status` is Turn's refusal for the context (ResourceExhausted "context full: ..."),
  // after which nothing was evaluated and MakeRoom may help.
  static bool IsContextFull(const absl::Status& status);

  // Context shift (llama-cli's, Ollama's), for the turn of `message`: when the conversation
  // with it would not fit the context with the reply room (set_reply_room), forgets the oldest
  // exchanges until it fills at most half the context — not just enough to fit, since what
  // remains is evaluated anew (the cache's positions moved) and a conversation kept near full
  // would shift, and be evaluated again, at every turn. Nothing is forgotten when no exchange
  // is left to forget or when the system message and `message` alone would not leave the reply
  // room either: the turn then refuses the message and the conversation stays. Returns how many exchanges were forgotten.
  // Errors: the renderer's and the tokenizer's (as Turn's).
  absl::StatusOr<int> MakeRoom(absl::string_view message);

  // The conversation, the thinking setting, the sampler's generator and the sequence's state
  // (Sequence::Save), for /save. Errors: ResourceExhausted if the state buffer cannot be
  // allocated.
  absl::StatusOr<SavedChat> Save() const;

  // Continues `chat` (one Save returned, perhaps in another process): the sequence takes its
  // state (Sequence::Restore checks it is of this model and fits the context before anything
  // changes), then the conversation, the thinking setting and the generator replace this
  // session's. The next turn then evaluates only its new tokens. On error nothing changed.
  // Errors: Sequence::Restore's — FailedPrecondition (another model), DataLoss (a damaged
  // state), OutOfRange (more positions than the context), Unimplemented, InvalidArgument —
  // and InvalidArgument for a message role other than user / assistant or an all-zero generator.
  absl::Status Load(const SavedChat& chat);

  bool enable_thinking() const { return enable_thinking_; }

  // Positions a turn must leave free for its reply when the conversation has earlier exchanges:
  // a rendered conversation that fits the context but leaves fewer is refused as context full
  // too (Turn's ResourceExhausted), so that a caller dropping the oldest exchanges to make room
  // (cortiq-chat's context shift) does not get a reply cut after a few tokens. A first message
  // is only refused when it does not fit at all. Default 0.
  void set_reply_room(int64_t positions) { reply_room_ = positions; }

  // The conversation so far: the system message (if any) first, then user and assistant
  // messages in turn.
  std::vector<text::ChatMessage> Messages() const;
  // User messages in the conversation.
  int exchanges() const;

  // The prompt of `messages` plus the generation prompt, as this session renders it.
  absl::StatusOr<std::string> Render(absl::Span<const text::ChatMessage> messages) const;

 private:
  // The prompt ids of the conversation without its first `skip` exchanges (as `skip` calls of
  // DropOldestExchange would leave it; the system message
  // kept), then `message` as a user turn and the generation prompt: Turn's (skip 0) and
  // MakeRoom's measure of what is left.
  absl::StatusOr<std::vector<int32_t>> PromptIds(size_t skip, absl::string_view message) const;
  // The index past the exchange starting at turns_[begin]: that message and the replies after it
  // (DropOldestExchange removes [0, ExchangeEnd(0))).
  size_t ExchangeEnd(size_t begin) const;

  Sequence* sequence_;
  const text::Tokenizer* tokenizer_;
  sampling::Sampler* sampler_;
  sampling::StopCondition* stop_;
  GenerateOptions generate_;
  bool enable_thinking_;
  int64_t reply_room_ = 0;
  std::string system_;
  std::vector<text::ChatMessage> turns_;  // user / assistant, without the system message
};

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_CHAT_CHAT_SESSION_H_
