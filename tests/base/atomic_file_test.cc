// Tests of base/atomic_file.cc: the output appears only on Commit, complete; no other file is
// ever touched (OUT.tmp, an input, a planted symlink); abandoned and failed writes (a full disk,
// a file size limit, a dying writer) leave the output as it was and no temporary behind; both
// kinds of temporary (unnamed O_TMPFILE and the named fallback).
#include "base/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Runs every test twice: with the unnamed O_TMPFILE temporary where the filesystem has it, and
// with the named fallback.
class AtomicFileTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');  // "Test/Named"
    dir_ = absl::StrCat(::testing::TempDir(), "/cortiq_atomic_file_test_", getpid(), "_", name);
    std::system(absl::StrCat("rm -rf '", dir_, "'").c_str());
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
  }
  void TearDown() override { std::system(absl::StrCat("rm -rf '", dir_, "'").c_str()); }

  std::string Path(const std::string& name) const { return absl::StrCat(dir_, "/", name); }
  absl::StatusOr<AtomicFile> Create(const std::string& path,
                                    const std::vector<std::string>& inputs = {}) {
    return AtomicFile::Create(path, inputs, /*allow_unnamed=*/GetParam());
  }

  std::string dir_;
};

TEST_P(AtomicFileTest, OutputAppearsOnlyOnCommit) {
  const std::string out = Path("out.bin");
  absl::StatusOr<AtomicFile> file = Create(out);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE(file->Write("hello, ", 7).ok());
  ASSERT_TRUE(file->Write("world", 5).ok());
  EXPECT_FALSE(std::ifstream(out).good());  // nothing under the output's name yet
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(file->fd(), -1);
  EXPECT_EQ(ReadText(out), "hello, world");
  EXPECT_THAT(List(dir_), ElementsAre("out.bin"));  // and no temporary left
}

TEST_P(AtomicFileTest, ReplacesTheOutputAndNothingElse) {
  // The old writer used OUTPUT.tmp: it removed a user's file of that name as "stale" (and
  // `cortiq-compile X.tmp -o X` deleted its own input).
  const std::string out = Path("out.bin");
  WriteText(out, "old");
  WriteText(out + ".tmp", "a user's file");
  ASSERT_EQ(symlink("victim", (out + ".tmp.link").c_str()), 0);
  WriteText(Path("victim"), "precious");
  for (int round = 0; round < 3; ++round) {
    absl::StatusOr<AtomicFile> file = Create(out, {out + ".tmp"});
    ASSERT_TRUE(file.ok()) << file.status();
    const std::string text = absl::StrCat("new ", round);
    ASSERT_TRUE(file->Write(text.data(), text.size()).ok());
    ASSERT_TRUE(file->Commit().ok());
    EXPECT_EQ(ReadText(out), text);
  }
  EXPECT_EQ(ReadText(out + ".tmp"), "a user's file");
  EXPECT_EQ(ReadText(Path("victim")), "precious");
  EXPECT_THAT(List(dir_), ElementsAre("out.bin", "out.bin.tmp", "out.bin.tmp.link", "victim"));
}

// The replacement keeps the replaced file's permission bits; a file the user may not write is
// refused (root may write any file, so that half runs only for another user).
TEST_P(AtomicFileTest, KeepsThePermissionsAndRefusesReadOnlyFiles) {
  const std::string out = Path("out.bin");
  WriteText(out, "old");
  ASSERT_EQ(chmod(out.c_str(), 0640), 0);
  absl::StatusOr<AtomicFile> file = Create(out);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE(file->Write("new", 3).ok());
  ASSERT_TRUE(file->Commit().ok());
  struct stat st;
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(ReadText(out), "new");
  ASSERT_EQ(chmod(out.c_str(), 0444), 0);
  if (geteuid() != 0) {
    const absl::StatusOr<AtomicFile> refused = Create(out);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(std::string(refused.status().message()),
                HasSubstr(": is read-only (no write permission); refusing to replace it"));
    EXPECT_EQ(ReadText(out), "new");
  } else {
    absl::StatusOr<AtomicFile> again = Create(out);  // root: replaced, still read-only
    ASSERT_TRUE(again.ok()) << again.status();
    ASSERT_TRUE(again->Write("x", 1).ok());
    ASSERT_TRUE(again->Commit().ok());
    ASSERT_EQ(stat(out.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0444u);
  }
}

TEST_P(AtomicFileTest, AbandonedWritesLeaveTheOutputAsItWas) {
  const std::string out = Path("out.bin");
  WriteText(out, "old");
  {
    absl::StatusOr<AtomicFile> file = Create(out);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE(file->Write("partial", 7).ok());
  }  // destroyed without Commit
  EXPECT_EQ(ReadText(out), "old");
  absl::StatusOr<AtomicFile> file = Create(out);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE(file->Write("partial", 7).ok());
  file->Abandon();
  file->Abandon();  // idempotent
  EXPECT_EQ(file->Commit().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadText(out), "old");
  EXPECT_THAT(List(dir_), ElementsAre("out.bin"));
}

TEST_P(AtomicFileTest, MovedFileCommitsOnce) {
  const std::string out = Path("out.bin");
  absl::StatusOr<AtomicFile> file = Create(out);
  ASSERT_TRUE(file.ok()) << file.status();
  AtomicFile moved = *std::move(file);
  ASSERT_TRUE(moved.Write("x", 1).ok());
  AtomicFile assigned = std::move(moved);
  ASSERT_TRUE(assigned.Commit().ok());
  EXPECT_EQ(ReadText(out), "x");
  EXPECT_THAT(List(dir_), ElementsAre("out.bin"));
}

TEST_P(AtomicFileTest, RefusesSpecialFilesAndInputs) {
  const std::string input = Path("input.bin");
  WriteText(input, "input");
  absl::StatusOr<AtomicFile> file = Create(input, {input});
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(file.status().message()), HasSubstr("is the same file as the input"));
  ASSERT_EQ(mkdir(Path("sub").c_str(), 0755), 0);
  file = Create(Path("sub"));
  EXPECT_THAT(std::string(file.status().message()), HasSubstr("is a directory"));
  file = Create(Path("missing/out.bin"));
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(file.status().message()), StartsWith(Path("missing/out.bin") + ": "));
  EXPECT_EQ(ReadText(input), "input");
  EXPECT_THAT(List(dir_), ElementsAre("input.bin", "sub"));
}

TEST_P(AtomicFileTest, WritesThroughSymlinks) {
  ASSERT_EQ(mkdir(Path("models").c_str(), 0755), 0);
  const std::string link = Path("link.bin");
  ASSERT_EQ(symlink("models/target.bin", link.c_str()), 0);  // dangling, relative
  for (const char* text : {"first", "second"}) {
    absl::StatusOr<AtomicFile> file = Create(link);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE(file->Write(text, std::strlen(text)).ok());
    ASSERT_TRUE(file->Commit().ok());
    struct stat st;
    ASSERT_EQ(lstat(link.c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    EXPECT_EQ(ReadText(Path("models/target.bin")), text);
  }
  EXPECT_THAT(List(Path("models")), ElementsAre("target.bin"));
}

// A write past RLIMIT_FSIZE fails with EFBIG (SIGXFSZ ignored), as one on a full disk fails with
// ENOSPC: both are ResourceExhausted naming the output, and leave nothing behind. Run in a child
// so the limit does not outlive the test.
TEST_P(AtomicFileTest, FileSizeLimitIsAnErrorAndLeavesNothing) {
  const std::string out = Path("out.bin");
  WriteText(out, "old");
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    const struct rlimit limit = {4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    int code = 0;
    {
      absl::StatusOr<AtomicFile> file = Create(out);
      if (!file.ok()) _exit(10);
      const std::string big(8192, 'x');
      const absl::Status write = file->Write(big.data(), big.size());
      if (write.code() != absl::StatusCode::kResourceExhausted) code |= 1;
      if (std::string(write.message()).rfind(out + ": write failed: File too large", 0) != 0) {
        std::fprintf(stderr, "%s\n", write.ToString().c_str());
        code |= 2;
      }
    }
    {
      absl::StatusOr<AtomicFile> file = Create(out);
      if (!file.ok()) _exit(10);
      const absl::Status reserve = file->Reserve(1 << 20);
      if (reserve.code() != absl::StatusCode::kResourceExhausted) code |= 4;
      if (std::string(reserve.message()).rfind(out + ": cannot reserve 1048576 bytes: ", 0) != 0) {
        std::fprintf(stderr, "%s\n", reserve.ToString().c_str());
        code |= 8;
      }
    }
    _exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadText(out), "old");
  EXPECT_THAT(List(dir_), ElementsAre("out.bin"));
}

// A real full disk: a 16 KiB tmpfs in a private mount namespace (skipped where none can be
// mounted).
TEST_P(AtomicFileTest, FullDiskIsAnErrorAndLeavesNothing) {
  const std::string mount_point = Path("full");
  ASSERT_EQ(mkdir(mount_point.c_str(), 0755), 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) ||
        mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=16k") != 0) {
      _exit(77);
    }
    const std::string out = mount_point + "/out.bin";
    int code = 0;
    {
      absl::StatusOr<AtomicFile> file = Create(out);
      if (!file.ok()) _exit(10);
      const std::string big(1 << 20, 'x');
      const absl::Status write = file->Write(big.data(), big.size());
      if (write.code() != absl::StatusCode::kResourceExhausted ||
          std::string(write.message()) != out + ": write failed: No space left on device") {
        std::fprintf(stderr, "%s\n", write.ToString().c_str());
        code |= 1;
      }
    }
    if (!List(mount_point).empty()) code |= 2;
    _exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot mount a private tmpfs here";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A writer that dies before Commit (kill -9; here _exit, which runs no destructor) leaves the
// output as it was; with the unnamed temporary it leaves nothing at all.
TEST_P(AtomicFileTest, DyingWriterLeavesTheOutput) {
  const std::string out = Path("out.bin");
  WriteText(out, "old");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    absl::StatusOr<AtomicFile> file = Create(out);
    if (!file.ok() || !file->Write("partial", 7).ok()) _exit(1);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(ReadText(out), "old");
  const std::vector<std::string> names = List(dir_);
  // Filesystems without O_TMPFILE get the named temporary in both modes.
  const int probe = open(dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (probe >= 0) close(probe);
  if (GetParam() && probe >= 0) {
    EXPECT_THAT(names, ElementsAre("out.bin"));
  } else {
    // The named temporary stays, under its own fresh name: out.bin.XXXXXXXXXXXX.tmp.
    ASSERT_EQ(names.size(), 2u);
    EXPECT_THAT(names[1], StartsWith("out.bin."));
    EXPECT_EQ(names[1].size(), std::string("out.bin.XXXXXXXXXXXX.tmp").size());
  }
}

INSTANTIATE_TEST_SUITE_P(Temporaries, AtomicFileTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Unnamed" : "Named";
                         });

}  // namespace
}  // namespace cortiq
