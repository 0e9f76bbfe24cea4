// cortiq-run with text prompts, end to end on the golden tiny-a artifacts (compiled from the
// checkpoints, so they carry tiny-a's tokenizer): greedy -p/-f continuations against the argmax of
// the golden float64 logits; seeded sampling reproducible across thread counts and batch sizes
// and equal to the ids mode; stop strings across token boundaries; <turn|> ends a chat turn; a
// full context is said.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/generation/model_text.h"
#include "runtime/sequence.h"
#include "tests/e2e/golden_data.h"
#include "tests/e2e/subprocess.h"

namespace cortiq {
namespace {

using ::cortiq::testing::CommandResult;
using ::cortiq::testing::RunCommand;
using ::testing::HasSubstr;
using ::testing::Not;

// `text` as one shell word.
std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// The ids cortiq-run --tokens printed ("5,17,3\n").
std::vector<int32_t> ParseIds(const std::string& out) {
  std::vector<int32_t> ids;
  for (absl::string_view id : absl::StrSplit(absl::StripTrailingAsciiWhitespace(out), ',')) {
    int32_t v = 0;
    EXPECT_TRUE(absl::SimpleAtoi(id, &v)) << out;
    ids.push_back(v);
  }
  return ids;
}

int32_t Argmax(const float* row, size_t n) {
  return static_cast<int32_t>(std::max_element(row, row + n) - row);
}

class CortiqRunTextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/cortiq_run_text_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str());
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Writes `text` to a file of the test's directory and returns its path.
  std::string File(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  CommandResult Run(const std::string& args) {
    return RunCommand(absl::StrCat(CORTIQ_RUN_BINARY, " ", args), dir_);
  }

  std::string dir_;
};

struct ModelText {
  std::unique_ptr<Artifact> artifact;
  std::optional<text::Tokenizer> tokenizer;
};

ModelText Load(const std::string& path) {
  ModelText m;
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path);
  EXPECT_TRUE(artifact.ok()) << artifact.status();
  m.artifact = *std::move(artifact);
  absl::StatusOr<text::Tokenizer> tokenizer = LoadArtifactTokenizer(*m.artifact);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  m.tokenizer.emplace(*std::move(tokenizer));
  return m;
}

std::string Decode(const text::Tokenizer& t, const std::vector<int32_t>& ids, bool special) {
  text::DecodeOptions options;
  options.skip_special_tokens = !special;
  absl::StatusOr<std::string> s = t.Decode(ids, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : "";
}

// For every golden case and every prompt prefix whose text encodes back to the same ids (<bos>
// added by cortiq-run), the greedy next token printed by `cortiq-run -f TEXT -n 1 --temp 0` is the
// argmax of the float64 reference logits at the prefix's last position; and a greedy chain of 8
// tokens from the longest such prefix starts with it and equals the ids path.
TEST_F(CortiqRunTextTest, GreedyTextFollowsTheGoldenArgmax) {
  for (const std::string& name : GoldenCaseNames()) {
    const GoldenCase c = LoadGoldenCase(name);
    const std::string artifact = ArtifactPath(c.model, "opt");
    const ModelText m = Load(artifact);
    const text::Tokenizer& t = *m.tokenizer;
    const size_t vocab = t.vocab_size();
    ASSERT_EQ(c.tokens[0], 2) << "golden cases start with <bos>";
    int tested = 0;
    size_t longest = 0;
    for (size_t k = 2; k <= c.tokens.size(); ++k) {
      const std::vector<int32_t> prefix(c.tokens.begin(), c.tokens.begin() + k);
      const std::string text =
          Decode(t, std::vector<int32_t>(prefix.begin() + 1, prefix.end()), true);
      absl::StatusOr<std::vector<int32_t>> encoded = EncodePrompt(t, text);
      if (!encoded.ok() || *encoded != prefix) continue;
      const std::string file = File("prompt.txt", text);
      const CommandResult r = Run(absl::StrCat(artifact, " -f ", file,
                                               " -n 1 --temp 0 --special --ignore-eos "
                                               "--verbose-prompt"));
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_THAT(r.err, HasSubstr(absl::StrCat("prompt: ", k, " tokens\n")));
      const int32_t expected = Argmax(c.logits_ref.data() + (k - 1) * vocab, vocab);
      EXPECT_EQ(r.out, Decode(t, {expected}, true)) << name << " prefix " << k;
      ++tested;
      longest = k;
    }
    EXPECT_GE(tested, 2) << name;
    ASSERT_GT(longest, 0u);

    // The chain: the first token from the golden logits, the rest as the ids mode gives them.
    const std::vector<int32_t> prefix(c.tokens.begin(), c.tokens.begin() + longest);
    const std::string file = File("prompt.txt", Decode(t, {prefix.begin() + 1, prefix.end()}, true));
    const CommandResult text_run =
        Run(absl::StrCat(artifact, " -f ", file, " -n 8 --temp 0 --special --ignore-eos"));
    const CommandResult ids_run = Run(absl::StrCat(artifact, " --tokens ",
                                                   absl::StrJoin(prefix, ","),
                                                   " -n 8 --ignore-eos"));
    ASSERT_EQ(text_run.exit_code, 0) << text_run.err;
    ASSERT_EQ(ids_run.exit_code, 0) << ids_run.err;
    const std::vector<int32_t> chain = ParseIds(ids_run.out);
    ASSERT_EQ(chain.size(), 8u);
    EXPECT_EQ(chain[0], Argmax(c.logits_ref.data() + (longest - 1) * vocab, vocab));
    EXPECT_EQ(text_run.out, Decode(t, chain, true)) << name;
  }
}

// Seeded sampling: the same tokens for any thread count and batch size (prefill in one batch, in
// chunks of 7 or 2, or token by token), in text and in ids mode; another seed differs.
TEST_F(CortiqRunTextTest, SeededSamplingIsReproducible) {
  const std::string artifact = ArtifactPath("tiny-a-f32", "opt");
  const ModelText m = Load(artifact);
  const std::string prompt = "The quick brown fox jumps over the lazy dog";
  const std::string common = absl::StrCat(artifact, " -p ", Quote(prompt),
                                          " -n 24 --ignore-eos -s 1234");
  const CommandResult reference = Run(common + " -t 1");
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  ASSERT_FALSE(reference.out.empty());
  for (const char* variant : {"-t 2", "-t 1 -b 1", "-t 2 -b 7", "-t 1 -b 2", "-t 2 -b 1"}) {
    const CommandResult r = Run(absl::StrCat(common, " ", variant));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, reference.out) << variant;
  }
  // The model (tiny-a) ships no sampling defaults: llama.cpp's (temperature 0.8, top_k 40,
  // top_p 0.95, min_p 0.05) apply, which the ids mode is given explicitly.
  const std::vector<int32_t> ids = *EncodePrompt(*m.tokenizer, prompt);
  const CommandResult by_ids =
      Run(absl::StrCat(artifact, " --tokens ", absl::StrJoin(ids, ","),
                       " -n 24 --ignore-eos -s 1234 --temp 0.8 --top-k 40 -t 2"));
  ASSERT_EQ(by_ids.exit_code, 0) << by_ids.err;
  const std::vector<int32_t> sampled = ParseIds(by_ids.out);
  EXPECT_EQ(Decode(*m.tokenizer, sampled, false), reference.out);
  const CommandResult other = Run(absl::StrCat(artifact, " -p ", Quote(prompt),
                                               " -n 24 --ignore-eos -s 1235"));
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.out, reference.out);
}

// A stop string that spans a token boundary ends the output right before it (nothing of it is
// printed), and stderr names the reason.
TEST_F(CortiqRunTextTest, StopStringsAcrossTokenBoundaries) {
  const std::string artifact = ArtifactPath("tiny-a-f32", "opt");
  const ModelText m = Load(artifact);
  const text::Tokenizer& t = *m.tokenizer;
  const std::string prompt = "Hello world";
  const std::vector<int32_t> ids = *EncodePrompt(t, prompt);
  const CommandResult greedy = Run(absl::StrCat(artifact, " --tokens ", absl::StrJoin(ids, ","),
                                                " -n 30 --ignore-eos"));
  ASSERT_EQ(greedy.exit_code, 0) << greedy.err;
  const std::vector<int32_t> chain = ParseIds(greedy.out);
  const std::string full = Decode(t, chain, false);
  // The first token boundary inside the text with a character on each side.
  std::string stop;
  for (size_t j = 1; j < chain.size() && stop.empty(); ++j) {
    const size_t boundary = Decode(t, {chain.begin(), chain.begin() + j}, false).size();
    if (boundary >= 1 && boundary + 2 <= full.size() &&
        static_cast<unsigned char>(full[boundary - 1]) < 0x80 &&
        static_cast<unsigned char>(full[boundary]) < 0x80 &&
        static_cast<unsigned char>(full[boundary + 1]) < 0x80) {
      stop = full.substr(boundary - 1, 3);
    }
  }
  ASSERT_FALSE(stop.empty()) << full;
  const CommandResult r = Run(absl::StrCat(artifact, " -p ", Quote(prompt),
                                           " -n 30 --temp 0 --ignore-eos --stop ", Quote(stop)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, full.substr(0, full.find(stop))) << "stop " << stop << " in " << full;
  EXPECT_THAT(r.err, HasSubstr("stop: stop string"));
  // -r, llama.cpp's name for it (--reverse-prompt), is the same flag.
  const CommandResult reverse = Run(absl::StrCat(artifact, " -p ", Quote(prompt),
                                                 " -n 30 --temp 0 --ignore-eos -r ", Quote(stop)));
  ASSERT_EQ(reverse.exit_code, 0) << reverse.err;
  EXPECT_EQ(reverse.out, r.out);
  EXPECT_THAT(reverse.err, HasSubstr("stop: stop string"));
}

// A stop string ending in a byte-fallback token (a newline sampled as <0x0A>, which the stream
// decoder holds until the run of byte tokens ends) stops at that token, not up to 16 tokens
// later when the held run is released.
TEST_F(CortiqRunTextTest, StopStringInHeldBackBytesStopsAtItsToken) {
  const std::string artifact = ArtifactPath("tiny-a-f32", "opt");
  const ModelText m = Load(artifact);
  const int32_t newline = *m.tokenizer->TokenToId("<0x0A>");
  const std::string force = absl::StrCat(" --logit-bias ", newline, "+100");
  const CommandResult r =
      Run(absl::StrCat(artifact, " -p Hello -n 30 --ignore-eos --stop ", Quote("\n"), force));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("(1 generated)"));
  EXPECT_THAT(r.err, HasSubstr("stop: stop string"));
  // Written with a backslash, as a shell passes '\n': the escape is processed (as llama.cpp
  // does), unless --no-escape.
  const CommandResult escaped = Run(absl::StrCat(
      artifact, " -p Hello -n 30 --ignore-eos --stop ", Quote("\\n"), force));
  ASSERT_EQ(escaped.exit_code, 0) << escaped.err;
  EXPECT_THAT(escaped.err, HasSubstr("(1 generated)"));
  const CommandResult literal = Run(absl::StrCat(
      artifact, " -p Hello -n 30 --ignore-eos --no-escape --stop ", Quote("\\n"), force));
  ASSERT_EQ(literal.exit_code, 0) << literal.err;
  EXPECT_THAT(literal.err, HasSubstr("(30 generated)"));
  // Two newlines in a row: the first is held (it may start the stop), the second completes it.
  const CommandResult two = Run(absl::StrCat(artifact, " -p Hello -n 30 --ignore-eos --stop ",
                                             Quote("\n\n"), force));
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(two.out, "");
  EXPECT_THAT(two.err, HasSubstr("(2 generated)"));
}

// In the chat format a sampled <turn|> ends the turn even though tiny-a's generation config lists
// only <eos>; outside it, <turn|> is an ordinary (special) token.
TEST_F(CortiqRunTextTest, TurnEndStopsAChatTurn) {
  const std::string artifact = ArtifactPath("tiny-a-f32", "opt");
  const ModelText m = Load(artifact);
  const int32_t turn_end = *m.tokenizer->TokenToId("<turn|>");
  const std::string force = absl::StrCat(" --logit-bias ", turn_end, "+100");
  const CommandResult chat = Run(absl::StrCat(artifact, " --chat -p Hello -n 5", force));
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  EXPECT_EQ(chat.out, "");
  EXPECT_THAT(chat.err, HasSubstr("(1 generated)"));
  EXPECT_THAT(chat.err, HasSubstr("stop: end of generation"));
  const CommandResult plain = Run(absl::StrCat(artifact, " -p Hello -n 3 --special", force));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, "<turn|><turn|><turn|>");
  const CommandResult quiet = Run(absl::StrCat(artifact, " -p Hello -n 3", force));
  EXPECT_EQ(quiet.out, "");  // special tokens are not printed without --special
  EXPECT_THAT(quiet.err, HasSubstr("stop: token limit"));
}

// The prompt (5 tokens with <bos>) leaves 5 positions of a 10-position context: 5 sampled tokens
// are evaluated, a 6th is printed, and then the context is full.
TEST_F(CortiqRunTextTest, SaysWhenTheContextIsFull) {
  const std::string artifact = ArtifactPath("tiny-a-f32", "opt");
  const CommandResult r = Run(absl::StrCat(artifact, " -p 'Hello world' -c 10 --ignore-eos"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("cortiq-run: context full (10 positions): stopped after 6 "
                               "generated tokens"));
  EXPECT_THAT(r.err, HasSubstr("stop: context full"));
  const CommandResult too_long = Run(absl::StrCat(artifact, " -p 'Hello world' -c 4"));
  EXPECT_EQ(too_long.exit_code, 1);
  EXPECT_THAT(too_long.err, HasSubstr("context full: the prompt has 5 tokens, the context holds 4"));
}

// -f reads a pipe or FIFO to its end like a file (-f /dev/stdin, -f -, -f <(command)): the same
// continuation as the same text given with -p.
TEST_F(CortiqRunTextTest, PromptFileMayBeAPipe) {
  const std::string artifact = ArtifactPath("tiny-a-f32", "opt");
  const std::string flags = " -n 4 --temp 0 --ignore-eos -t 1";
  const CommandResult given = Run(absl::StrCat(artifact, " -p 'Hello world'", flags));
  ASSERT_EQ(given.exit_code, 0) << given.err;
  const CommandResult piped =
      RunCommand(absl::StrCat("printf 'Hello world' | ", CORTIQ_RUN_BINARY, " ", artifact,
                              " -f /dev/stdin", flags),
                 dir_);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, given.out);
  const CommandResult dash =  // -f - is stdin, as in llama.cpp
      RunCommand(absl::StrCat("printf 'Hello world' | ", CORTIQ_RUN_BINARY, " ", artifact,
                              " -f -", flags),
                 dir_);
  ASSERT_EQ(dash.exit_code, 0) << dash.err;
  EXPECT_EQ(dash.out, given.out);
  const std::string fifo = dir_ + "/prompt.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const CommandResult from_fifo =
      RunCommand(absl::StrCat("sh -c '(sleep 0.2; printf \"Hello world\" > ", fifo, ") & exec ",
                              CORTIQ_RUN_BINARY, " ", artifact, " -f ", fifo, flags, "'"),
                 dir_);
  ASSERT_EQ(from_fifo.exit_code, 0) << from_fifo.err;
  EXPECT_EQ(from_fifo.out, given.out);
}

// A prompt file larger than the context could hold (256 bytes per position) is refused before it
// is read or encoded: a 100 MB file once cost 30 s and 3 GB to say "context full".
TEST_F(CortiqRunTextTest, PromptFileLargerThanTheContextIsRefusedUnread) {
  const std::string artifact = ArtifactPath("tiny-a-f32", "opt");
  const std::string big = File("big.txt", std::string((uint64_t{1} << 20) + 1, 'a'));
  const CommandResult r = Run(absl::StrCat(artifact, " -f ", big, " -c 64 -n 1"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("big.txt: 1048577 bytes, more than 1048576: more text than a "
                               "prompt in a context of 64 positions can hold"));
  // A larger context takes the same file (it then fits the limit and is just too long).
  const CommandResult larger = Run(absl::StrCat(artifact, " -f ", big, " -c 8192 -n 1"));
  EXPECT_EQ(larger.exit_code, 1);
  EXPECT_THAT(larger.err, HasSubstr("context full: the prompt has"));
  const CommandResult piped =
      RunCommand(absl::StrCat("head -c 2000000 /dev/zero | tr '\\0' a | ", CORTIQ_RUN_BINARY,
                              " ", artifact, " -f /dev/stdin -c 64 -n 1"),
                 dir_);
  EXPECT_EQ(piped.exit_code, 1);
  EXPECT_THAT(piped.err, HasSubstr("/dev/stdin: more than 1048576 bytes: more text than a prompt in a context of 64 positions"));
}

// Invalid UTF-8 is reported against the flag or file that holds it, at its own byte offset, not
// at an offset of the rendered chat prompt.
TEST_F(CortiqRunTextTest, InvalidUtf8NamesItsSource) {
  const std::string artifact = ArtifactPath("tiny-a-f32", "opt");
  const CommandResult chat = Run(absl::StrCat(artifact, " --chat -p \"$(printf 'ab\\377')\" -n 1"));
  EXPECT_EQ(chat.exit_code, 1);
  EXPECT_THAT(chat.err, HasSubstr("cortiq-run: -p (after escapes; --no-escape): the text is not "
                                  "valid UTF-8 at byte 2"));
  // A \xHH escape can make it; --no-escape names the flag alone.
  const CommandResult escape = Run(absl::StrCat(artifact, " -p 'ab\\xC3' -n 1"));
  EXPECT_EQ(escape.exit_code, 1);
  EXPECT_THAT(escape.err, HasSubstr("-p (after escapes; --no-escape): the text is not valid UTF-8 "
                                    "at byte 2"));
  const CommandResult literal =
      Run(absl::StrCat(artifact, " --no-escape -p \"$(printf 'ab\\377')\" -n 1"));
  EXPECT_EQ(literal.exit_code, 1);
  EXPECT_THAT(literal.err, HasSubstr("cortiq-run: -p: the text is not valid UTF-8 at byte 2"));
  const std::string bad = File("bad.txt", "x\xffy");
  const CommandResult file = Run(absl::StrCat(artifact, " -f ", bad, " -n 1"));
  EXPECT_EQ(file.exit_code, 1);
  EXPECT_THAT(file.err, HasSubstr("bad.txt: the text is not valid UTF-8 at byte 1"));
  const CommandResult system =
      Run(absl::StrCat(artifact, " -p hi --system \"$(printf 'ok\\303')\" -n 1"));
  EXPECT_EQ(system.exit_code, 1);
  EXPECT_THAT(system.err,
              HasSubstr("--system (after escapes; --no-escape): the text is not valid UTF-8 at "
                        "byte 2"));
}

// -c beyond the model's max_position_embeddings is clamped, and said in one line on stderr.
TEST_F(CortiqRunTextTest, SaysWhenTheContextIsClamped) {
  const std::string artifact = ArtifactPath("tiny-a-f32", "opt");
  const ModelText m = Load(artifact);
  const int64_t max = m.artifact->plan().model.max_position_embeddings;
  const CommandResult r =
      Run(absl::StrCat(artifact, " -p Hi -n 1 --temp 0 -c ", max + 1000));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(
                         "cortiq-run: a context of ", max + 1000, " positions (-c, default 4096) "
                         "is more than the model's max_position_embeddings (", max,
                         "): the context is clamped to ", max, " positions\n")));
  const CommandResult fits = Run(absl::StrCat(artifact, " -p Hi -n 1 --temp 0 -c 64"));
  ASSERT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_THAT(fits.err, Not(HasSubstr("clamped")));
  // -b beyond the compiled maximum batch: said too (it was taken silently).
  const int64_t max_batch = m.artifact->plan().max_batch;
  const CommandResult batch =
      Run(absl::StrCat(artifact, " -p Hi -n 1 --temp 0 -b ", max_batch + 1));
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_THAT(batch.err, HasSubstr(absl::StrCat(
                             "cortiq-run: -b ", max_batch + 1, " is more than the artifact's "
                             "compiled maximum batch (", max_batch, ", cortiq-compile "
                             "--max-batch): prompt batches of ", max_batch, " tokens\n")));
  EXPECT_THAT(fits.err, Not(HasSubstr("compiled maximum batch")));
}

// --verbose-prompt shows each piece as the tokenizer's text (UTF-8 such as "▁" as it is), not
// as octal escapes.
TEST_F(CortiqRunTextTest, VerbosePromptPrintsPiecesAsText) {
  const std::string artifact = ArtifactPath("tiny-a-f32", "opt");
  const ModelText m = Load(artifact);
  const std::string prompt = "Hello world é";
  const CommandResult r =
      Run(absl::StrCat(artifact, " -p '", prompt, "' -n 1 --temp 0 --verbose-prompt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<std::vector<int32_t>> ids = EncodePrompt(*m.tokenizer, prompt);
  ASSERT_TRUE(ids.ok()) << ids.status();
  bool non_ascii = false;
  for (const int32_t id : *ids) {
    absl::StatusOr<std::string_view> piece = m.tokenizer->TokenString(id);
    ASSERT_TRUE(piece.ok()) << piece.status();
    for (const char c : *piece) non_ascii |= static_cast<unsigned char>(c) >= 0x80;
    EXPECT_THAT(r.err, HasSubstr(absl::StrFormat("%6d -> '%s'\n", id, std::string(*piece))));
  }
  EXPECT_TRUE(non_ascii) << "the prompt should have a piece with a non-ASCII character";
  EXPECT_EQ(r.err.find("\\3"), std::string::npos) << r.err;
}

// Ctrl-C during the generation stops it, says so, prints the timings and exits with 130 (as
// llama.cpp's tools and shells report SIGINT), the text so far kept on stdout.
TEST_F(CortiqRunTextTest, SigintStopsWithStatus130) {
  ::cortiq::testing::Child child({CORTIQ_RUN_BINARY, ArtifactPath("tiny-a-f32", "opt"), "-p",
                                  "Hello", "-c", "100000", "--ignore-eos", "-t", "1"});
  ASSERT_TRUE(child.WaitForOutputBytes(8, 30)) << child.err();
  child.Signal(SIGINT);
  EXPECT_EQ(child.Wait(30), 130) << child.err();
  EXPECT_THAT(child.err(), HasSubstr("cortiq-run: interrupted after "));
  EXPECT_THAT(child.err(), HasSubstr("stop: interrupted"));
  EXPECT_GE(child.out().size(), 8u);
}

// On a terminal (a pty from script(1)) the thoughts of `--chat` are faint: each run of them
// between SGR 2 and SGR 0, their text the reasoning an independent split of the --special output
// gives (Gemma 4's format: the text between <|channel> and <channel|>, its first line the
// channel's name); NO_COLOR gives no escape codes. The cortiq-synth model has Gemma 4's markers
// (100, 101); the logit biases leave the markers, "a" (429) and "\n" (107) likely.
TEST_F(CortiqRunTextTest, ThoughtsAreFaintOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  const std::string model = std::string(CORTIQ_ARTIFACT_DIR) + "/synth-tiny.cortiq";
  const std::string args = absl::StrCat(
      model, " -t 1 --chat -p Hi --temp 1 -n 40 --ignore-eos -l 100+100 -l 101+100 -l 429+100",
      " -l 107+100");
  int runs_seen = 0;
  for (const int seed : {5, 6, 7}) {
    SCOPED_TRACE(seed);
    const CommandResult raw = Run(absl::StrCat(args, " -s ", seed, " --special"));
    ASSERT_EQ(raw.exit_code, 0) << raw.err;
    // The reasoning, by the template's rule.
    std::string reasoning;
    bool inside = false, name = false;
    for (size_t at = 0; at < raw.out.size();) {
      if (raw.out.compare(at, 10, "<|channel>") == 0) {
        if (!inside) inside = name = true;
        at += 10;
      } else if (raw.out.compare(at, 10, "<channel|>") == 0) {
        inside = false;
        at += 10;
      } else {
        const char c = raw.out[at++];
        if (inside && name) {
          name = c != '\n';
        } else if (inside) {
          reasoning += c;
        }
      }
    }
    const std::string file = dir_ + "/tty.txt";
    const auto on_tty = [&](const std::string& env) {
      const int status = std::system(absl::StrCat("script -qec '", env, CORTIQ_RUN_BINARY, " ",
                                                  args, " -s ", seed, " 2>/dev/null' /dev/null >",
                                                  file).c_str());
      EXPECT_EQ(status, 0);
      std::ifstream in(file, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), {});
      return absl::StrReplaceAll(text, {{"\r\n", "\n"}});
    };
    const std::string tty = on_tty("");
    std::string faint;
    size_t at = 0, opened = 0;
    while ((at = tty.find("\x1b[2m", at)) != std::string::npos) {
      const size_t end = tty.find("\x1b[0m", at);
      ASSERT_NE(end, std::string::npos) << tty;  // every faint run is closed
      faint += tty.substr(at + 4, end - at - 4);
      at = end + 4;
      ++opened;
    }
    EXPECT_EQ(faint, reasoning) << tty;
    if (!reasoning.empty()) EXPECT_GT(opened, 0u);
    runs_seen += static_cast<int>(opened);
    EXPECT_EQ(on_tty("NO_COLOR=1 ").find('\x1b'), std::string::npos);
  }
  EXPECT_GT(runs_seen, 0);
}

}  // namespace
}  // namespace cortiq
