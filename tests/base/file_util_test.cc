// Tests of formats/file_util: bounded reads, positional reads past the end, mapping.
#include "base/file_util.h"

#include <sys/stat.h>
#include <csignal>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/formats/interrupt_guard.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

std::string TempFile(const std::string& name, const std::string& contents) {
  const std::string path = ::testing::TempDir() + "/cortiq_file_util_" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(FileUtilTest, DirectoryEntriesAreSortedWithoutDots) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/cortiq_file_util_dir_", getpid());
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  for (const char* name : {"b.json", "a.gguf", "c"}) std::ofstream(dir + "/" + name) << "x";
  EXPECT_THAT(DirectoryEntries(dir), ::testing::ElementsAre("a.gguf", "b.json", "c"));
  EXPECT_THAT(DirectoryEntries(dir + "/a.gguf"), ::testing::IsEmpty());  // not a directory
  EXPECT_THAT(DirectoryEntries(dir + "/missing"), ::testing::IsEmpty());
  for (const char* name : {"b.json", "a.gguf", "c"}) unlink((dir + "/" + name).c_str());
  rmdir(dir.c_str());
}

TEST(FileUtilTest, ReadFileToString) {
  const std::string path = TempFile("small", "hello");
  absl::StatusOr<std::string> text = ReadFileToString(path, 5);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "hello");
  text = ReadFileToString(path, 4);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("file is 5 bytes, more than"));
  text = ReadFileToString("/nonexistent/file", 4);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("/nonexistent/file: cannot open"));
  EXPECT_EQ(ReadFileToString(::testing::TempDir(), 4).status().code(),
            absl::StatusCode::kInvalidArgument);  // a directory
}

TEST(FileUtilTest, ReadAtAndMap) {
  absl::StatusOr<ReadOnlyFile> file = ReadOnlyFile::Open(TempFile("data", "0123456789"));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->size(), 10u);
  char buffer[4];
  ASSERT_TRUE(file->ReadAt(6, 4, buffer).ok());
  EXPECT_EQ(std::string(buffer, 4), "6789");
  EXPECT_THAT(std::string(file->ReadAt(7, 4, buffer).message()), HasSubstr("truncated"));
  EXPECT_FALSE(file->ReadAt(~uint64_t{0}, 2, buffer).ok());
  EXPECT_TRUE(file->mapped().empty());
  ASSERT_TRUE(file->Map().ok());
  ASSERT_EQ(file->mapped().size(), 10u);
  EXPECT_EQ(file->mapped()[3], '3');
  ReadOnlyFile moved = *std::move(file);
  EXPECT_EQ(moved.mapped()[9], '9');

  absl::StatusOr<ReadOnlyFile> empty = ReadOnlyFile::Open(TempFile("empty", ""));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->Map().ok());
  EXPECT_TRUE(empty->mapped().empty());
}

// open(2) of a FIFO without a writer blocks until one appears: Open must reject it at once.
TEST(FileUtilTest, FifoIsRejectedWithoutBlocking) {
  const InterruptGuard guard;
  const std::string path = ::testing::TempDir() + "/cortiq_file_util_fifo";
  ::unlink(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0644), 0);
  absl::StatusOr<ReadOnlyFile> file = ReadOnlyFile::Open(path);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(file.status().message()),
              HasSubstr(path + ": not a regular file (a FIFO)"));
  absl::StatusOr<std::string> text = ReadFileToString(path, 100);
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("not a regular file (a FIFO)"));
  EXPECT_TRUE(PathExists(path));
  EXPECT_FALSE(IsRegularFile(path));
  ::unlink(path.c_str());
}

// A prompt file may be a FIFO or a pipe (cortiq-run -f /dev/stdin, -f <(command)): read to its
// end, the writer awaited; never more than the limit held.
TEST(FileUtilTest, ReadTextInputReadsFifosAndPipes) {
  const InterruptGuard guard;
  const std::string path = ::testing::TempDir() + "/cortiq_file_util_text_fifo";
  ::unlink(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0644), 0);
  // The writer opens the FIFO after the reader: the reader waits for it rather than seeing EOF.
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ofstream(path, std::ios::binary) << std::string(100000, 'x') << "end";
  });
  absl::StatusOr<std::string> text = ReadTextInput(path, 100003);
  writer.join();
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->size(), 100003u);
  EXPECT_EQ(text->substr(text->size() - 3), "end");

  // The writer's end sees EPIPE once the reader stops at the limit (not a SIGPIPE that ends
  // the test).
  ::signal(SIGPIPE, SIG_IGN);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread pipe_writer([&] {
    const std::string data(70000, 'y');
    for (size_t done = 0; done < data.size();) {
      const ssize_t n = ::write(fds[1], data.data() + done, data.size() - done);
      if (n <= 0) break;  // the reader closed its end at the limit
      done += static_cast<size_t>(n);
    }
    ::close(fds[1]);
  });
  text = ReadTextInput(absl::StrCat("/proc/self/fd/", fds[0]), 1000);
  ::close(fds[0]);
  pipe_writer.join();
  EXPECT_EQ(text.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("more than 1000 bytes"));
  ::unlink(path.c_str());
}

TEST(FileUtilTest, ReadTextInputLimitsAndRefuses) {
  const std::string path = TempFile("text_input", "hello");
  absl::StatusOr<std::string> text = ReadTextInput(path, 5);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "hello");
  text = ReadTextInput(path, 4);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(text.status().message()), HasSubstr(path + ": 5 bytes, more than 4"));
  EXPECT_THAT(std::string(ReadTextInput(::testing::TempDir(), 9).status().message()),
              HasSubstr("not a regular file (a directory)"));
  EXPECT_THAT(std::string(ReadTextInput("/dev/zero", 9).status().message()),
              HasSubstr("/dev/zero: not a regular file (a device)"));
  EXPECT_EQ(ReadTextInput(::testing::TempDir() + "/missing", 9).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(FileUtilTest, SpecialFilesAreNamed) {
  EXPECT_THAT(std::string(ReadOnlyFile::Open("/dev/null").status().message()),
              HasSubstr("/dev/null: not a regular file (a device)"));
  EXPECT_THAT(std::string(ReadOnlyFile::Open(::testing::TempDir()).status().message()),
              HasSubstr("not a regular file (a directory)"));
  // A regular file opened without O_NONBLOCK semantics left over: reads work as usual.
  absl::StatusOr<ReadOnlyFile> file = ReadOnlyFile::Open(TempFile("flags", "abc"));
  ASSERT_TRUE(file.ok());
  char buffer[3];
  ASSERT_TRUE(file->ReadAt(0, 3, buffer).ok());
  EXPECT_EQ(std::string(buffer, 3), "abc");
}

TEST(FileUtilTest, Paths) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_TRUE(IsDirectory(::testing::TempDir()));
  EXPECT_FALSE(IsRegularFile(::testing::TempDir()));
  EXPECT_TRUE(IsRegularFile(TempFile("regular", "x")));
  EXPECT_TRUE(PathExists(::testing::TempDir()));
  EXPECT_FALSE(PathExists("/nonexistent/file"));
}

}  // namespace
}  // namespace cortiq
