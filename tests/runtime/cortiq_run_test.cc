// End-to-end tests of tools/cortiq-run: runs the binary on a toy artifact and
// checks the generated ids, the logits/layer dumps (against an in-process
// Session) and that every bad input gives "cortiq-run: <message>" and exit
// status 1.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/matmul_bf16_activations.h"
#include "ops/matmul_q8_activations.h"
#include "runtime/artifact.h"
#include "runtime/session.h"
#include "tests/runtime/toy_model.h"

namespace cortiq {
namespace {

using ::cortiq::testing::BuildToyModel;
using ::cortiq::testing::ToyConfig;
using ::cortiq::testing::ToyLayer;
using ::cortiq::testing::ToyModel;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<float> ReadFloats(const std::string& path) {
  const std::string bytes = ReadText(path);
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  EXPECT_EQ(bytes.size() % 4, 0u);
  return v;
}

struct RunResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
};

class CortiqRunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(::testing::TempDir() + "/cortiq_run_test_" +
                           std::to_string(getpid()));
    mkdir(dir_->c_str(), 0755);
    ToyConfig config;
    config.format = WeightFormat::kBF16;
    config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1},
                     ToyLayer{true, 3, 0}};
    toy_ = new ToyModel(BuildToyModel(config));
    model_ = new std::string(*dir_ + "/toy.cortiq");
    ASSERT_TRUE(WriteArtifact(*model_, toy_->plan, [](size_t i, uint8_t* dst) {
                  return toy_->Fill(i, dst);
                }).ok());
  }
  static void TearDownTestSuite() {
    std::system(absl::StrCat("rm -rf '", *dir_, "'").c_str());
    delete toy_;
    delete model_;
    delete dir_;
  }

  // Runs cortiq-run with `args` (shell syntax).
  static RunResult Run(const std::string& args) {
    const std::string out = *dir_ + "/stdout", err = *dir_ + "/stderr";
    // The timeout turns a hang (e.g. blocking on a FIFO) into a failure (exit 124).
    const int status = std::system(
        absl::StrCat("timeout 60 ", CORTIQ_RUN_BINARY, " ", args, " >", out, " 2>", err)
            .c_str());
    RunResult r;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    r.out = ReadText(out);
    r.err = ReadText(err);
    return r;
  }

  // Expects a clean failure: exit 1 and one "cortiq-run: ..." message
  // containing `expected`.
  static void ExpectError(const std::string& args,
                          const std::string& expected) {
    const RunResult r = Run(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.err;
    EXPECT_THAT(r.err, StartsWith("cortiq-run: ")) << args;
    EXPECT_THAT(r.err, HasSubstr(expected)) << args;
  }

  // Greedy ids and per-position logits/taps from an in-process session.
  struct Expected {
    std::vector<int32_t> generated;
    std::vector<float> prompt_logits;        // [T, vocab]
    std::vector<std::vector<float>> layers;  // per tap: [positions, hidden]
  };
  static Expected Reference(const std::vector<int32_t>& prompt, int n_predict) {
    Expected e;
    absl::StatusOr<std::unique_ptr<Session>> s = Session::CreateFromPlan(
        toy_->plan, toy_->weights(), toy_->section_bytes, {});
    EXPECT_TRUE(s.ok());
    e.layers.resize(toy_->plan.taps.size());
    const auto eval = [&](int32_t t) {
      EXPECT_TRUE((*s)->Eval(t, true).ok());
      for (size_t i = 0; i < e.layers.size(); ++i) {
        e.layers[i].insert(e.layers[i].end(), (*s)->tap(i).begin(),
                           (*s)->tap(i).end());
      }
    };
    for (int32_t t : prompt) {
      eval(t);
      e.prompt_logits.insert(e.prompt_logits.end(), (*s)->logits().begin(),
                             (*s)->logits().end());
    }
    for (int i = 0; i < n_predict; ++i) {
      absl::Span<const float> l = (*s)->logits();
      const int32_t next = static_cast<int32_t>(
          std::max_element(l.begin(), l.end()) - l.begin());
      e.generated.push_back(next);
      if (i + 1 < n_predict) eval(next);
    }
    return e;
  }

  static std::string* dir_;
  static std::string* model_;
  static ToyModel* toy_;
};

std::string* CortiqRunTest::dir_ = nullptr;
std::string* CortiqRunTest::model_ = nullptr;
ToyModel* CortiqRunTest::toy_ = nullptr;

TEST_F(CortiqRunTest, GeneratesGreedyTokens) {
  const RunResult r =
      Run(absl::StrCat(*model_, " --tokens 2,17,300 --n-predict 5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, absl::StrJoin(Reference({2, 17, 300}, 5).generated, ",") + "\n");
  // Timings on stderr, as llama.cpp prints them: 5 sampled tokens, 4 of them evaluated.
  EXPECT_THAT(r.err, HasSubstr("       load time = "));
  EXPECT_THAT(r.err, HasSubstr(" ms /     3 tokens ("));
  EXPECT_THAT(r.err, HasSubstr("       eval time = "));
  EXPECT_THAT(r.err, HasSubstr(" ms /     4 runs   ("));
  EXPECT_THAT(r.err, HasSubstr("first token time = "));
  EXPECT_THAT(r.err, HasSubstr("(5 generated)"));
  EXPECT_THAT(r.err, HasSubstr("stop: token limit"));
}

TEST_F(CortiqRunTest, ModelFlagHelpAndVersion) {
  const RunResult a = Run(absl::StrCat("-m ", *model_, " --tokens 2,17,300 -n 5 -t 2 -c 64"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, absl::StrJoin(Reference({2, 17, 300}, 5).generated, ",") + "\n");
  for (const char* help : {"-h", "--help"}) {
    const RunResult h = Run(help);
    EXPECT_EQ(h.exit_code, 0);
    EXPECT_THAT(h.out, StartsWith("usage: cortiq-run MODEL.cortiq"));
    EXPECT_THAT(h.out, HasSubstr("  -n, --n-predict N"));
    EXPECT_THAT(h.out, HasSubstr("      --repeat-last-n N"));
    EXPECT_THAT(h.out, ::testing::Not(HasSubstr("n_predict")));
    EXPECT_THAT(h.out, ::testing::Not(HasSubstr(".cc")));
  }
  const RunResult v = Run("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_THAT(v.out, StartsWith("cortiq-run 0."));
  EXPECT_THAT(v.out, HasSubstr(" build"));
  EXPECT_THAT(v.out, ::testing::Not(HasSubstr("Debug build")));
}

// The context holds 4 positions: 3 prompt tokens, then one sampled token fills it (it cannot be
// evaluated), and the run says so on stderr.
TEST_F(CortiqRunTest, StopsAtTheContextLimitAndSaysSo) {
  const RunResult r = Run(absl::StrCat(*model_, " --tokens 2,17,300 -n 10 -c 4"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<int32_t> expected = Reference({2, 17, 300}, 2).generated;
  EXPECT_EQ(r.out, absl::StrJoin(expected, ",") + "\n");
  EXPECT_THAT(r.err, HasSubstr("cortiq-run: context full (4 positions): stopped after 2 "
                               "generated tokens"));
  EXPECT_THAT(r.err, HasSubstr("stop: context full"));
}

TEST_F(CortiqRunTest, FlagSpellingsAndThreadsAgree) {
  const RunResult a =
      Run(absl::StrCat(*model_, " --tokens=2,5,9 --n-predict=4"));
  const RunResult b =
      Run(absl::StrCat("--n_predict 4 --tokens ' 2, 5 ,9' ", *model_));
  const RunResult c =
      Run(absl::StrCat(*model_, " --tokens 2,5,9 --n-predict 4 --threads 2"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const std::string ids =
      absl::StrJoin(Reference({2, 5, 9}, 4).generated, ",") + "\n";
  EXPECT_THAT(a.out, StartsWith(ids));
  EXPECT_THAT(b.out, StartsWith(ids));
  EXPECT_THAT(c.out, StartsWith(ids));
}

TEST_F(CortiqRunTest, NoPredictionPrintsNoIdLine) {
  const RunResult r = Run(absl::StrCat(*model_, " --tokens 2 -n 0"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr(" ms /     1 tokens ("));
}

TEST_F(CortiqRunTest, DumpsLogitsOfEveryPromptPosition) {
  const std::string file = *dir_ + "/logits.f32";
  const std::vector<int32_t> prompt = {2, 40, 41, 1000, 7, 7, 7};
  const RunResult r =
      Run(absl::StrCat(*model_, " --tokens ", absl::StrJoin(prompt, ","),
                       " --n-predict 2 --dump-logits ", file));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<float> logits = ReadFloats(file);
  EXPECT_EQ(logits.size(),
            prompt.size() * static_cast<size_t>(toy_->config.vocab));
  EXPECT_EQ(logits, Reference(prompt, 2).prompt_logits);
}

TEST_F(CortiqRunTest, DumpsEveryTapAtEveryEvaluatedPosition) {
  const std::string layers = *dir_ + "/layers";
  const std::vector<int32_t> prompt = {2, 3, 4, 5};
  const RunResult r =
      Run(absl::StrCat(*model_, " --tokens ", absl::StrJoin(prompt, ","),
                       " --n-predict 3 --dump-layers ", layers));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Expected e = Reference(prompt, 3);
  for (size_t i = 0; i < toy_->plan.taps.size(); ++i) {
    const std::vector<float> dump =
        ReadFloats(absl::StrCat(layers, "/", toy_->plan.taps[i].name, ".f32"));
    // 4 prompt positions + 2 evaluated generated tokens (the last one is never
    // evaluated).
    EXPECT_EQ(dump.size(), 6u * static_cast<size_t>(toy_->config.hidden));
    EXPECT_EQ(dump, e.layers[i]) << toy_->plan.taps[i].name;
  }
}

// An opt-in --prefill-activations with no fast kernel on this CPU is said on stderr (the
// portable kernel is slower than the exact default); with one, nothing is said.
TEST_F(CortiqRunTest, SlowOptInPrefillActivationsAreSaid) {
  struct Case {
    const char* flag;
    bool portable;
  };
  const Case cases[] = {
      {"q8_0", ops::DispatchedQ8ActivationsPath() == ops::Q8ActivationsPath::kPortable},
      {"bf16", ops::DispatchedBF16ActivationsPath() == ops::BF16ActivationsPath::kPortable}};
  for (const Case& c : cases) {
    const RunResult r =
        Run(absl::StrCat(*model_, " --tokens 2,3 -n 1 --prefill-activations ", c.flag));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string note = absl::StrCat("cortiq-run: --prefill-activations ", c.flag,
                                          " has no fast kernel on this CPU");
    if (c.portable) {
      EXPECT_THAT(r.err, HasSubstr(note)) << r.err;
    } else {
      EXPECT_THAT(r.err, Not(HasSubstr(note))) << r.err;
    }
  }
  const RunResult exact = Run(absl::StrCat(*model_, " --tokens 2,3 -n 1"));
  EXPECT_EQ(exact.exit_code, 0) << exact.err;
  EXPECT_THAT(exact.err, Not(HasSubstr("no fast kernel")));
}

TEST_F(CortiqRunTest, BadInputsFailCleanly) {
  const std::string& m = *model_;
  ExpectError(m, "no prompt (or an empty one): give -p TEXT, -f FILE or --tokens IDS");
  ExpectError(m + " -p ''", "no prompt (or an empty one)");
  ExpectError(m + " --tokens ''", "no prompt");
  ExpectError(m + " --tokens ' '", "--tokens is empty");
  ExpectError(m + " --tokens 2 -p hi", "give one prompt: -p, -f or --tokens, not several");
  ExpectError(m + " -p hi", "the model has no tokenizer, so it takes token ids only");
  ExpectError(m + " -p hi", "(--tokens IDS runs it on ids)");
  ExpectError(m + " --tokens 2 --chat", "--chat, --system and --thinking take a text prompt");
  ExpectError(m + " --tokens 2 --stop x", "the model has no tokenizer");
  ExpectError(m + " --tokens 2 --temp -1", "--temp = -1 must be >= 0");
  ExpectError(m + " --tokens 2 --top-p 1.5", "--top-p = 1.5 must be in [0, 1]");
  ExpectError(m + " --tokens 2,x,3", "--tokens: 'x' is not a token id");
  ExpectError(m + " --tokens 2,,3", "--tokens: '' is not a token id");
  ExpectError(m + " --tokens=-3", "--tokens: '-3' is not a token id");
  ExpectError(m + " --tokens 99999999999", "is not a token id");
  ExpectError(m + " --tokens 2,1101",
              "--tokens: tokens[1] = 1101 is out of range [0, 1101) of " + m);
  ExpectError(m + " --tokens 2 --n-predict abc",
              "--n-predict: 'abc' is not an integer");
  ExpectError(m + " --tokens 2 --n-predict -2", "--n-predict = -2 must be in [-1, ");
  ExpectError(m + " --tokens 2 --threads 0",
              "--threads = 0 must be in [1, 256]");
  ExpectError(m + " --tokens 2 --ctx-size -1", "--ctx-size = -1 must be >= 0");
  ExpectError(m + " --tokens 2,3,4,5 --n-predict 2 --ctx-size 3",
              "context full: the prompt has 4 tokens, the context holds 3 (-c/--ctx-size");
  ExpectError(m + " --tokens 2 --bogus 1", "unknown flag --bogus");
  ExpectError(m + " --tokens", "--tokens needs a value");
  ExpectError("--tokens 2", "no model: give MODEL.cortiq (or -m MODEL.cortiq)");
  ExpectError(m + " " + m + " --tokens 2", "expected one MODEL.cortiq argument, got 2");
  ExpectError("-m " + m + " " + m + " --tokens 2", "the model is given by -m/--model");
  ExpectError(*dir_ + "/missing.cortiq --tokens 2",
              *dir_ + "/missing.cortiq: cannot open");
  ExpectError(*dir_ + " --tokens 2", "not a regular file");
  ExpectError(m + " --tokens 2 --dump-layers /proc/no/such/dir",
              "cannot create directory");
  ExpectError(m + " --tokens 2 --dump-logits " + *dir_ + "/no/such/file",
              "/no/such/file: cannot create");
}

// Writes `bytes` to `path` (replacing it).
void WriteText(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

TEST_F(CortiqRunTest, DumpOntoTheModelIsRefused) {
  // --dump-logits MODEL truncated the mapped model: SIGBUS, and the model was lost.
  const std::string model = *dir_ + "/victim.cortiq";
  const std::string original = ReadText(*model_);
  WriteText(model, original);
  ASSERT_EQ(symlink("victim.cortiq", (*dir_ + "/victim-link").c_str()), 0);
  ExpectError(model + " --tokens 2,3,4 --n-predict 2 --dump-logits " + model,
              model + ": is the same file as the input " + model +
                  "; refusing to overwrite it");
  ExpectError(model + " --tokens 2 --dump-logits " + *dir_ + "/victim-link",
              "victim-link: is the same file as the input " + model);
  // A tap file that is the model (here through a symlink in the dump directory).
  const std::string layers = *dir_ + "/aliased_layers";
  ASSERT_EQ(mkdir(layers.c_str(), 0755), 0);
  ASSERT_EQ(symlink(model.c_str(), (layers + "/layer.1.f32").c_str()), 0);
  ExpectError(model + " --tokens 2 --dump-layers " + layers,
              "layer.1.f32: is the same file as the input " + model);
  // A tap file that is the logits dump.
  const std::string layers2 = *dir_ + "/aliased_layers2";
  ASSERT_EQ(mkdir(layers2.c_str(), 0755), 0);
  const std::string logits = *dir_ + "/aliased_logits.f32";
  ASSERT_EQ(symlink(logits.c_str(), (layers2 + "/layer.0.f32").c_str()), 0);
  ExpectError(model + " --tokens 2 --dump-logits " + logits + " --dump-layers " + layers2,
              "layer.0.f32: is the same file as the output " + logits);
  EXPECT_EQ(ReadText(model), original);
  EXPECT_TRUE(Artifact::Open(model).ok());
}

TEST_F(CortiqRunTest, DumpOntoSpecialFilesIsRefused) {
  // A FIFO without a reader blocked the run forever (timeout: exit 124).
  const std::string fifo = *dir_ + "/dump-fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  ExpectError("--tokens 2 --dump-logits " + fifo + " " + *model_,
              fifo + ": is a FIFO, not a regular file; refusing to overwrite it");
  ExpectError(*model_ + " --tokens 2 --dump-logits " + *dir_,
              *dir_ + ": is a directory, not a regular file");
  // --dump-layers onto an existing regular file.
  const std::string file = *dir_ + "/not-a-dir";
  WriteText(file, "x");
  ExpectError(*model_ + " --tokens 2 --dump-layers " + file,
              file + ": exists and is not a directory (--dump-layers)");
}

TEST_F(CortiqRunTest, FifoModelFailsWithoutBlocking) {
  const std::string fifo = *dir_ + "/model-fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  ExpectError(fifo + " --tokens 2", fifo + ": not a regular file");
}

TEST_F(CortiqRunTest, NonFiniteLogitsFailCleanly) {
  // All-NaN logits were printed as greedy ids 0,0,0 with exit status 0.
  const std::string model = *dir_ + "/nan.cortiq";
  const int32_t poisoned = ::cortiq::testing::FindWeight(toy_->plan, "final_norm");
  ASSERT_TRUE(WriteArtifact(model, toy_->plan, [&](size_t i, uint8_t* dst) {
                if (static_cast<int32_t>(i) != poisoned) return toy_->Fill(i, dst);
                // All-ones bytes are a NaN in both f32 and bf16.
                std::memset(dst, 0xff, toy_->plan.weights[i].size_bytes);
                return absl::OkStatus();
              }).ok());
  ExpectError(model + " --tokens 2,3,4 --n-predict 3",
              "cortiq-run: tokens[2] (position 2): non-finite logits at position 2 (NaN/Inf in "
              "the weights, or an overflow); 2 tokens of the call were evaluated");
  // With --dump-logits every prompt position is checked, the first one fails.
  ExpectError(model + " --tokens 2,3,4 --dump-logits " + *dir_ + "/nan-logits.f32",
              "non-finite logits at position 0");
}

TEST_F(CortiqRunTest, VerifyNamesADamagedWeight) {
  const RunResult ok = Run(*model_ + " --tokens 2,3 --n-predict 2 --verify");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_THAT(ok.err, HasSubstr("     verify time = "));
  // One flipped bit in the last weight: the run itself does not notice, --verify does.
  std::string bytes = ReadText(*model_);
  const ArtifactHeader h = DecodeArtifactHeader(reinterpret_cast<const uint8_t*>(bytes.data()));
  const WeightEntry& last = toy_->plan.weights.back();
  bytes[h.weights_offset + last.offset] ^= 0x01;
  const std::string damaged = *dir_ + "/damaged.cortiq";
  WriteText(damaged, bytes);
  EXPECT_EQ(Run(damaged + " --tokens 2,3 --n-predict 2").exit_code, 0);
  ExpectError(damaged + " --tokens 2,3 --n-predict 2 --verify",
              absl::StrCat(damaged, ": 1 of ", toy_->plan.weights.size(),
                           " weights is corrupted (their bytes do not match the XXH3-64 hashes "
                           "written with them): weight ",
                           toy_->plan.weights.size() - 1, " '", last.name, "'"));
  ExpectError(damaged + " --tokens 2,3 --verify --threads 2", "weights is corrupted");
}

TEST_F(CortiqRunTest, HugeArenaFailsCleanly) {
  // arena_bytes = 2^64 - 1 with a valid checksum: a heap overflow (glibc abort) before.
  std::string bytes = ReadText(*model_);
  ArtifactHeader h = DecodeArtifactHeader(reinterpret_cast<const uint8_t*>(bytes.data()));
  absl::StatusOr<Plan> plan = ParsePlan(reinterpret_cast<const uint8_t*>(bytes.data()) +
                                            h.metadata_offset,
                                        h.metadata_size, h.version_major, h.version_minor);
  ASSERT_TRUE(plan.ok()) << plan.status();
  plan->arena_bytes = ~uint64_t{0};
  const std::string metadata = SerializePlan(*plan);
  ASSERT_EQ(metadata.size(), h.metadata_size);
  bytes.replace(h.metadata_offset, metadata.size(), metadata);
  h.checksum = ArtifactChecksum(h, reinterpret_cast<const uint8_t*>(metadata.data()),
                                metadata.size());
  uint8_t header[kArtifactHeaderSize];
  EncodeArtifactHeader(h, header);
  bytes.replace(0, kArtifactHeaderSize, reinterpret_cast<const char*>(header),
                kArtifactHeaderSize);
  const std::string bad = *dir_ + "/huge-arena.cortiq";
  WriteText(bad, bytes);
  ExpectError(bad + " --tokens 2,17,300 --n-predict 2",
              bad + ": invalid plan: arena_bytes = 18446744073709551615 exceeds the limit");
}

TEST_F(CortiqRunTest, CorruptArtifactFailsCleanly) {
  const std::string bad = *dir_ + "/bad.cortiq";
  {
    std::ofstream out(bad, std::ios::binary);
    out << "this is not a model, but it is longer than the sixty-four byte "
           "header of one";
  }
  ExpectError(bad + " --tokens 2", bad + ": not a cortiq artifact");
  std::string bytes = ReadText(*model_);
  bytes.resize(bytes.size() - 100);
  {
    std::ofstream out(bad, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  ExpectError(bad + " --tokens 2", bad + ": truncated: header says");
}

}  // namespace
}  // namespace cortiq
