// cortiq-chat: an interactive chat with a compiled MODEL.cortiq in the terminal, as llama.cpp's
// llama-cli (conversation mode) and `ollama run` offer. Runtime only (no MLIR/LLVM).
//
//   cortiq-chat MODEL.cortiq [--system TEXT] [--thinking] [sampling flags] [-c N] [-t N]
//
// One user message per line (a trailing backslash continues it on the next line; a block
// between """ lines is one message), the model's reply streamed as it is sampled, in the Gemma 4
// chat format with the model's sampling defaults. The conversation stays in the KV cache: each
// turn evaluates only the tokens the cache does not already hold (ChatSession). Commands:
// /help, /clear (a new conversation), /drop (forget the oldest exchange), /system [TEXT],
// /save FILE and /load FILE (the conversation with its KV cache and sampler state, in one file
// written atomically: chat_file.h; a later process continues it evaluating only new tokens),
// /exit. Ctrl-C during a reply stops the reply (it stays in the conversation); Ctrl-C at the
// prompt, /exit and EOF (Ctrl-D) end the program. On a pipe there are no prompt markers and each
// reply ends with one newline, so the chat can be scripted. Timings go to stderr: per turn with
// --verbose, and for the whole session at exit.
//
// Exit status: 0 after /exit or EOF, 130 after Ctrl-C at the prompt, 1 on an error that ends the
// session (no model, no tokenizer, a failed write to stdout) — "cortiq-chat: <message>" on
// stderr. Errors of one turn (a conversation that no longer fits the context, ...) are said on
// stderr and the session goes on; from a pipe such a message still gets its (empty) line on
// stdout, so that the Nth output line answers the Nth message, and the exit status at the end is
// 1 if any message got no reply or a /save or /load failed (a script would otherwise go on
// without the conversation it meant to load, or lose the one it meant to keep).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "runtime/artifact.h"
#include "runtime/generation/generator.h"
#include "runtime/generation/model_text.h"
#include "runtime/sampling/sampler.h"
#include "runtime/sampling/stop_condition.h"
#include "runtime/sequence.h"
#include "runtime/text/unicode.h"
#include "tools/common/escapes.h"
#include "tools/common/flags.h"
#include "tools/common/interrupt.h"
#include "tools/common/thought_display.h"
#include "tools/common/perf_report.h"
#include "tools/common/sampling_flags.h"
#include "tools/common/session_flags.h"
#include "tools/cortiq-chat/chat_file.h"
#include "tools/cortiq-chat/chat_session.h"
#include "tools/cortiq-chat/line_input.h"

namespace cortiq {
namespace {

using Clock = std::chrono::steady_clock;

struct ChatFlags {
  SessionFlags session;
  SamplingFlags sampling;
  std::string system;
  bool thinking = false;
  int64_t n_predict = -1;
  bool special = false;
  bool verbose = false;
  bool no_context_shift = false;
  EscapeFlags escapes;
};

constexpr char kHelp[] =
    "commands:\n"
    "  /help            this text\n"
    "  /clear           start a new conversation (the system message stays); also /reset\n"
    "  /drop            forget the oldest exchange (to make room in a full context)\n"
    "  /system [TEXT]   set (or with no TEXT remove) the system message\n"
    "  /save FILE       save the conversation and its KV cache to FILE (a file there is\n"
    "                   replaced only if it is a chat file)\n"
    "  /load FILE       continue a conversation saved by /save (same model)\n"
    "  /exit            end the chat; also /quit, /bye, Ctrl-D\n"
    "input:\n"
    "  a line ending in \\ continues on the next line; a block between \"\"\" lines is one\n"
    "  message; Ctrl-C stops a reply (it stays in the conversation), at the prompt it exits\n";

// Writes `text` to stdout at once (a failed write ends the session).
absl::Status WriteOut(absl::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
      std::fflush(stdout) != 0) {
    return absl::InternalError(absl::StrCat("stdout: write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// "1 exchange", "3 exchanges".
std::string Exchanges(int n) { return absl::StrCat(n, n == 1 ? " exchange" : " exchanges"); }

void Say(const std::string& text) {
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

// The session's running totals (the timings at exit).
struct Totals {
  int turns = 0;
  int64_t prompt_tokens = 0;  // evaluated
  int64_t reused = 0;
  double prompt_seconds = 0;
  int64_t generated = 0;
  int64_t evaluated = 0;
  double eval_seconds = 0;
  double total_seconds = 0;
};

// /save FILE: errors are said, the session goes on.
bool SaveChat(const ChatSession& chat, const Sequence& sequence, const std::string& path) {
  absl::StatusOr<SavedChat> saved = chat.Save();
  absl::Status s = saved.ok() ? WriteChatFile(path, *saved) : saved.status();
  if (!s.ok()) {
    Say(absl::StrCat("cortiq-chat: /save: ", s.message()));
    return false;
  }
  Say(absl::StrCat("cortiq-chat: saved the conversation (", Exchanges(chat.exchanges()), ", ",
                   sequence.length(), " positions) to ", path));
  return true;
}

// /load FILE: on error the session is as it was. False on error.
bool LoadChat(ChatSession* chat, const Sequence& sequence, const std::string& path) {
  absl::StatusOr<SavedChat> saved = ReadChatFile(path);
  absl::Status s = saved.ok() ? chat->Load(*saved) : saved.status();
  if (!s.ok()) {
    std::string message(s.message());
    if (saved.ok()) {  // Load's errors do not name the file
      if (absl::IsOutOfRange(s)) {
        message = absl::StrCat(path, ": ", message, " (-c/--ctx-size)");
      } else if (absl::IsDataLoss(s)) {
        message = absl::StrCat(path, ": damaged: ", message);
      } else {
        message = absl::StrCat(path, ": ", message);
      }
    }
    Say(absl::StrCat("cortiq-chat: /load: ", message, "; the conversation is unchanged"));
    return false;
  }
  Say(absl::StrCat("cortiq-chat: loaded ", path, " (", Exchanges(chat->exchanges()), ", ",
                   sequence.length(), " positions", chat->enable_thinking() ? ", thinking on" : "",
                   ")"));
  return true;
}

absl::StatusOr<int> Chat(const Flags& flags, const ChatFlags& f, const std::string& model_path) {
  const Clock::time_point load_begin = Clock::now();
  CORTIQ_ASSIGN_OR_RETURN(const SessionOptions session_options, ToSessionOptions(f.session));
  CORTIQ_ASSIGN_OR_RETURN(const ArtifactLoad load, ArtifactLoadOf(f.session));
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Artifact> artifact, Artifact::Open(model_path, load));
  NoteContextClamp("cortiq-chat", f.session, artifact->plan());
  NoteSlowPrefillActivations("cortiq-chat", session_options);
  NotePrefillActivationsWithoutEffect("cortiq-chat", session_options, artifact->plan());
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Sequence> sequence,
                          Sequence::Create(*artifact, session_options));
  CORTIQ_ASSIGN_OR_RETURN(const text::Tokenizer tokenizer, LoadArtifactTokenizer(*artifact));
  const double load_seconds =
      std::chrono::duration<double>(Clock::now() - load_begin).count();
  const Plan& plan = artifact->plan();
  const text::ChatTemplateSpec& shipped = tokenizer.config().chat_template;
  if (!shipped.text.empty() && !text::IsGemma4ChatTemplate(shipped.text)) {
    Say(absl::StrCat("cortiq-chat: warning: the model's chat template (", shipped.source,
                     ") is not the Gemma 4 format; the conversation is rendered in the built-in "
                     "Gemma 4 format"));
  }

  CORTIQ_ASSIGN_OR_RETURN(sampling::SamplingOptions options,
                          ResolveSampling(flags, f.sampling, ModelSamplingOptions(tokenizer)));
  for (const sampling::LogitBias& ban : UntokenizableIdBans(plan.model.vocab_size, tokenizer)) {
    options.logit_bias.push_back(ban);
  }
  CORTIQ_ASSIGN_OR_RETURN(sampling::Sampler sampler,
                          sampling::Sampler::Create(options,
                                                    static_cast<int32_t>(plan.model.vocab_size)));
  CORTIQ_ASSIGN_OR_RETURN(sampling::StopCondition stop,
                          sampling::StopCondition::Create(ChatEndOfTurnIds(tokenizer),
                                                          f.sampling.stop));
  GenerateOptions generate;
  generate.max_tokens = f.n_predict;
  generate.special = f.special;
  generate.ignore_eos = f.sampling.ignore_eos;
  // A reply's thought channel (Gemma 4 with --thinking): tools/common/thought_display.h.
  ThoughtDisplay thoughts;
  generate.reasoning = [&thoughts](absl::string_view piece) { return thoughts.Thought(piece); };
  ChatSession chat(sequence.get(), &tokenizer, &sampler, &stop, generate, f.thinking);
  chat.set_system(f.system);
  {
    // Room for a reply (with or without the context shift, as --help says).
    const int64_t quarter = sequence->ctx_size() / 4;
    chat.set_reply_room(f.n_predict >= 0 ? std::min<int64_t>(f.n_predict, quarter) : quarter);
  }

  InstallInterruptHandler();
  std::atomic<bool>& interrupt = InterruptFlag();
  LineInput input(STDIN_FILENO, "> ", "... ", &interrupt);
  const bool terminal_out = isatty(STDOUT_FILENO) == 1;
  if (input.interactive()) {
    Say(absl::StrCat("cortiq-chat: ", model_path, " (context ", sequence->ctx_size(),
                     " positions). /help for commands, Ctrl-C stops a reply, Ctrl-D or /exit "
                     "ends."));
  }

  Totals totals;
  int exit_code = 0;
  int failed_turns = 0;     // messages that got no reply
  int failed_commands = 0;  // /save and /load that failed
  std::string message;
  for (;;) {
    CORTIQ_ASSIGN_OR_RETURN(const InputEvent event, input.ReadMessage(&message));
    if (event == InputEvent::kEndOfInput) break;
    if (event == InputEvent::kInterrupted) {
      if (input.interactive()) CORTIQ_RETURN_IF_ERROR(WriteOut("\n"));
      exit_code = 130;
      break;
    }
    // An empty (or all-blank) message is no turn, as in Ollama: Enter pressed by accident.
    if (absl::StripAsciiWhitespace(message).empty()) continue;
    // Commands: a message whose first line starts with '/' (a leading space sends it as text).
    if (absl::StartsWith(message, "/")) {
      const absl::string_view line = absl::StripAsciiWhitespace(message);
      const size_t space = line.find_first_of(" \t\n");
      const absl::string_view command = line.substr(0, space);
      const absl::string_view argument =
          space == absl::string_view::npos ? "" : absl::StripAsciiWhitespace(line.substr(space));
      if (command == "/exit" || command == "/quit" || command == "/bye") break;
      if (command == "/help" || command == "/?") {
        std::fputs(kHelp, stderr);
      } else if (command == "/clear" || command == "/reset") {
        chat.Clear();
        Say("cortiq-chat: new conversation");
      } else if (command == "/drop") {
        if (chat.DropOldestExchange()) {
          Say(absl::StrCat("cortiq-chat: dropped the oldest exchange (", chat.exchanges(),
                           chat.exchanges() == 0 ? " left)"
                           : chat.exchanges() == 1
                               ? " left; the next turn re-evaluates it)"
                               : " left; the next turn re-evaluates them)"));
        } else {
          Say("cortiq-chat: the conversation is empty");
        }
      } else if (command == "/system") {
        chat.set_system(std::string(argument));
        Say(argument.empty() ? "cortiq-chat: no system message"
                             : "cortiq-chat: system message set (the next turn re-evaluates the "
                               "conversation)");
      } else if (command == "/save" || command == "/load") {
        if (argument.empty()) {
          Say(absl::StrCat("cortiq-chat: usage: ", command, " FILE"));
        } else if (command == "/save") {
          failed_commands += !SaveChat(chat, *sequence, std::string(argument));
        } else {
          failed_commands += !LoadChat(&chat, *sequence, std::string(argument));
        }
      } else {
        Say(absl::StrCat("cortiq-chat: unknown command ", command, " (see /help)"));
      }
      continue;
    }

    // The progress line of a long prompt (a terminal only), which Ctrl-C stops.
    std::optional<PromptProgress> progress;
    const auto observe = [&](const EvaluatedToken& t, int64_t total) -> absl::Status {
      if (!progress) progress.emplace(total, sequence->batch_size(), &interrupt);
      absl::Status s = (*progress)(t);
      if (t.index() + 1 == static_cast<size_t>(total)) progress->Done();
      return s;
    };
    const auto sink = [&](absl::string_view piece) { return thoughts.Answer(piece); };
    absl::StatusOr<ChatTurn> turn = chat.Turn(message, sink, &interrupt, observe);
    // Context shift (ChatSession::MakeRoom), when the turn was refused for the context (then
    // nothing was evaluated): checked only then, so that a turn that fits tokenizes the
    // conversation once.
    if (!f.no_context_shift && !turn.ok() && ChatSession::IsContextFull(turn.status())) {
      absl::StatusOr<int> forgot = chat.MakeRoom(message);
      if (forgot.ok() && *forgot > 0) {
        Say(absl::StrCat("cortiq-chat: context full (", sequence->ctx_size(),
                         " positions): forgot the ", *forgot == 1 ? "" : absl::StrCat(*forgot, " "),
                         *forgot == 1 ? "oldest exchange" : "oldest exchanges", " (",
                         Exchanges(chat.exchanges()), " left; evaluated anew)"));
        turn = chat.Turn(message, sink, &interrupt, observe);
      }
    }
    CORTIQ_RETURN_IF_ERROR(thoughts.EndReply());
    // The Ctrl-C that stopped this turn is handled: the next one, at the prompt, must find the
    // flag clear (a set flag makes the handler end the program).
    interrupt.store(false);
    if (!turn.ok()) {
      const absl::Status& s = turn.status();
      if (absl::IsInternal(s) && absl::StartsWith(s.message(), "stdout:")) return s;
      // From a script, every message gets one line on stdout, an empty one when there is no
      // reply, so that input and output lines stay paired; the exit status says it happened.
      ++failed_turns;
      if (!input.interactive()) CORTIQ_RETURN_IF_ERROR(WriteOut("\n"));
      if (absl::IsResourceExhausted(s)) {
        Say(absl::StrCat("cortiq-chat: ", s.message(), " (-c/--ctx-size; the model supports ",
                         plan.model.max_position_embeddings, ").",
                         chat.exchanges() > 0 ? " /clear starts a new conversation, /drop "
                                                "forgets the oldest exchange."
                                              : ""));
        continue;
      }
      if (absl::IsCancelled(s)) {
        Say("cortiq-chat: interrupted during the prompt; the message was not sent");
        continue;
      }
      Say(absl::StrCat("cortiq-chat: ", s.message()));
      continue;
    }
    const GenerationResult& g = turn->generation;
    if (input.interactive() || terminal_out) {
      CORTIQ_RETURN_IF_ERROR(WriteOut(!g.text.empty() && g.text.back() == '\n' ? "\n" : "\n\n"));
    } else {
      CORTIQ_RETURN_IF_ERROR(WriteOut("\n"));
    }
    if (g.reason == FinishReason::kInterrupted) {
      Say("cortiq-chat: reply interrupted (kept in the conversation)");
    } else if (g.reason == FinishReason::kContextFull) {
      Say(absl::StrCat("cortiq-chat: context full (", sequence->ctx_size(),
                       " positions): the reply was cut. /clear starts a new conversation, /drop "
                       "forgets the oldest exchange (-c/--ctx-size gives more room; the model "
                       "supports ",
                       plan.model.max_position_embeddings, ")"));
    }
    ++totals.turns;
    totals.prompt_tokens += turn->reuse.evaluated;
    totals.reused += turn->reuse.reused;
    totals.prompt_seconds += turn->prompt_seconds;
    totals.generated += static_cast<int64_t>(g.tokens.size());
    totals.evaluated += g.evaluated;
    totals.eval_seconds += g.eval_seconds;
    totals.total_seconds += turn->prompt_seconds + g.total_seconds;
    if (f.verbose) {
      PerfCounters perf;
      perf.prompt_tokens = turn->reuse.evaluated;
      perf.prompt_reused = turn->reuse.reused;
      perf.prompt_seconds = turn->prompt_seconds;
      perf.generated = static_cast<int64_t>(g.tokens.size());
      perf.evaluated = g.evaluated;
      perf.eval_seconds = g.eval_seconds;
      perf.first_token_seconds = turn->prompt_seconds + g.first_token_seconds;
      perf.total_seconds = turn->prompt_seconds + g.total_seconds;
      std::fprintf(stderr, "%sstop: %s; context: %lld of %lld positions\n",
                   FormatPerf(perf).c_str(), FinishReasonName(g.reason),
                   static_cast<long long>(sequence->length()),
                   static_cast<long long>(sequence->ctx_size()));
      std::fflush(stderr);
    }
  }

  PerfCounters perf;
  perf.load_seconds = load_seconds;
  perf.prompt_tokens = totals.prompt_tokens;
  perf.prompt_reused = totals.reused;
  perf.prompt_seconds = totals.prompt_seconds;
  perf.generated = totals.generated;
  perf.evaluated = totals.evaluated;
  perf.eval_seconds = totals.eval_seconds;
  perf.total_seconds = totals.total_seconds;
  perf.first_token_seconds = -1;  // per turn only (--verbose)
  std::fprintf(stderr, "\nsession (%d turn%s):\n%s", totals.turns, totals.turns == 1 ? "" : "s",
               FormatPerf(perf).c_str());
  if (failed_turns > 0) {
    std::fprintf(stderr, "cortiq-chat: %d message(s) got no reply\n", failed_turns);
    if (exit_code == 0) exit_code = 1;
  }
  if (failed_commands > 0) {
    std::fprintf(stderr, "cortiq-chat: %d /save or /load command(s) failed\n", failed_commands);
    if (exit_code == 0) exit_code = 1;
  }
  return exit_code;
}

int Main(int argc, char** argv) {
  ChatFlags f;
  Flags flags("cortiq-chat", "MODEL.cortiq [options]",
              "Chats with a compiled model in the terminal (or over a pipe: one message per "
              "line, each reply ending in a newline), in the model's chat format with its own "
              "sampling defaults; the conversation stays in the KV cache, so each turn "
              "evaluates only its new tokens. /help lists the commands.");
  AddSessionFlags(flags, &f.session);
  flags.AddString("--system", "TEXT", &f.system, "the system message (/system changes it)");
  flags.AddBool("--thinking", &f.thinking, "thinking on: <|think|> in the system turn");
  flags.AddInt("-n, --n-predict", "N", &f.n_predict, -1, INT32_MAX,
               "tokens per reply at most; -1 = until the end of the model's turn or a full "
               "context (default: -1)");
  flags.AddBool("--special", &f.special, "print special tokens (<|channel>, ...)");
  flags.AddBool("--no-context-shift", &f.no_context_shift,
                "when the conversation would leave less than room for a reply (a quarter of the "
                "context, or -n if less), refuse the message (/drop and /clear make room) "
                "instead of forgetting the oldest exchanges until it fills at most half the "
                "context");
  flags.AddBool("--verbose", &f.verbose,
                "timings of every turn on stderr (prompt tokens evaluated and reused from the "
                "cache, tokens per second)");
  AddSamplingFlags(flags, &f.sampling);
  AddEscapeFlags(flags, &f.escapes, "--system and --stop");
  flags.AddEpilog(
      std::string(kHelp) +
      "over a pipe:\n"
      "  each message's reply is written to stdout and ended with a newline (a reply keeps\n"
      "  its own newlines, so it may take several lines); a message that gets no reply (a\n"
      "  full context, ...: said on stderr) writes an empty line; commands write nothing to\n"
      "  stdout.\n"
      "exit status:\n"
      "  0 at /exit or end of input; 1 on an error that ends the session or if any message got\n"
      "  no reply or a /save or /load failed; 130 after Ctrl-C at the prompt.\n"
      "examples:\n"
      "  cortiq-chat model.cortiq --system \"You are a concise assistant.\"\n"
      "  printf 'Hello\\nAnd in French?\\n' | cortiq-chat model.cortiq --temp 0");
  std::vector<std::string> positional = flags.ParseOrExit(argc, argv);
  NoteIgnoredFlags("cortiq-chat", flags);
  // --system and --stop as llama.cpp reads them ('\n' a newline); typed messages as they are.
  std::vector<std::string*> texts = {&f.system};
  for (std::string& stop : f.sampling.stop) texts.push_back(&stop);
  ApplyEscapes(f.escapes, texts);
  absl::StatusOr<std::string> model = TakeModelPath(f.session, &positional);
  // Checked here, against the flag: later the tokenizer would refuse every turn, at an offset
  // of the rendered conversation.
  if (const size_t bad = text::FindInvalidUtf8(f.system);
      model.ok() && bad != std::string_view::npos) {
    model = absl::InvalidArgumentError(absl::StrCat(
        "--system", f.escapes.no_escape ? "" : " (after escapes; --no-escape)",
        ": the text is not valid UTF-8 at byte ", bad));
  }
  absl::StatusOr<int> result =
      model.ok() ? Chat(flags, f, *model) : absl::StatusOr<int>(model.status());
  if (!result.ok()) {
    std::fprintf(stderr, "cortiq-chat: %s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  return *result;
}

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) { return cortiq::Main(argc, argv); }
