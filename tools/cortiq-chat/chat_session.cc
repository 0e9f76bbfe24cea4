// ChatSession (see chat_session.h).
#include "tools/cortiq-chat/chat_session.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/generation/model_text.h"
#include "runtime/text/unicode.h"

namespace cortiq {
namespace {

text::ChatMessage Message(const char* role, std::string content) {
  text::ChatMessage m;
  m.role = role;
  m.content_kind = text::ChatMessage::ContentKind::kString;
  m.content = std::move(content);
  return m;
}

}  // namespace

ChatSession::ChatSession(Sequence* sequence, const text::Tokenizer* tokenizer,
                         sampling::Sampler* sampler, sampling::StopCondition* stop,
                         GenerateOptions generate, bool enable_thinking)
    : sequence_(sequence),
      tokenizer_(tokenizer),
      sampler_(sampler),
      stop_(stop),
      generate_(generate),
      enable_thinking_(enable_thinking) {}

std::vector<text::ChatMessage> ChatSession::Messages() const {
  std::vector<text::ChatMessage> messages;
  if (!system_.empty()) messages.push_back(Message("system", system_));
  messages.insert(messages.end(), turns_.begin(), turns_.end());
  return messages;
}

int ChatSession::exchanges() const {
  int n = 0;
  for (const text::ChatMessage& m : turns_) n += m.role == "user";
  return n;
}

absl::StatusOr<std::string> ChatSession::Render(
    absl::Span<const text::ChatMessage> messages) const {
  text::ChatOptions options;
  options.add_generation_prompt = true;
  options.enable_thinking = enable_thinking_;
  return RenderChatPrompt(*tokenizer_, messages, options);
}

absl::StatusOr<std::vector<int32_t>> ChatSession::PromptIds(size_t skip,
                                                          absl::string_view message) const {
  std::vector<text::ChatMessage> messages;
  if (!system_.empty()) messages.push_back(Message("system", system_));
  size_t begin = 0;
  for (size_t i = 0; i < skip && begin < turns_.size(); ++i) begin = ExchangeEnd(begin);
  messages.insert(messages.end(), turns_.begin() + static_cast<std::ptrdiff_t>(begin),
                  turns_.end());
  messages.push_back(Message("user", std::string(message)));
  CORTIQ_ASSIGN_OR_RETURN(const std::string text, Render(messages));
  return EncodePrompt(*tokenizer_, text);
}

absl::StatusOr<ChatTurn> ChatSession::Turn(absl::string_view message, TextSink sink,
                                           const std::atomic<bool>* interrupt,
                                           PromptObserver progress) {
  ChatTurn turn;
  // Checked here, so that the offset is the message's (the tokenizer would name one in the
  // rendered conversation).
  if (const size_t bad = text::FindInvalidUtf8(std::string_view(message.data(), message.size()));
      bad != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("the message is not valid UTF-8 at byte ", bad, " of it; not sent"));
  }
  CORTIQ_ASSIGN_OR_RETURN(const std::vector<int32_t> prompt, PromptIds(0, message));
  turn.prompt_tokens = static_cast<int64_t>(prompt.size());
  if (turn.prompt_tokens > sequence_->ctx_size()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "context full: the conversation is ", prompt.size(), " tokens with this message, the "
        "context holds ", sequence_->ctx_size()));
  }
  if (exchanges() > 0 && turn.prompt_tokens + reply_room_ > sequence_->ctx_size()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "context full: the conversation is ", prompt.size(), " tokens with this message, the "
        "context holds ", sequence_->ctx_size(), " and ", reply_room_,
        " are kept for the reply"));
  }
  const auto start = std::chrono::steady_clock::now();
  // What EvalReusingPrefix will evaluate.
  const int64_t total =
      static_cast<int64_t>(prompt.size() - ReusablePrefixLength(sequence_->history(), prompt));
  const auto observe = [&](const EvaluatedToken& t) { return progress(t, total); };
  absl::StatusOr<PrefixReuse> reuse = EvalReusingPrefix(*sequence_, prompt, observe);
  if (!reuse.ok()) {
    if (absl::IsCancelled(reuse.status())) {
      return absl::CancelledError("interrupted during the prompt");
    }
    return reuse.status();
  }
  turn.reuse = *reuse;
  turn.prompt_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // The penalties see this turn's prompt, as a run over the rendered conversation would.
  sampler_->ResetHistory();
  for (const int32_t id : prompt) CORTIQ_RETURN_IF_ERROR(sampler_->Accept(id));
  CORTIQ_ASSIGN_OR_RETURN(turn.generation, Generate(*sequence_, tokenizer_, *sampler_, *stop_,
                                                    generate_, sink, interrupt));
  const GenerationResult& g = turn.generation;
  std::string reply;
  if (g.reason == FinishReason::kStopString) {
    reply = g.text;
  } else {
    std::vector<int32_t> kept = g.tokens;
    if (g.reason == FinishReason::kEndOfGeneration && !kept.empty()) kept.pop_back();
    text::DecodeOptions decode;  // special tokens kept: the thought channel's markers
    CORTIQ_ASSIGN_OR_RETURN(reply, tokenizer_->Decode(kept, decode));
  }
  turns_.push_back(Message("user", std::string(message)));
  turns_.push_back(Message("assistant", std::move(reply)));
  return turn;
}

bool ChatSession::IsContextFull(const absl::Status& status) {
  return absl::IsResourceExhausted(status) && absl::StartsWith(status.message(), "context full:");
}

absl::StatusOr<int> ChatSession::MakeRoom(absl::string_view message) {
  const int64_t context = sequence_->ctx_size();
  const auto prompt_tokens = [&](size_t skip) -> absl::StatusOr<int64_t> {
    CORTIQ_ASSIGN_OR_RETURN(const std::vector<int32_t> ids, PromptIds(skip, message));
    return static_cast<int64_t>(ids.size());
  };
  // Exchanges as DropOldestExchange counts them (a conversation loaded with a leading reply has
  // one more than its user messages).
  size_t exchanges = 0;
  for (size_t begin = 0; begin < turns_.size(); begin = ExchangeEnd(begin)) ++exchanges;
  if (exchanges == 0) return 0;
  CORTIQ_ASSIGN_OR_RETURN(const int64_t whole, prompt_tokens(0));
  if (whole + reply_room_ <= context) return 0;
  // Forgetting everything would not leave room for a reply either: forget nothing (Turn refuses
  // the message and the conversation stays).
  CORTIQ_ASSIGN_OR_RETURN(const int64_t alone, prompt_tokens(exchanges));
  if (alone + reply_room_ > context) return 0;
  size_t drop = 1;
  for (; drop < exchanges; ++drop) {
    CORTIQ_ASSIGN_OR_RETURN(const int64_t left, prompt_tokens(drop));
    if (left <= context / 2 && left + reply_room_ <= context) break;
  }
  for (size_t i = 0; i < drop; ++i) DropOldestExchange();
  return static_cast<int>(drop);
}

absl::StatusOr<SavedChat> ChatSession::Save() const {
  SavedChat chat;
  chat.enable_thinking = enable_thinking_;
  chat.system = system_;
  chat.messages = turns_;
  chat.generator_state = sampler_->generator_state();
  chat.sequence_state.resize(sequence_->StateSize());
  CORTIQ_RETURN_IF_ERROR(sequence_->Save(absl::MakeSpan(chat.sequence_state)));
  return chat;
}

absl::Status ChatSession::Load(const SavedChat& chat) {
  for (size_t i = 0; i < chat.messages.size(); ++i) {
    const text::ChatMessage& m = chat.messages[i];
    if (m.role != "user" && m.role != "assistant") {
      return absl::InvalidArgumentError(
          absl::StrCat("message ", i, " has the role \"", m.role, "\" (user or assistant expected)"));
    }
  }
  if ((chat.generator_state[0] | chat.generator_state[1] | chat.generator_state[2] |
       chat.generator_state[3]) == 0) {
    return absl::InvalidArgumentError("the sampler's generator state is all zero");
  }
  CORTIQ_RETURN_IF_ERROR(sequence_->Restore(chat.sequence_state));
  CORTIQ_RETURN_IF_ERROR(sampler_->set_generator_state(chat.generator_state));
  enable_thinking_ = chat.enable_thinking;
  system_ = chat.system;
  turns_ = chat.messages;
  return absl::OkStatus();
}

void ChatSession::Clear() {
  turns_.clear();
  sequence_->Reset();
}

size_t ChatSession::ExchangeEnd(size_t begin) const {
  size_t end = begin + 1;  // past the message at `begin` and the replies after it
  while (end < turns_.size() && turns_[end].role != "user") ++end;
  return end;
}

bool ChatSession::DropOldestExchange() {
  if (turns_.empty()) return false;
  turns_.erase(turns_.begin(), turns_.begin() + static_cast<std::ptrdiff_t>(ExchangeEnd(0)));
  return true;
}

}  // namespace cortiq
