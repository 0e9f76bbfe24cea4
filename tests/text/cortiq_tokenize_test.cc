// cortiq-tokenize end to end: the built binary on the golden tiny checkpoint (its tokenizer.json,
// its directory, its GGUF), expected ids from tokenizers.js (tests/data/tokenizer/tiny_*_ref) and
// llama.cpp's llama-tokenize on the same GGUF (which agree for these inputs).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace {

using testing::HasSubstr;

const std::string kBin = CORTIQ_TOKENIZE_BIN;
const std::string kModels = std::string(CORTIQ_TEST_DATA_DIR) + "/models/";

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `args` (already shell-quoted) and captures stdout, stderr and the exit code.
Result RunTool(const std::string& args) {
  // Named per test and process: ctest -j runs the cases of this binary as parallel processes
  // sharing TempDir().
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string err_path =
      absl::StrCat(testing::TempDir(), "/stderr-", test != nullptr ? test->name() : "none", "-",
                   getpid(), ".txt");
  const std::string command = absl::StrCat(kBin, " ", args, " 2>", err_path);
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) r.out.append(buffer, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  r.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  return r;
}

std::string WriteFile(const std::string& name, const std::string& contents) {
  const std::string path = absl::StrCat(testing::TempDir(), "/", getpid(), "-", name);
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(CortiqTokenize, HelpExitsZero) {
  for (const char* flag : {"-h", "--help"}) {
    const Result r = RunTool(flag);
    EXPECT_EQ(r.code, 0);
    EXPECT_THAT(r.out, HasSubstr("usage: cortiq-tokenize SOURCE"));
  }
}

TEST(CortiqTokenize, EncodesFromEverySource) {
  // tokenizers.js and llama-tokenize give these ids for the text.
  const std::string expected =
      "361,394,392,510,345,503,270,486,328,355,327,332,301,282,270,456,270,422,270,101,504,270,5,"
      "288,276,325,270,209,183\n";
  const std::string text = "'The quick brown fox jumps over the lazy dog. Hello World! <|turn>user é'";
  for (const std::string source : {kModels + "tiny-a-f32/tokenizer.json", kModels + "tiny-a-f32",
                                    kModels + "tiny-a-f32.gguf", kModels + "tiny-a-bf16.gguf"}) {
    SCOPED_TRACE(source);
    const Result r = RunTool(source + " --text " + text);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, expected);
  }
  const Result special = RunTool(kModels + "tiny-a-f32 --text 'Hello world' --add-special");
  EXPECT_EQ(special.out, "2,422,331,354,380\n");
  const std::string file = WriteFile("text.txt", "Hello world");
  EXPECT_EQ(RunTool(kModels + "tiny-a-f32 --text-file " + file).out, "422,331,354,380\n");
  // llama-tokenize's spelling (-m SOURCE -p TEXT, -f FILE), and stdin.
  EXPECT_EQ(RunTool("-m " + kModels + "tiny-a-f32 -p 'Hello world'").out, "422,331,354,380\n");
  EXPECT_EQ(RunTool("-m " + kModels + "tiny-a-f32 -f " + file).out, "422,331,354,380\n");
  EXPECT_EQ(RunTool(kModels + "tiny-a-f32 --text-file - < " + file).out, "422,331,354,380\n");
  EXPECT_EQ(RunTool(kModels + "tiny-a-f32 --stdin < " + file).out, "422,331,354,380\n");
  // An empty text is a mode too (no ids).
  const Result empty = RunTool(kModels + "tiny-a-f32 --text ''");
  EXPECT_EQ(empty.code, 0) << empty.err;
  EXPECT_EQ(empty.out, "\n");
}

TEST(CortiqTokenize, DecodesByteForByte) {
  const Result r = RunTool(kModels + "tiny-a-f32 --decode 2,422,331,354,380,209,183");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "<bos>Hello world\xC3\xA9");
  EXPECT_EQ(RunTool(kModels + "tiny-a-f32 --decode 2,422 --skip-special").out, "Hello");
  const Result pieces = RunTool(kModels + "tiny-a-f32 --decode 422,270,209 --pieces");
  EXPECT_EQ(pieces.out, "422\tHello\n270\t\xE2\x96\x81\n209\t<0xC3>\n");
}

TEST(CortiqTokenize, BatchPrintsOneArrayPerLine) {
  const std::string batch = WriteFile("batch.jsonl", "\"Hello world\"\n\"\"\n\"\\u00e9\"\n");
  const Result r = RunTool(kModels + "tiny-a-f32 --batch " + batch);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "[422,331,354,380]\n[]\n[209,183]\n");
  const std::string bad = WriteFile("bad.jsonl", "\"ok\"\nnot json\n");
  const Result e = RunTool(kModels + "tiny-a-f32 --batch " + bad);
  EXPECT_EQ(e.code, 1);
  EXPECT_THAT(e.err, HasSubstr("bad.jsonl:2: not a JSON string"));
}

TEST(CortiqTokenize, RendersChat) {
  const std::string chat = WriteFile(
      "chat.json", R"([{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}])");
  const Result text = RunTool(kModels + "tiny-a-f32 --chat " + chat + " --add-generation-prompt");
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out,
            "<bos><|turn>system\nBe brief.<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\n");
  const Result thinking = RunTool(kModels + "tiny-a-f32 --chat " + chat + " --thinking");
  EXPECT_EQ(thinking.out,
            "<bos><|turn>system\n<|think|>\nBe brief.<turn|>\n<|turn>user\nHi<turn|>\n");
  const Result ids = RunTool(kModels + "tiny-a-f32 --chat " + chat + " --add-generation-prompt --ids");
  EXPECT_EQ(ids.code, 0) << ids.err;
  // <bos> <|turn> and <turn|> are single tokens (2, 5, 6).
  EXPECT_THAT(ids.out, testing::StartsWith("2,5,"));
}

TEST(CortiqTokenize, Info) {
  const Result r = RunTool(kModels + "tiny-a-f32 --info");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("tokenizer: 512 tokens, 189 merges (BPE, byte_fallback, fuse_unk), "
                               "14 added tokens (14 special)"));
  EXPECT_THAT(r.out, HasSubstr("normalizer: Replace; pre_tokenizer: none; decoder: "
                               "Sequence(Replace, ByteFallback, Fuse)"));
  EXPECT_THAT(r.out, HasSubstr("special: bos 2 \"<bos>\", eos 1 \"<eos>\", pad 0 \"<pad>\", unk 3 "
                               "\"<unk>\""));
  EXPECT_THAT(r.out, HasSubstr("generation: stop on 1\n"));
  EXPECT_THAT(r.out, HasSubstr("chat template: none shipped"));
  const Result gguf = RunTool(kModels + "tiny-a-f32.gguf --info");
  EXPECT_THAT(gguf.out, HasSubstr("generation: stop on 1, 6\n"));  // eos and <turn|>
}

TEST(CortiqTokenize, ErrorsNameTheProblem) {
  Result r = RunTool(kModels + "tiny-a-f32 --decode 1,512");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("token id 512 is out of range [0, 512)"));
  r = RunTool(kModels + "tiny-a-f32 --decode 1,,2");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--decode: entry 1 of '1,,2' is empty"));
  r = RunTool(kModels + "tiny-a-f32 --decode 1,x");
  EXPECT_THAT(r.err, HasSubstr("'x' is not an integer"));
  r = RunTool(kModels + "tiny-a-f32 --frobnicate");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --frobnicate (see --help)"));
  r = RunTool(kModels + "tiny-a-f32 --text a --decode 1");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--text and --decode cannot be combined"));
  r = RunTool(kModels + "tiny-a-f32 -m " + kModels + "tiny-a-f32 --text a");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("the source is given by -m/--model; unexpected argument"));
  r = RunTool(kModels + "tiny-a-f32");
  EXPECT_THAT(r.err, HasSubstr("missing mode"));
  r = RunTool(kModels + "missing-dir/tokenizer.json --text x");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("missing-dir/tokenizer.json"));
  const std::string bad = WriteFile("bad_tokenizer.json", R"({"model": {"type": "WordPiece"}})");
  r = RunTool(bad + " --text x");
  EXPECT_THAT(r.err, HasSubstr("model.type: \"WordPiece\" is not supported"));
  r = RunTool(kModels + "tiny-a-f32 --text-file " + WriteFile("invalid.txt", "ok\xff"));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("not valid UTF-8 at byte 2"));
  // An empty or damaged MODEL.cortiq is named as an artifact (it read as "malformed JSON:
  // tokenizer.json is empty").
  const std::string empty = WriteFile("empty.cortiq", "");
  r = RunTool(empty + " --text x");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr(empty + ": not a cortiq artifact (0 bytes)"));
}

// The "done when" of the tokenizer: the binary, on the real 262,144-token Gemma 3 tokenizer.json,
// gives tokenizers.js's ids for the written corpus, the random strings and the held-out slices
// (tests/tools/reference/make_heldout.py: text of files found on a Debian machine, ~200
// languages of gettext catalogs, code, man pages, licenses; nobody looked at it while the
// tokenizer was written), in one --batch load each.
TEST(CortiqTokenize, Gemma3BatchMatchesTokenizersJs) {
  const std::string data = std::string(CORTIQ_TEST_DATA_DIR) + "/tokenizer/";
  for (const char* corpus : {"corpus", "random", "heldout"}) {
    SCOPED_TRACE(corpus);
    const Result r = RunTool(absl::StrCat(CORTIQ_GEMMA3_TOKENIZER_DIR, "/tokenizer.json --batch ",
                                          data, corpus, ".jsonl"));
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream ref_file(absl::StrCat(data, "gemma3_", corpus, "_ref.jsonl"));
    std::vector<std::string> expected;
    for (std::string line; std::getline(ref_file, line);) {
      // {"ids":[...],"ids_special":[...],"decoded":"..."}: the ids array, spaces removed.
      const size_t begin = line.find("[");
      const size_t end = line.find("]", begin);
      ASSERT_NE(end, std::string::npos) << line;
      expected.push_back(line.substr(begin, end - begin + 1));
    }
    const std::vector<std::string> got = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
    ASSERT_EQ(got.size(), expected.size());
    ASSERT_GT(expected.size(), 80u);
    size_t mismatches = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (absl::StrReplaceAll(got[i], {{" ", ""}}) != expected[i]) {
        if (++mismatches <= 3) ADD_FAILURE() << "line " << i + 1 << ": " << got[i].substr(0, 200);
      }
    }
    EXPECT_EQ(mismatches, 0u);
  }
}

}  // namespace
}  // namespace cortiq
