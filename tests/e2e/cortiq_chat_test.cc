// cortiq-chat end to end on the golden tiny-a artifact, driven through pipes: three turns give
// the replies of one cortiq-run over each whole rendered conversation and evaluate only the
// tokens the KV cache does not hold (counted from --verbose); SIGINT during a reply stops it and
// the chat goes on; SIGINT at the prompt, /exit and EOF end it; /clear, multi-line input, a
// full context and the context shift.
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/generation/model_text.h"
#include "runtime/generation/prefix_reuse.h"
#include "tests/e2e/golden_data.h"
#include "tests/e2e/subprocess.h"

namespace cortiq {
namespace {

using ::cortiq::testing::Child;
using ::cortiq::testing::CommandResult;
using ::cortiq::testing::RunCommand;
using ::testing::HasSubstr;
using ::testing::Not;

// What --verbose said about one turn's prompt.
struct TurnCounts {
  int64_t evaluated = 0;
  int64_t reused = 0;
};

// The per-turn prompt counts of --verbose, in order (the session totals at exit are left out:
// they follow "session (").
std::vector<TurnCounts> ParseTurns(const std::string& err) {
  const std::string turns = err.substr(0, err.rfind("\nsession ("));
  std::vector<TurnCounts> out;
  const std::regex eval(R"(prompt eval time = +[0-9.]+ ms / +([0-9]+) tokens)");
  const std::regex cache(R"(prompt cache = +([0-9]+) tokens reused)");
  for (auto it = std::sregex_iterator(turns.begin(), turns.end(), eval); it != std::sregex_iterator(); ++it) {
    out.push_back({std::stoll((*it)[1]), -1});
  }
  size_t i = 0;
  for (auto it = std::sregex_iterator(turns.begin(), turns.end(), cache);
       it != std::sregex_iterator() && i < out.size(); ++it, ++i) {
    out[i].reused = std::stoll((*it)[1]);
  }
  return out;
}

std::vector<int32_t> ParseIds(const std::string& out) {
  std::vector<int32_t> ids;
  for (absl::string_view id : absl::StrSplit(absl::StripTrailingAsciiWhitespace(out), ',')) {
    int32_t v = 0;
    EXPECT_TRUE(absl::SimpleAtoi(id, &v)) << out;
    ids.push_back(v);
  }
  return ids;
}

text::ChatMessage Message(const char* role, const std::string& content) {
  text::ChatMessage m;
  m.role = role;
  m.content = content;
  return m;
}

class CortiqChatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/cortiq_chat_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str());
    model_ = ArtifactPath("tiny-a-f32", "opt");
    absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(model_);
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    artifact_ = *std::move(artifact);
    absl::StatusOr<text::Tokenizer> tokenizer = LoadArtifactTokenizer(*artifact_);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_.emplace(*std::move(tokenizer));
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // The conversation rendered with the generation prompt, and its ids.
  std::string Render(const std::vector<text::ChatMessage>& messages) {
    text::ChatOptions options;
    options.add_generation_prompt = true;
    absl::StatusOr<std::string> text = RenderChatPrompt(*tokenizer_, messages, options);
    EXPECT_TRUE(text.ok()) << text.status();
    return *text;
  }
  std::vector<int32_t> Encode(const std::string& text) {
    absl::StatusOr<std::vector<int32_t>> ids = EncodePrompt(*tokenizer_, text);
    EXPECT_TRUE(ids.ok()) << ids.status();
    return *ids;
  }
  // `cortiq-chat ARGS` with `input` on stdin.
  CommandResult Chat(const std::string& args, const std::string& input) {
    const std::string file = dir_ + "/input.txt";
    std::ofstream(file, std::ios::binary) << input;
    return RunCommand(absl::StrCat(CORTIQ_CHAT_BINARY, " ", model_, " ", args, " <", file), dir_);
  }
  CommandResult Run(const std::string& args) {
    return RunCommand(absl::StrCat(CORTIQ_RUN_BINARY, " ", model_, " ", args), dir_);
  }

  std::string dir_;
  std::string model_;
  std::unique_ptr<Artifact> artifact_;
  std::optional<text::Tokenizer> tokenizer_;
};

// Three turns through a pipe: each reply is what one cortiq-run (greedy, same token limit) gives
// for the whole conversation rendered so far, and each turn evaluates exactly the tokens of its
// rendered conversation that the cache does not hold — the cache being the previous prompt and
// the previous reply's tokens (all but the last, which is never evaluated; the ids come from
// cortiq-run --tokens).
TEST_F(CortiqChatTest, ThreeTurnsEvaluateOnlyNewTokensAndMatchCortiqRun) {
  const std::vector<std::string> users = {"Hello there", "Tell me a story about the sea",
                                          "Thanks, and one more"};
  const std::string limits = "-n 8 --ignore-eos --special";
  const CommandResult chat =
      Chat(absl::StrCat("--temp 0 --verbose ", limits), absl::StrJoin(users, "\n") + "\n");
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  const std::vector<TurnCounts> counts = ParseTurns(chat.err);
  ASSERT_EQ(counts.size(), 3u) << chat.err;

  std::vector<text::ChatMessage> messages;
  std::string expected_out;
  std::vector<int32_t> cache;  // what the chat's sequence holds after each turn
  for (size_t k = 0; k < users.size(); ++k) {
    messages.push_back(Message("user", users[k]));
    const std::string rendered = Render(messages);
    const std::vector<int32_t> prompt = Encode(rendered);
    const std::string file = absl::StrCat(dir_, "/conversation", k, ".txt");
    std::ofstream(file, std::ios::binary) << rendered;
    const CommandResult run = Run(absl::StrCat("-f ", file, " --temp 0 ", limits));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    expected_out += run.out + "\n";

    const int64_t reused = static_cast<int64_t>(
        std::min(CommonPrefixLength(cache, prompt), prompt.size() - 1));
    EXPECT_EQ(counts[k].reused, reused) << "turn " << k;
    EXPECT_EQ(counts[k].evaluated, static_cast<int64_t>(prompt.size()) - reused) << "turn " << k;
    if (k > 0) {
      // The history is not evaluated again: at most the previous prompt's last token (merged
      // with the reply's first bytes in this tokenizer, "\n" + text) differs.
      EXPECT_GE(reused, static_cast<int64_t>(cache.size()) - 8 - 1) << "turn " << k;
    }

    const CommandResult ids = Run(absl::StrCat("--tokens ", absl::StrJoin(prompt, ","),
                                               " -n 8 --ignore-eos"));
    ASSERT_EQ(ids.exit_code, 0) << ids.err;
    std::vector<int32_t> reply = ParseIds(ids.out);
    ASSERT_EQ(reply.size(), 8u);
    cache = prompt;
    cache.insert(cache.end(), reply.begin(), reply.end() - 1);
    messages.push_back(Message("assistant", run.out));
  }
  EXPECT_EQ(chat.out, expected_out);
  EXPECT_THAT(chat.err, HasSubstr("session (3 turns)"));
}

// SIGINT while the model replies (no token limit, a context of 100000 positions: seconds of
// generation) stops that reply and keeps it in the conversation: the next message is answered,
// on top of the cached history. SIGINT at the prompt then ends the program (status 130).
TEST_F(CortiqChatTest, SigintStopsTheReplyAndTheChatGoesOn) {
  Child child({CORTIQ_CHAT_BINARY, model_, "-c", "100000", "--ignore-eos", "--verbose", "-s",
               "1"});
  child.Write("Hello\n");
  // Some text of the reply, then Ctrl-C.
  ASSERT_TRUE(child.WaitForOutputBytes(8, 30)) << child.err();
  child.Signal(SIGINT);
  ASSERT_TRUE(child.WaitForError("reply interrupted (kept in the conversation)", 30)) << child.err();
  ASSERT_TRUE(child.WaitForError("stop: interrupted", 30)) << child.err();
  const size_t first_reply_end = child.out().size();
  EXPECT_EQ(child.out().back(), '\n');

  child.Write("Go on\n");
  ASSERT_TRUE(child.WaitForOutputBytes(first_reply_end + 8, 30)) << child.err();
  child.Signal(SIGINT);
  const size_t second = child.err().find("stop: interrupted") + 1;
  ASSERT_TRUE(child.WaitForError("stop: interrupted", 30, second)) << child.err();
  std::vector<TurnCounts> counts = ParseTurns(child.err());
  ASSERT_EQ(counts.size(), 2u) << child.err();
  // The second prompt holds the interrupted reply (the context grew past it) and reused at
  // least the first prompt (how much of the reply is reused depends on whether its text
  // re-encodes to the sampled tokens: the random tiny model samples non-canonical ones).
  EXPECT_GE(counts[1].reused, counts[0].evaluated) << child.err();
  EXPECT_GT(counts[1].reused + counts[1].evaluated, counts[0].evaluated + 8) << child.err();

  child.Signal(SIGINT);  // at the prompt
  EXPECT_EQ(child.Wait(30), 130) << child.err();
  EXPECT_THAT(child.err(), HasSubstr("session (2 turns)"));
}

// /clear starts anew (nothing reused; the same first reply again), /help and unknown commands
// are answered on stderr, /exit ends with status 0 before the rest of the input. Empty and
// blank lines are no turn (as in Ollama).
TEST_F(CortiqChatTest, Commands) {
  const CommandResult chat =
      Chat("--temp 0 -n 6 --ignore-eos --verbose",
           "\nHello\n \t\nMore\n\n/clear\nHello\n/help\n/nonsense\n/exit\nNever sent\n");
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  const CommandResult first = Chat("--temp 0 -n 6 --ignore-eos", "Hello\n");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_GT(chat.out.size(), 2 * first.out.size());
  EXPECT_EQ(chat.out.substr(0, first.out.size()), first.out);
  EXPECT_EQ(chat.out.substr(chat.out.size() - first.out.size()), first.out);
  EXPECT_EQ(chat.out.find("Never"), std::string::npos);
  const std::vector<TurnCounts> counts = ParseTurns(chat.err);
  ASSERT_EQ(counts.size(), 3u) << chat.err;
  EXPECT_EQ(counts[0].reused, 0);
  EXPECT_GT(counts[1].reused, 0);
  EXPECT_EQ(counts[2].reused, 0);
  EXPECT_EQ(counts[2].evaluated, counts[0].evaluated);
  EXPECT_THAT(chat.err, HasSubstr("new conversation"));
  EXPECT_THAT(chat.err, HasSubstr("/drop"));  // the help
  EXPECT_THAT(chat.err, HasSubstr("unknown command /nonsense (see /help)"));
  EXPECT_THAT(chat.err, HasSubstr("session (3 turns)"));
}

// /drop forgets the oldest exchange: the next reply is what one cortiq-run gives for the
// conversation without it (the rest re-evaluated). /system sets the system message: the next
// reply is the one --system gives from the start. /reset is /clear: the same first reply again,
// nothing reused.
TEST_F(CortiqChatTest, DropSystemAndResetChangeTheConversation) {
  const std::string limits = "--temp 0 -n 6 --ignore-eos --special";
  const CommandResult chat = Chat(absl::StrCat(limits, " --verbose"),
                                  "First message\nSecond message\n/drop\nThird message\n");
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  EXPECT_THAT(chat.err, HasSubstr("dropped the oldest exchange (1 left"));
  const std::vector<std::string> replies =
      absl::StrSplit(absl::StripSuffix(chat.out, "\n"), '\n');
  ASSERT_EQ(replies.size(), 3u) << chat.out;
  const std::string file = dir_ + "/after_drop.txt";
  const std::string after_drop =
      Render({Message("user", "Second message"), Message("assistant", replies[1]),
              Message("user", "Third message")});
  std::ofstream(file, std::ios::binary) << after_drop;
  const CommandResult run = Run(absl::StrCat("-f ", file, " ", limits));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(replies[2], run.out);
  const std::vector<TurnCounts> counts = ParseTurns(chat.err);
  ASSERT_EQ(counts.size(), 3u) << chat.err;
  // The first exchange is gone from the front: what the cache still serves is the start the
  // first message's prompt shares with the new conversation (<bos><|turn>user\n ...), and the
  // rest is evaluated again.
  const std::vector<int32_t> prompt = Encode(after_drop);
  const int64_t shared = static_cast<int64_t>(
      CommonPrefixLength(Encode(Render({Message("user", "First message")})), prompt));
  EXPECT_EQ(counts[2].reused, shared);
  EXPECT_EQ(counts[2].evaluated, static_cast<int64_t>(prompt.size()) - shared);

  const CommandResult system = Chat(limits, "/system Answer in French.\nHello\n");
  ASSERT_EQ(system.exit_code, 0) << system.err;
  EXPECT_THAT(system.err, HasSubstr("system message set"));
  const CommandResult flag = Chat(absl::StrCat(limits, " --system 'Answer in French.'"), "Hello\n");
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(system.out, flag.out);
  const CommandResult plain = Chat(limits, "Hello\n");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(Encode(Render({Message("system", "Answer in French."), Message("user", "Hello")})),
            Encode(Render({Message("user", "Hello")})));

  const CommandResult reset =
      Chat(absl::StrCat(limits, " --verbose"), "Hello\n/reset\nHello\n");
  ASSERT_EQ(reset.exit_code, 0) << reset.err;
  EXPECT_EQ(reset.out, plain.out + plain.out);
  const std::vector<TurnCounts> reset_counts = ParseTurns(reset.err);
  ASSERT_EQ(reset_counts.size(), 2u) << reset.err;
  EXPECT_EQ(reset_counts[1].reused, 0);
}

// A trailing backslash and a """ block each make one message of several lines: the prompt has
// the tokens of the conversation with that message (/clear between them: each is a first turn).
TEST_F(CortiqChatTest, MultiLineInput) {
  const CommandResult chat = Chat("--temp 0 -n 2 --verbose",
                                  "first\\\nsecond\n/clear\n\"\"\"\nthird\n\nfourth\n\"\"\"\n");
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  const std::vector<TurnCounts> counts = ParseTurns(chat.err);
  ASSERT_EQ(counts.size(), 2u) << chat.err;
  EXPECT_EQ(counts[0].evaluated,
            static_cast<int64_t>(Encode(Render({Message("user", "first\nsecond")})).size()));
  EXPECT_EQ(counts[1].reused, 0);
  EXPECT_EQ(counts[1].evaluated,
            static_cast<int64_t>(Encode(Render({Message("user", "third\n\nfourth")})).size()));
  // Distinct from the message the lines would make without their continuation marks.
  EXPECT_NE(Encode(Render({Message("user", "first\nsecond")})).size(),
            Encode(Render({Message("user", "first")})).size());
}

// A message that does not fit the context is refused with the way out; the chat goes on. On a
// pipe the refused message still gets its (empty) line on stdout, so that the replies stay
// paired with the messages, and the exit status says that a message got no reply.
TEST_F(CortiqChatTest, FullContextIsSaidAndTheChatGoesOn) {
  std::string long_message;
  for (int i = 0; i < 40; ++i) long_message += "word ";
  const CommandResult chat = Chat("-c 32 --temp 0 -n 2 --ignore-eos",
                                  long_message + "\n/clear\nHi\n");
  ASSERT_EQ(chat.exit_code, 1) << chat.err;
  EXPECT_THAT(chat.err, HasSubstr("cortiq-chat: 1 message(s) got no reply"));
  const CommandResult alone = Chat("-c 32 --temp 0 -n 2 --ignore-eos", "Hi\n");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  // The empty line of the refused message, then exactly the reply "Hi" gets alone.
  EXPECT_EQ(chat.out, "\n" + alone.out);
  EXPECT_THAT(chat.err, HasSubstr("context full: the conversation is "));
  EXPECT_THAT(chat.err, HasSubstr("the context holds 32"));
  // Nothing to /drop or /clear yet: the way out is a larger context.
  EXPECT_THAT(chat.err, HasSubstr("(-c/--ctx-size; the model supports "));
  EXPECT_THAT(chat.err, Not(HasSubstr("/drop")));
  EXPECT_THAT(chat.err, HasSubstr("session (1 turn)"));
  // A reply that fills the context is cut and said so.
  const CommandResult cut = Chat("-c 16 --temp 0 --ignore-eos", "Hi\n");
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  EXPECT_THAT(cut.err, HasSubstr("context full (16 positions): the reply was cut"));
}

// Context shift: when a message and room for its reply (-n here, under a quarter of the context)
// no longer fit, the conversation forgets its oldest exchanges until it fills at most half the
// context; every message is answered as cortiq-run answers the conversation that is left. A
// message that cannot fit even alone is refused and forgets nothing. With --no-context-shift
// the messages that do not fit are refused instead.
TEST_F(CortiqChatTest, AFullContextForgetsTheOldestExchanges) {
  std::string too_long;
  for (int i = 0; i < 40; ++i) too_long += "word ";
  const std::vector<std::string> users = {"Hello there", "Tell me a story about the sea",
                                          "And then", too_long, "What else", "Thanks",
                                          "Bye now", "Ok"};
  constexpr int64_t kContext = 64, kReply = 8;
  const std::string limits = "-n 8 --ignore-eos --special";
  const std::string input = absl::StrJoin(users, "\n") + "\n";
  const CommandResult chat = Chat(absl::StrCat("-c 64 --temp 0 ", limits), input);
  ASSERT_EQ(chat.exit_code, 1) << chat.err;  // the too long message got no reply

  std::vector<text::ChatMessage> messages;  // user and assistant, in turn
  std::string expected_out;
  std::vector<std::string> expected_notes;
  const auto tokens = [&](const std::vector<text::ChatMessage>& m) {
    return static_cast<int64_t>(Encode(Render(m)).size());
  };
  for (const std::string& user : users) {
    std::vector<text::ChatMessage> with = messages;
    with.push_back(Message("user", user));
    if (tokens({Message("user", user)}) > kContext) {
      expected_out += "\n";  // refused: an empty line on the pipe, nothing forgotten
      continue;
    }
    if (!messages.empty() && tokens(with) + kReply > kContext) {
      size_t forgot = 0;
      do {
        messages.erase(messages.begin(), messages.begin() + 2);  // the oldest user + reply
        ++forgot;
        with = messages;
        with.push_back(Message("user", user));
      } while (!messages.empty() && tokens(with) > kContext / 2);
      expected_notes.push_back(absl::StrCat("forgot the ", forgot == 1 ? "" : absl::StrCat(forgot, " "),
                                            forgot == 1 ? "oldest exchange" : "oldest exchanges",
                                            " (", messages.size() / 2,
                                            messages.size() / 2 == 1 ? " exchange" : " exchanges",
                                            " left; evaluated anew)"));
    }
    const std::string file = dir_ + "/conversation.txt";
    std::ofstream(file, std::ios::binary) << Render(with);
    const CommandResult run = Run(absl::StrCat("-f ", file, " --temp 0 ", limits));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    expected_out += run.out + "\n";
    messages = with;
    messages.push_back(Message("assistant", run.out));
  }
  ASSERT_GE(expected_notes.size(), 2u) << "the test should make the context overflow twice";
  EXPECT_EQ(chat.out, expected_out);
  std::vector<std::string> notes;
  for (absl::string_view line : absl::StrSplit(chat.err, '\n')) {
    const size_t at = line.find("forgot the ");
    if (at != absl::string_view::npos) notes.emplace_back(line.substr(at));
  }
  EXPECT_EQ(notes, expected_notes) << chat.err;
  EXPECT_THAT(chat.err, Not(HasSubstr("the reply was cut")));
  EXPECT_THAT(chat.err, HasSubstr("1 message(s) got no reply"));

  const CommandResult refused =
      Chat(absl::StrCat("-c 64 --temp 0 --no-context-shift ", limits), input);
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_THAT(refused.err, Not(HasSubstr("forgot")));
  // The reply room holds without the shift too: a message is refused, never answered with a
  // reply cut short by the context.
  EXPECT_THAT(refused.err, Not(HasSubstr("the reply was cut")));
  EXPECT_THAT(refused.err, HasSubstr("/drop forgets the oldest exchange"));
}

// A message that is not valid UTF-8 is refused naming the byte of the message (not an offset in
// the rendered conversation); the next message is answered.
TEST_F(CortiqChatTest, InvalidUtf8IsSaidAtTheMessagesByte) {
  const CommandResult chat = Chat("-n 2 --ignore-eos --temp 0", "ab\xff\nHi\n");
  EXPECT_EQ(chat.exit_code, 1) << chat.err;
  EXPECT_THAT(chat.err, HasSubstr("the message is not valid UTF-8 at byte 2 of it; not sent"));
  const CommandResult alone = Chat("-n 2 --ignore-eos --temp 0", "Hi\n");
  EXPECT_EQ(chat.out, "\n" + alone.out);
}

// A second message that fits the context but would leave less than the reply room (-n 8) is
// refused with --no-context-shift (never answered with a reply the context cuts short), and
// makes the shift forget the first exchange without it.
TEST_F(CortiqChatTest, TheReplyRoomHoldsWithAndWithoutTheShift) {
  constexpr int64_t kContext = 64, kReply = 8;
  const std::string limits = "-n 8 --ignore-eos --special --temp 0 -c 64";
  const CommandResult first = Chat(limits, "Hi\n");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::vector<text::ChatMessage> messages = {
      Message("user", "Hi"), Message("assistant", first.out.substr(0, first.out.size() - 1))};
  // A second message whose conversation fits but leaves fewer than kReply positions.
  std::string second;
  for (int words = 1; words < 60 && second.empty(); ++words) {
    std::string candidate;
    for (int i = 0; i < words; ++i) candidate += "word ";
    std::vector<text::ChatMessage> with = messages;
    with.push_back(Message("user", candidate));
    const int64_t n = static_cast<int64_t>(Encode(Render(with)).size());
    if (n <= kContext && n + kReply > kContext) second = candidate;
  }
  ASSERT_FALSE(second.empty()) << "no message length lands in the reply room";
  const CommandResult refused =
      Chat(absl::StrCat(limits, " --no-context-shift"), absl::StrCat("Hi\n", second, "\n"));
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("are kept for the reply"));
  EXPECT_THAT(refused.err, Not(HasSubstr("the reply was cut")));
  const CommandResult shifted = Chat(limits, absl::StrCat("Hi\n", second, "\n"));
  EXPECT_EQ(shifted.exit_code, 0) << shifted.err;
  EXPECT_THAT(shifted.err,
              HasSubstr("forgot the oldest exchange (0 exchanges left; evaluated anew)"));
  EXPECT_THAT(shifted.err, Not(HasSubstr("the reply was cut")));
}

// EOF ends the chat with status 0 and the session's timings; no prompt markers on a pipe.
TEST_F(CortiqChatTest, EndOfInputEndsCleanly) {
  const CommandResult chat = Chat("--temp 0 -n 3 --ignore-eos", "Hi");
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  EXPECT_EQ(std::count(chat.out.begin(), chat.out.end(), '\n'), 1) << chat.out;
  EXPECT_EQ(chat.out.find("> "), std::string::npos);
  EXPECT_THAT(chat.err, HasSubstr("session (1 turn)"));
  EXPECT_THAT(chat.err, HasSubstr("load time"));
  const CommandResult empty = Chat("", "");
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_EQ(empty.out, "");
}

// --system with invalid UTF-8 (here from a \xHH escape) is refused up front, naming the flag,
// not by the tokenizer at every turn; --system "a\nb" is a newline (llama.cpp's escapes).
TEST_F(CortiqChatTest, SystemTextIsCheckedAfterItsEscapes) {
  const CommandResult bad = Chat("--system 'x\\xff'", "Hi");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("cortiq-chat: --system (after escapes; --no-escape): the text is "
                                 "not valid UTF-8 at byte 1"));
  const CommandResult ok = Chat("--system 'a\\nb' --temp 0 -n 2 --ignore-eos", "Hi");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// /save in one process, /load in a new one: the next turn gives the reply the unbroken chat
// gives (seeded sampling: the generator travels in the file too) and evaluates exactly what the
// unbroken chat's third turn evaluates — the new tokens only, the history taken from the saved
// KV cache.
TEST_F(CortiqChatTest, SaveAndLoadContinueTheConversationInANewProcess) {
  const std::string flags = "-n 8 --ignore-eos --special --temp 0.8 -s 5 --verbose";
  const std::string file = dir_ + "/chat.session";
  const CommandResult unbroken =
      Chat(flags, "Hello there\nTell me a story about the sea\nThanks, and one more\n");
  ASSERT_EQ(unbroken.exit_code, 0) << unbroken.err;
  const std::vector<std::string> replies = absl::StrSplit(unbroken.out, '\n');
  ASSERT_EQ(replies.size(), 4u) << unbroken.out;  // three replies and the end
  const std::vector<TurnCounts> unbroken_counts = ParseTurns(unbroken.err);
  ASSERT_EQ(unbroken_counts.size(), 3u) << unbroken.err;

  const CommandResult first =
      Chat(flags, absl::StrCat("Hello there\nTell me a story about the sea\n/save ", file, "\n"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, replies[0] + "\n" + replies[1] + "\n");
  EXPECT_THAT(first.err, HasSubstr("saved the conversation (2 exchanges, "));

  // A different seed and system message on the command line: the file's conversation and
  // generator replace them.
  const CommandResult second = Chat("-n 8 --ignore-eos --special --temp 0.8 -s 99 --verbose "
                                    "--system Other",
                                    absl::StrCat("/load ", file, "\nThanks, and one more\n"));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.err, HasSubstr(absl::StrCat("loaded ", file, " (2 exchanges, ")));
  EXPECT_EQ(second.out, replies[2] + "\n");
  const std::vector<TurnCounts> counts = ParseTurns(second.err);
  ASSERT_EQ(counts.size(), 1u) << second.err;
  EXPECT_EQ(counts[0].evaluated, unbroken_counts[2].evaluated);
  EXPECT_EQ(counts[0].reused, unbroken_counts[2].reused);
  EXPECT_GT(counts[0].reused, unbroken_counts[0].evaluated + 8);  // both turns' tokens
}

// /save never replaces a file that is not a chat file: the model being chatted with (a mistyped
// path), a document. Both stay as they were and the chat goes on; a chat file is replaced.
TEST_F(CortiqChatTest, SaveRefusesToReplaceOtherFiles) {
  const std::string model = dir_ + "/self.cortiq";
  ASSERT_EQ(std::system(absl::StrCat("cp ", model_, " ", model).c_str()), 0);
  const std::string notes = dir_ + "/notes.txt";
  std::ofstream(notes) << "precious\n";
  const std::string chat_file = dir_ + "/chat.session";
  const std::string input = dir_ + "/input.txt";
  std::ofstream(input, std::ios::binary)
      << absl::StrCat("Hi\n/save ", model, "\n/save ", notes, "\n/save ", chat_file, "\n/save ",
                      chat_file, "\nAgain\n");
  const CommandResult chat = RunCommand(
      absl::StrCat(CORTIQ_CHAT_BINARY, " ", model, " -n 2 --ignore-eos --temp 0 <", input), dir_);
  // Two /save failed: said at the end, status 1 (a script must not think its chat was kept).
  EXPECT_EQ(chat.exit_code, 1) << chat.err;
  EXPECT_THAT(chat.err, HasSubstr("cortiq-chat: 2 /save or /load command(s) failed"));
  EXPECT_THAT(chat.err, HasSubstr(absl::StrCat(model, ": exists and is not a cortiq-chat file")));
  EXPECT_THAT(chat.err, HasSubstr(absl::StrCat(notes, ": exists and is not a cortiq-chat file")));
  EXPECT_EQ(std::system(absl::StrCat("cmp -s ", model_, " ", model).c_str()), 0);
  std::ifstream in(notes);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
            "precious\n");
  EXPECT_THAT(chat.err, HasSubstr(absl::StrCat("to ", chat_file)));
  // The model still runs, and the chat answered both messages.
  EXPECT_EQ(Run("--tokens 2,17 -n 1").exit_code, 0);
  EXPECT_EQ(std::count(chat.out.begin(), chat.out.end(), '\n'), 2) << chat.out;
}

// A damaged file, a file of another model, a missing file and a file that is not a chat are
// refused naming the file, and the session goes on unchanged (the exit status then 1); /save to a missing directory says
// so and leaves nothing; a second /save replaces the file whole.
TEST_F(CortiqChatTest, LoadRefusesDamagedAndForeignFiles) {
  const std::string file = dir_ + "/chat.session";
  ASSERT_EQ(Chat("-n 4 --ignore-eos --temp 0", absl::StrCat("Hello\n/save ", file, "\n")).exit_code,
            0);
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), 100u);
  const std::string damaged = dir_ + "/damaged.session";
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  std::ofstream(damaged, std::ios::binary) << flipped;
  const std::string truncated = dir_ + "/truncated.session";
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  const std::string not_chat = dir_ + "/not_chat.session";
  std::ofstream(not_chat, std::ios::binary) << "hello, world\n";

  // The same conversation saved from another model (tiny-a-bf16: other weights).
  const std::string other = dir_ + "/other.session";
  const CommandResult save_other = RunCommand(
      absl::StrCat(CORTIQ_CHAT_BINARY, " ", ArtifactPath("tiny-a-bf16", "opt"),
                   " -n 4 --ignore-eos --temp 0 <<'EOF'\nHello\n/save ", other, "\nEOF"),
      dir_);
  ASSERT_EQ(save_other.exit_code, 0) << save_other.err;

  const CommandResult fresh = Chat("-n 4 --ignore-eos --temp 0", "Hi\n");
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  const CommandResult chat = Chat(
      "-n 4 --ignore-eos --temp 0",
      absl::StrCat("/load ", damaged, "\n/load ", truncated, "\n/load ", not_chat, "\n/load ",
                   other, "\n/load ", dir_, "/missing.session\n/load\n/save ", dir_,
                   "/no/such/dir/x.session\nHi\n"));
  // Every failed /load and /save is counted in the exit status (the usage message is not).
  EXPECT_EQ(chat.exit_code, 1) << chat.err;
  EXPECT_THAT(chat.err, HasSubstr("cortiq-chat: 6 /save or /load command(s) failed"));
  EXPECT_THAT(chat.err, HasSubstr(absl::StrCat(damaged, ": damaged: checksum mismatch; the "
                                               "conversation is unchanged")));
  EXPECT_THAT(chat.err, HasSubstr(absl::StrCat(truncated, ": damaged")));
  EXPECT_THAT(chat.err, HasSubstr(absl::StrCat(not_chat, ": not a cortiq-chat file")));
  EXPECT_THAT(chat.err, HasSubstr(absl::StrCat(other, ": the state was saved from a different model")));
  EXPECT_THAT(chat.err, HasSubstr(absl::StrCat(dir_, "/missing.session: cannot open")));
  EXPECT_THAT(chat.err, HasSubstr("usage: /load FILE"));
  EXPECT_THAT(chat.err, HasSubstr(absl::StrCat("/save: ", dir_, "/no/such/dir/x.session")));
  EXPECT_EQ(chat.out, fresh.out);  // nothing was loaded: "Hi" starts a new conversation

  // The same model with other KV caches: the cause is the KV type, not another model.
  const CommandResult f16 =
      Chat("-n 4 --ignore-eos --temp 0 --kv-type f16", absl::StrCat("/load ", file, "\n"));
  EXPECT_EQ(f16.exit_code, 1) << f16.err;
  EXPECT_THAT(f16.err, HasSubstr(absl::StrCat(file, ": state saved with f32 KV caches; this "
                                              "session's are f16 (--kv-type)")));

  // Saving again replaces the file with the new conversation.
  ASSERT_EQ(Chat("-n 4 --ignore-eos --temp 0", absl::StrCat("Hello\nAgain\n/save ", file, "\n"))
                .exit_code,
            0);
  const CommandResult reload =
      Chat("-n 4 --ignore-eos --temp 0", absl::StrCat("/load ", file, "\n"));
  EXPECT_THAT(reload.err, HasSubstr("(2 exchanges, ")) << reload.err;
}

}  // namespace
}  // namespace cortiq
