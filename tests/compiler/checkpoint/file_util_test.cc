// Tests of compiler/checkpoint/file_util: bounded reads, positional reads past the end, mapping.
#include "compiler/checkpoint/file_util.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

std::string TempFile(const std::string& name, const std::string& contents) {
  const std::string path = ::testing::TempDir() + "/cortiq_file_util_" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
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

TEST(FileUtilTest, Paths) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_TRUE(IsDirectory(::testing::TempDir()));
  EXPECT_FALSE(IsRegularFile(::testing::TempDir()));
  EXPECT_TRUE(IsRegularFile(TempFile("regular", "x")));
}

}  // namespace
}  // namespace cortiq
