// The tools' command-line parser (tools/common/flags.h): every accepted spelling, the errors, the
// help's layout (dashed names, defaults) and the version line.
#include "tools/common/flags.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/common/version.h"

namespace cortiq {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Parsed {
  std::string model;
  int64_t threads = 4;
  float temp = 0.8f;
  bool special = false;
  bool warmup = true;
  std::vector<std::string> stop;
  std::string prompt;
};

// Parses `args` (argv[0] added) into a fresh Parsed; `out` gets the positional arguments.
absl::Status ParseArgs(std::vector<std::string> args, Parsed* p, std::vector<std::string>* out,
                       Flags** keep = nullptr) {
  static Flags* flags = nullptr;
  delete flags;
  flags = new Flags("cortiq-test", "MODEL [options]", "A test.");
  flags->AddString("-m, --model", "FILE", &p->model, "the model");
  flags->AddInt("-t, --threads", "N", &p->threads, 1, 256, "threads");
  flags->AddGroup("sampling");
  flags->AddFloat("--temp", "T", &p->temp, 0.0f, 100.0f, "temperature");
  flags->AddBool("--special", &p->special, "print special tokens");
  flags->AddBool("--warmup", &p->warmup, "warm up");
  flags->AddList("--stop", "TEXT", &p->stop, "stop strings");
  flags->AddString("-p, --prompt", "TEXT", &p->prompt, "the prompt");
  args.insert(args.begin(), "cortiq-test");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  absl::StatusOr<std::vector<std::string>> positional =
      flags->Parse(static_cast<int>(argv.size()), argv.data());
  if (keep != nullptr) *keep = flags;
  if (!positional.ok()) return positional.status();
  *out = *positional;
  return absl::OkStatus();
}

TEST(FlagsTest, EverySpelling) {
  Parsed p;
  std::vector<std::string> positional;
  Flags* flags = nullptr;
  ASSERT_TRUE(ParseArgs({"a.cortiq", "-t", "2", "--temp=0.5", "--special", "--no-warmup", "--stop",
                         "x", "--stop=y", "-p", "-starts with a dash", "b", "--", "--threads"},
                        &p, &positional, &flags)
                  .ok());
  EXPECT_THAT(positional, ElementsAre("a.cortiq", "b", "--threads"));
  EXPECT_EQ(p.threads, 2);
  EXPECT_EQ(p.temp, 0.5f);
  EXPECT_TRUE(p.special);
  EXPECT_FALSE(p.warmup);
  EXPECT_THAT(p.stop, ElementsAre("x", "y"));
  EXPECT_EQ(p.prompt, "-starts with a dash");
  EXPECT_TRUE(flags->IsSet("--threads"));
  EXPECT_TRUE(flags->IsSet("temp"));
  EXPECT_FALSE(flags->IsSet("--model"));

  Parsed q;
  ASSERT_TRUE(ParseArgs({"--threads=3", "-m=m.cortiq", "--special=false", "--warmup=1", "-"}, &q,
                        &positional)
                  .ok());
  EXPECT_EQ(q.threads, 3);
  EXPECT_EQ(q.model, "m.cortiq");
  EXPECT_FALSE(q.special);
  EXPECT_TRUE(q.warmup);
  EXPECT_THAT(positional, ElementsAre("-"));
  // Underscores (the earlier Abseil spelling) and one dash before a long name.
  Parsed r;
  ASSERT_TRUE(ParseArgs({"--model", "x", "-threads", "5"}, &r, &positional).ok());
  EXPECT_EQ(r.threads, 5);
  // A one-letter flag with two dashes, as Abseil accepted (--o FILE).
  Parsed s;
  ASSERT_TRUE(ParseArgs({"--t", "6", "--m=y"}, &s, &positional).ok());
  EXPECT_EQ(s.threads, 6);
  EXPECT_EQ(s.model, "y");
}

// llama.cpp's multi-letter one-dash names (-np, -mmp), declared so, are matched as written;
// their long names, and a long name written with one dash, still work.
TEST(FlagsTest, OneDashMultiLetterNames) {
  for (const std::string arg : {"-np", "--parallel", "-parallel", "--np"}) {
    int64_t parallel = 1;
    Flags flags("cortiq-test", "[options]", "A test.");
    flags.AddInt("-np, --parallel", "N", &parallel, 1, 256, "slots");
    std::string a = "cortiq-test", b = arg, c = "3";
    char* argv[] = {a.data(), b.data(), c.data()};
    const absl::StatusOr<std::vector<std::string>> parsed = flags.Parse(3, argv);
    if (arg == "--np") {  // a long name that is not declared
      EXPECT_FALSE(parsed.ok()) << arg;
      continue;
    }
    ASSERT_TRUE(parsed.ok()) << arg << ": " << parsed.status();
    EXPECT_EQ(parallel, 3) << arg;
  }
}

// A name declared with an underscore (a format name inside it) is matched as the command line's
// names are, dashes for underscores: written either way, and negated.
TEST(FlagsTest, UnderscoreInADeclaredName) {
  for (const auto& [arg, expected] :
       std::vector<std::pair<std::string, bool>>{{"--keep-q4_0-layout", true},
                                                 {"--keep-q4-0-layout", true},
                                                 {"--keep_q4_0_layout=1", true},
                                                 {"--no-keep-q4_0-layout", false}}) {
    bool keep = !expected;
    Flags flags("cortiq-test", "[options]", "A test.");
    flags.AddBool("--keep-q4_0-layout", &keep, "keep the layout");
    std::string a = "cortiq-test", b = arg;
    char* argv[] = {a.data(), b.data()};
    ASSERT_TRUE(flags.Parse(2, argv).ok()) << arg;
    EXPECT_EQ(keep, expected) << arg;
  }
}

// A bound that is the type's limit is no bound a user should read: only the other one is said.
TEST(FlagsTest, AnUnboundedSideIsLeftOut) {
  int64_t ctx = 4096;
  float temp = 1.0f;
  Flags flags("cortiq-test", "[options]", "A test.");
  flags.AddInt("-c, --ctx-size", "N", &ctx, 1, INT64_MAX, "context");
  flags.AddFloat("--temp", "T", &temp, 0.0f, std::numeric_limits<float>::max(), "temperature");
  const auto error = [&](std::string flag, std::string value) {
    std::string a = "cortiq-test";
    char* argv[] = {a.data(), flag.data(), value.data()};
    return std::string(flags.Parse(3, argv).status().message());
  };
  EXPECT_EQ(error("-c", "0"), "-c = 0 must be >= 1");
  EXPECT_EQ(error("--temp", "-1"), "--temp = -1 must be >= 0");
}

TEST(FlagsTest, ErrorsNameTheFlag) {
  Parsed p;
  std::vector<std::string> positional;
  const auto error = [&](std::vector<std::string> args) {
    Parsed fresh;
    return std::string(ParseArgs(std::move(args), &fresh, &positional).message());
  };
  EXPECT_EQ(error({"--bogus"}), "unknown flag --bogus (see --help)");
  EXPECT_EQ(error({"--bogus=3"}), "unknown flag --bogus (see --help)");
  EXPECT_EQ(error({"-x"}), "unknown flag -x (see --help)");
  EXPECT_EQ(error({"--threads"}), "--threads needs a value");
  EXPECT_EQ(error({"-t", "two"}), "-t: 'two' is not an integer");
  EXPECT_EQ(error({"--threads=0"}), "--threads = 0 must be in [1, 256]");
  EXPECT_EQ(error({"--temp", "nan"}), "--temp: 'nan' is not a finite number");
  EXPECT_EQ(error({"--temp", "-1"}), "--temp = -1 must be in [0, 100]");
  EXPECT_EQ(error({"--special=maybe"}), "--special: 'maybe' is not true or false");
  EXPECT_EQ(error({"--no-special=true"}), "--no-special takes no value");
  EXPECT_EQ(error({"--no-threads"}), "unknown flag --no-threads (see --help)");
}

TEST(FlagsTest, HelpShowsDashedNamesAndDefaults) {
  Parsed p;
  std::vector<std::string> positional;
  Flags* flags = nullptr;
  ASSERT_TRUE(ParseArgs({}, &p, &positional, &flags).ok());
  const std::string help = flags->Help();
  EXPECT_THAT(help, HasSubstr("usage: cortiq-test MODEL [options]\n\nA test.\n\noptions:\n"));
  EXPECT_THAT(help, HasSubstr("  -t, --threads N             threads (default: 4)\n"));
  EXPECT_THAT(help, HasSubstr("\nsampling:\n      --temp T                temperature (default: 0.8)\n"));
  EXPECT_THAT(help, HasSubstr("      --special               print special tokens\n"));
  EXPECT_THAT(help, HasSubstr("\ngeneral:\n  -h, --help                  print this help and exit\n"));
  EXPECT_THAT(help, HasSubstr("      --version"));
  EXPECT_EQ(help.find('_'), std::string::npos) << help;
}

TEST(FlagsTest, VersionNamesTheBuild) {
  const std::string v = ToolVersion("cortiq-x");
  EXPECT_THAT(v, ::testing::StartsWith("cortiq-x 0."));
  EXPECT_THAT(v, HasSubstr("(git "));
  EXPECT_THAT(v, HasSubstr(" build"));
  EXPECT_THAT(v, HasSubstr("; artifact format 3."));
  EXPECT_THAT(v, HasSubstr(", C API 1."));
#ifdef NDEBUG
  EXPECT_THAT(v, ::testing::Not(HasSubstr("assertions on")));
#else
  EXPECT_THAT(v, HasSubstr("assertions on"));
#endif
}

}  // namespace
}  // namespace cortiq
