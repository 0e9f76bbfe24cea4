// Tests of tools/cortiq-synth, the command-line front end of the safetensors writer: flag
// validation, a complete checkpoint that the reader accepts (its tokenizer files are checked by
// tests/lit/synth), and no partial file left behind when a write fails. Runs the built binary (CORTIQ_SYNTH_BIN); a file size limit (RLIMIT_FSIZE,
// with SIGXFSZ ignored) stands in for a full disk: both make write(2) fail mid-file.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/safetensors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct RunResult {
  int exit_code = -1;  // 128 + signal if killed.
  std::string output;  // stdout and stderr.
};

// Runs cortiq-synth with `args`. A nonzero `file_size_limit` caps every file it writes
// (RLIMIT_FSIZE, bytes); SIGXFSZ is ignored so that exceeding it fails the write with EFBIG, as a
// full disk fails it with ENOSPC, instead of killing the process.
RunResult RunSynth(const std::vector<std::string>& args, rlim_t file_size_limit = 0) {
  // One file per test: ctest runs the tests of this binary in parallel processes.
  const std::string output_path =
      absl::StrCat(::testing::TempDir(), "/cortiq_synth_output.",
                   ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".txt");
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    signal(SIGXFSZ, SIG_IGN);
    if (file_size_limit != 0) {
      const struct rlimit limit = {file_size_limit, file_size_limit};
      setrlimit(RLIMIT_FSIZE, &limit);
    }
    std::vector<char*> argv = {const_cast<char*>(CORTIQ_SYNTH_BIN)};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(CORTIQ_SYNTH_BIN, argv.data());
    _exit(127);
  }
  RunResult result;
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(output_path);
  std::stringstream text;
  text << in.rdbuf();
  result.output = text.str();
  return result;
}

// A path under the gtest temp dir named after the running test, removed with its files.
std::string FreshPath() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = absl::StrCat(::testing::TempDir(), "/cortiq_synth_", info->name());
  if (DIR* dir = opendir(path.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") unlink((path + "/" + name).c_str());
    }
    closedir(dir);
  }
  rmdir(path.c_str());
  return path;
}

// The names in directory `path`; {"<missing>"} if it does not exist.
std::set<std::string> Files(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return {"<missing>"};
  std::set<std::string> names;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.insert(name);
  }
  closedir(dir);
  return names;
}

TEST(CortiqSynthTest, WritesACheckpointTheReaderAccepts) {
  const std::string dir = FreshPath();
  RunResult run = RunSynth({"--preset", "tiny", "--dtype", "f32", "-o", dir});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(Files(dir), ElementsAre("config.json", "generation_config.json", "model.safetensors",
                                      "tokenizer.json", "tokenizer_config.json"));
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();

  const std::string sharded = FreshPath() + "_sharded";
  run = RunSynth({"--preset", "tiny", "--dtype", "f32", "--max-shard-mb", "1", "-o", sharded});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(Files(sharded),
              ElementsAre("config.json", "generation_config.json",
                          "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                          "model.safetensors.index.json", "tokenizer.json",
                          "tokenizer_config.json"));
  checkpoint = SafetensorsCheckpoint::Open(sharded);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->files().size(), 2u);
}

// The same seed gives the same bytes in every process (the weights do not depend on a
// per-process hash seed); another seed gives other weights.
TEST(CortiqSynthTest, SameSeedSameWeights) {
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::string files[3];
  const char* seeds[3] = {"7", "7", "8"};
  for (int i = 0; i < 3; ++i) {
    const std::string dir = FreshPath() + "_seed" + std::to_string(i);
    RunResult run = RunSynth({"--preset", "tiny", "--seed", seeds[i], "-o", dir});
    ASSERT_EQ(run.exit_code, 0) << run.output;
    files[i] = read(dir + "/model.safetensors");
  }
  ASSERT_FALSE(files[0].empty());
  EXPECT_TRUE(files[0] == files[1]);
  EXPECT_FALSE(files[0] == files[2]);
}

// 0 MiB would give every tensor a shard of its own; a value past 2^24 MiB would overflow the
// byte count.
TEST(CortiqSynthTest, MaxShardMbMustBePositiveAndBounded) {
  const std::string dir = FreshPath();
  RunResult run = RunSynth({"--preset", "tiny", "--max-shard-mb", "0", "-o", dir});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.output, HasSubstr("--max-shard-mb must be between 1 and 16777216, not 0"));
  EXPECT_THAT(Files(dir), ElementsAre("<missing>"));  // Checked before anything is written.
  run = RunSynth({"--preset", "tiny", "--max-shard-mb", "17592186044416", "-o", dir});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.output, HasSubstr("--max-shard-mb must be between 1 and 16777216"));
}

// A write failing mid-file (disk full) must not leave a truncated model.safetensors, which a
// later run could mistake for a checkpoint: the files of the run, and the directory it created,
// are removed.
TEST(CortiqSynthTest, FailedWriteLeavesNoPartialFile) {
  const std::string dir = FreshPath();
  const RunResult run =
      RunSynth({"--preset", "tiny", "--dtype", "f32", "-o", dir}, /*file_size_limit=*/100'000);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("write failed: File too large"));
  EXPECT_THAT(Files(dir), ElementsAre("<missing>"));
}

TEST(CortiqSynthTest, FailedWriteKeepsAnExistingDirectoryAndItsOtherFiles) {
  const std::string dir = FreshPath();
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::ofstream(dir + "/notes.txt") << "mine";
  const RunResult run =
      RunSynth({"--preset", "tiny", "--dtype", "f32", "-o", dir}, /*file_size_limit=*/100'000);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(Files(dir), ElementsAre("notes.txt"));
}

// Sharded: no shard, index or config.json is left either (the first shard, ~1 MB, fails).
TEST(CortiqSynthTest, FailedShardedWriteLeavesNoFile) {
  const std::string dir = FreshPath();
  const RunResult run =
      RunSynth({"--preset", "tiny", "--dtype", "f32", "--max-shard-mb", "1", "-o", dir},
               /*file_size_limit=*/900'000);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("model-00001-of-00002.safetensors"));
  EXPECT_THAT(run.output, HasSubstr("File too large"));
  EXPECT_THAT(Files(dir), ElementsAre("<missing>"));
}

// --metadata-only writes the config and tokenizer into an existing directory beside the weights
// of an earlier run, and leaves them alone.
TEST(CortiqSynthTest, MetadataOnlyWritesAllButTheWeights) {
  const std::string dir = FreshPath();
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::ofstream(dir + "/model.safetensors") << "weights";
  RunResult run = RunSynth({"--preset", "tiny", "--metadata-only", "-o", dir});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(Files(dir), ElementsAre("config.json", "generation_config.json", "model.safetensors",
                                      "tokenizer.json", "tokenizer_config.json"));
  std::ifstream weights(dir + "/model.safetensors");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(weights), {}), "weights");
  // Another preset's files would contradict the config (and the weights) already there.
  run = RunSynth({"--preset", "e4b", "--metadata-only", "-o", dir});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.output, HasSubstr("config.json: vocab_size is 512, preset e4b has 262144"));
}

// The content of the file at `path` ("<missing>" if it cannot be read).
std::string Content(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "<missing>";
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Real shards given a synthetic tokenizer by --metadata-only (its documented use), then a full
// run into the same directory: the tokenizer is synth's, the shards are not, and they are
// neither replaced nor removed as "an earlier run's" (a whole-directory ownership test let the
// synthetic tokenizer vouch for them).
TEST(CortiqSynthTest, RealShardsBesideItsTokenizerAreKept) {
  const std::string dir = FreshPath();
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::ofstream(dir + "/model-00001-of-00002.safetensors") << "real shard 1";
  std::ofstream(dir + "/model-00002-of-00002.safetensors") << "real shard 2";
  std::ofstream(dir + "/model.safetensors.index.json") << "{\"weight_map\": {}}";
  RunResult run = RunSynth({"--preset", "tiny", "--metadata-only", "-o", dir});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  run = RunSynth({"--preset", "tiny", "-o", dir});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("exists without cortiq-synth's mark"));
  EXPECT_EQ(Content(dir + "/model-00001-of-00002.safetensors"), "real shard 1");
  EXPECT_EQ(Content(dir + "/model-00002-of-00002.safetensors"), "real shard 2");
  EXPECT_EQ(Content(dir + "/model.safetensors.index.json"), "{\"weight_map\": {}}");
  EXPECT_THAT(Files(dir), testing::Not(testing::Contains("model.safetensors")));
}

// -o naming a real checkpoint used to replace its weights, config and tokenizer with random ones
// ("wrote DIR", exit 0); --metadata-only its tokenizer files. Both are refused, every file kept.
TEST(CortiqSynthTest, NeverReplacesAnotherCheckpoint) {
  const std::string dir = FreshPath();
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::ofstream(dir + "/model.safetensors") << "real weights";
  RunResult run = RunSynth({"--preset", "tiny", "--dtype", "f32", "-o", dir});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr(dir + "/model.safetensors: exists and was not written by cortiq-synth; "
                              "refusing to replace a checkpoint's files"));
  EXPECT_THAT(Files(dir), ElementsAre("model.safetensors"));
  EXPECT_EQ(Content(dir + "/model.safetensors"), "real weights");

  // A real tokenizer beside the weights: --metadata-only leaves the weights alone but would
  // replace the tokenizer.
  std::ofstream(dir + "/tokenizer.json") << "{\"real\": true}";
  run = RunSynth({"--preset", "tiny", "--metadata-only", "-o", dir});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr(dir + "/tokenizer.json: exists and was not written by "
                                          "cortiq-synth"));
  EXPECT_THAT(Files(dir), ElementsAre("model.safetensors", "tokenizer.json"));
  EXPECT_EQ(Content(dir + "/tokenizer.json"), "{\"real\": true}");
}

// Its own output is replaced: a run with another seed, and the output of a version that did not
// mark its weights yet (known by its tokenizer.json); and an empty file or the same text is no
// loss in any directory.
TEST(CortiqSynthTest, ReplacesItsOwnOutput) {
  const std::string dir = FreshPath();
  ASSERT_EQ(RunSynth({"--preset", "tiny", "--dtype", "f32", "-o", dir}).exit_code, 0);
  const std::string seed0 = Content(dir + "/model.safetensors");
  EXPECT_THAT(seed0,
              HasSubstr("\"__metadata__\":{\"format\":\"pt\",\"generator\":\"cortiq-synth\"}"));
  RunResult run = RunSynth({"--preset", "tiny", "--dtype", "f32", "--seed", "7", "-o", dir});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(Content(dir + "/model.safetensors"), seed0);

  // An earlier sharded run: its shards and index go (readers would take the index first and
  // read the old weights), and back.
  run = RunSynth({"--preset", "tiny", "--dtype", "f32", "--max-shard-mb", "1", "-o", dir});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("removed model.safetensors of an earlier run"));
  EXPECT_THAT(Files(dir), ElementsAre("config.json", "generation_config.json",
                                      "model-00001-of-00002.safetensors",
                                      "model-00002-of-00002.safetensors",
                                      "model.safetensors.index.json", "tokenizer.json",
                                      "tokenizer_config.json"));
  run = RunSynth({"--preset", "tiny", "--dtype", "f32", "-o", dir});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(Files(dir), ElementsAre("config.json", "generation_config.json",
                                      "model.safetensors", "tokenizer.json",
                                      "tokenizer_config.json"));
  EXPECT_EQ(Content(dir + "/model.safetensors"), seed0);

  // Unmarked weights beside its own tokenizer.json (an earlier version's output, or real
  // weights beside the tokenizer --metadata-only wrote): ownership is per file, so the weights
  // are refused; --metadata-only, which leaves them alone, may rewrite the texts.
  std::ofstream(dir + "/model.safetensors") << "unmarked weights";
  run = RunSynth({"--preset", "tiny", "--dtype", "f32", "-o", dir});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr(dir + "/model.safetensors: exists without cortiq-synth's "
                                          "mark (an earlier version's output"));
  EXPECT_EQ(Content(dir + "/model.safetensors"), "unmarked weights");
  run = RunSynth({"--preset", "tiny", "--dtype", "f32", "--metadata-only", "-o", dir});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(Content(dir + "/model.safetensors"), "unmarked weights");

  // Same text and empty files, with unmarked weights and no tokenizer of its own: no loss.
  const std::string other = dir + "-metadata";
  std::system(absl::StrCat("rm -rf '", other, "'").c_str());
  ASSERT_EQ(mkdir(other.c_str(), 0755), 0);
  std::ofstream(other + "/model.safetensors") << "unmarked weights";
  std::ofstream(other + "/config.json") << Content(dir + "/config.json");
  std::ofstream(other + "/tokenizer.json");
  run = RunSynth({"--preset", "tiny", "--dtype", "f32", "--metadata-only", "-o", other});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(Content(other + "/tokenizer.json"), Content(dir + "/tokenizer.json"));
  std::system(absl::StrCat("rm -rf '", other, "'").c_str());
}

}  // namespace
}  // namespace cortiq
