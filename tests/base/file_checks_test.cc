// Tests of base/file_checks.cc: CheckOutputPath refuses special files and outputs that are
// an input (directly, through a symlink or a hard link) and accepts new and ordinary files;
// ResolveOutputPath follows symlink chains, relative targets and dangling links; CheckReplaceable
// and CheckNotAModel refuse to replace files of other kinds and models; FilesOfInput lists a
// checkpoint directory.
#include "base/file_checks.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

class FileChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/cortiq_file_checks_test_", getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::system(absl::StrCat("rm -rf '", dir_, "'").c_str());
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
    input_ = Path("input.bin");
    std::ofstream(input_) << "input";
  }
  void TearDown() override { std::system(absl::StrCat("rm -rf '", dir_, "'").c_str()); }

  std::string Path(const std::string& name) const { return absl::StrCat(dir_, "/", name); }

  std::string dir_;
  std::string input_;
};

TEST_F(FileChecksTest, AcceptsNewAndOrdinaryOutputs) {
  EXPECT_TRUE(CheckOutputPath(Path("new.bin"), {input_}).ok());
  std::ofstream(Path("old.bin")) << "old";
  EXPECT_TRUE(CheckOutputPath(Path("old.bin"), {input_}).ok());
  // Missing and empty inputs are skipped (their own open reports them).
  EXPECT_TRUE(CheckOutputPath(Path("old.bin"), {Path("missing"), ""}).ok());
  EXPECT_TRUE(CheckOutputPath(Path("old.bin"), {}).ok());
  // A dangling symlink names a file to create.
  ASSERT_EQ(symlink(Path("target.bin").c_str(), Path("dangling").c_str()), 0);
  EXPECT_TRUE(CheckOutputPath(Path("dangling"), {input_}).ok());
  // An unreachable output is left to the caller's open, which reports the errno.
  EXPECT_TRUE(CheckOutputPath(Path("no/such/dir/out.bin"), {input_}).ok());
}

TEST_F(FileChecksTest, RefusesTheInputItself) {
  const absl::Status status = CheckOutputPath(input_, {Path("other"), input_});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            absl::StrCat(input_, ": is the same file as the input ", input_,
                         "; refusing to overwrite it"));
}

TEST_F(FileChecksTest, RefusesTheInputUnderAnotherName) {
  // A symlink to the input, a hard link, and a path spelled differently.
  ASSERT_EQ(symlink("input.bin", Path("link").c_str()), 0);
  ASSERT_EQ(link(input_.c_str(), Path("hard").c_str()), 0);
  for (const std::string& output :
       {Path("link"), Path("hard"), absl::StrCat(dir_, "/./input.bin")}) {
    const absl::Status status = CheckOutputPath(output, {input_});
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(absl::StrCat(output, ": is the same file as the input ", input_)));
  }
  // And the input given through a symlink.
  EXPECT_FALSE(CheckOutputPath(input_, {Path("link")}).ok());
}

TEST_F(FileChecksTest, RefusesSpecialFiles) {
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0644), 0);
  EXPECT_EQ(std::string(CheckOutputPath(Path("fifo"), {}).message()),
            Path("fifo") + ": is a FIFO, not a regular file; refusing to overwrite it");
  EXPECT_THAT(std::string(CheckOutputPath(dir_, {}).message()),
              HasSubstr(": is a directory, not a regular file"));
  // Through a symlink, too (as `-o link-to-/dev/null`).
  ASSERT_EQ(symlink("fifo", Path("to_fifo").c_str()), 0);
  EXPECT_THAT(std::string(CheckOutputPath(Path("to_fifo"), {}).message()),
              HasSubstr("to_fifo: is a FIFO"));
  EXPECT_THAT(std::string(CheckOutputPath("/dev/null", {}).message()),
              HasSubstr("/dev/null: is a character device"));
}

TEST_F(FileChecksTest, ResolvesSymlinkChains) {
  // Not a symlink, or missing: unchanged.
  EXPECT_EQ(*ResolveOutputPath(input_), input_);
  EXPECT_EQ(*ResolveOutputPath(Path("missing")), Path("missing"));
  // A relative target is relative to the link's directory, not the cwd.
  ASSERT_EQ(mkdir(Path("sub").c_str(), 0755), 0);
  ASSERT_EQ(symlink("../input.bin", Path("sub/up").c_str()), 0);
  EXPECT_EQ(*ResolveOutputPath(Path("sub/up")), Path("sub/../input.bin"));
  // A chain ending in a dangling link: the file to create.
  ASSERT_EQ(symlink("sub/second", Path("first").c_str()), 0);
  ASSERT_EQ(symlink(Path("created.bin").c_str(), Path("sub/second").c_str()), 0);
  EXPECT_EQ(*ResolveOutputPath(Path("first")), Path("created.bin"));
  // A loop.
  ASSERT_EQ(symlink("loop_b", Path("loop_a").c_str()), 0);
  ASSERT_EQ(symlink("loop_a", Path("loop_b").c_str()), 0);
  const absl::StatusOr<std::string> loop = ResolveOutputPath(Path("loop_a"));
  EXPECT_EQ(loop.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(loop.status().message()),
              HasSubstr("loop_a: more than 40 levels of symbolic links"));
}

// A binary writer replaces only an empty file or one of its own kind (its magic bytes first).
TEST_F(FileChecksTest, ReplacesOnlyItsOwnKind) {
  const std::string magic("MAGIC\r\n", 7);
  EXPECT_TRUE(CheckReplaceable(Path("missing"), magic, "test file").ok());
  std::ofstream(Path("empty"));
  EXPECT_TRUE(CheckReplaceable(Path("empty"), magic, "test file").ok());
  std::ofstream(Path("ours")) << magic << "payload";
  EXPECT_TRUE(CheckReplaceable(Path("ours"), magic, "test file").ok());
  std::ofstream(Path("short")) << "MAG";  // a prefix of the magic is not the magic
  std::ofstream(Path("other")) << "#!/bin/sh\necho precious\n";
  for (const char* name : {"short", "other"}) {
    const absl::Status s = CheckReplaceable(Path(name), magic, "test file");
    EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << name;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat(Path(name), ": exists and is not a test file")));
    EXPECT_THAT(s.message(), HasSubstr("refusing to replace it"));
  }
  // Through a symlink: its target is what would be replaced.
  ASSERT_EQ(symlink("other", Path("link").c_str()), 0);
  EXPECT_EQ(CheckReplaceable(Path("link"), magic, "test file").code(),
            absl::StatusCode::kAlreadyExists);
  ASSERT_EQ(symlink("ours", Path("link-to-ours").c_str()), 0);
  EXPECT_TRUE(CheckReplaceable(Path("link-to-ours"), magic, "test file").ok());
  // Not a regular file: left to CheckOutputPath.
  EXPECT_TRUE(CheckReplaceable(dir_, magic, "test file").ok());
  // Unreadable (when not root, whom permissions do not stop): refused, naming why.
  std::ofstream(Path("locked")) << "secret";
  ASSERT_EQ(chmod(Path("locked").c_str(), 0200), 0);
  if (geteuid() != 0) {
    const absl::Status s = CheckReplaceable(Path("locked"), magic, "test file");
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  }
}

TEST_F(FileChecksTest, NeverReplacesAModelWithAnotherOutput) {
  EXPECT_TRUE(CheckNotAModel(Path("missing"), "the IR").ok());
  std::ofstream(Path("empty"));
  EXPECT_TRUE(CheckNotAModel(Path("empty"), "the IR").ok());
  std::ofstream(Path("notes.txt")) << "notes\n";
  EXPECT_TRUE(CheckNotAModel(Path("notes.txt"), "the IR").ok());
  // The first 8 bytes of a safetensors file are the header length; one longer than the file is
  // no safetensors file (binary f32 rows of a logits dump can start with anything).
  std::string header = "{\"a\":{}}";
  std::string safetensors(8, '\0');
  safetensors[0] = static_cast<char>(header.size());
  std::ofstream(Path("model.safetensors"), std::ios::binary) << safetensors << header;
  std::string long_header(8, '\0');
  long_header[1] = 1;  // 256 bytes of header in a 9-byte file
  std::ofstream(Path("rows.f32"), std::ios::binary) << long_header << "{";
  EXPECT_TRUE(CheckNotAModel(Path("rows.f32"), "a dump").ok());
  // Whitespace before the header's '{' (which JSON allows and cortiq's reader accepts).
  const std::string spaced_header = "  \n{\"a\":{}}";
  std::string spaced(8, '\0');
  spaced[0] = static_cast<char>(spaced_header.size());
  std::ofstream(Path("spaced.safetensors"), std::ios::binary) << spaced << spaced_header;
  EXPECT_EQ(CheckNotAModel(Path("spaced.safetensors"), "the IR").code(),
            absl::StatusCode::kAlreadyExists);
  std::ofstream(Path("model.gguf"), std::ios::binary) << "GGUF\3\0\0\0rest";
  std::ofstream(Path("model.cortiq"), std::ios::binary) << std::string("CORTIQ\0\1rest", 12);
  std::ofstream(Path("chat.bin"), std::ios::binary) << "CQCHAT\r\nrest";
  const struct {
    const char* name;
    const char* kind;
  } models[] = {{"model.safetensors", "a safetensors file"},
                {"model.gguf", "a GGUF model"},
                {"model.cortiq", "a cortiq artifact"},
                {"chat.bin", "a saved cortiq-chat conversation"}};
  for (const auto& m : models) {
    const absl::Status s = CheckNotAModel(Path(m.name), "the IR");
    EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << m.name;
    EXPECT_EQ(std::string(s.message()),
              absl::StrCat(Path(m.name), ": is ", m.kind,
                           "; refusing to replace it with the IR: remove it first or choose "
                           "another path"));
  }
  // Through a symlink: its target is what would be replaced.
  ASSERT_EQ(symlink("model.gguf", Path("link").c_str()), 0);
  EXPECT_EQ(CheckNotAModel(Path("link"), "the IR").code(), absl::StatusCode::kAlreadyExists);
  // Not a regular file: left to CheckOutputPath.
  EXPECT_TRUE(CheckNotAModel(dir_, "the IR").ok());
}

TEST_F(FileChecksTest, FilesOfInputListADirectory) {
  EXPECT_THAT(FilesOfInput(input_), ::testing::ElementsAre(input_));
  EXPECT_THAT(FilesOfInput(Path("missing")), ::testing::ElementsAre(Path("missing")));
  ASSERT_EQ(mkdir(Path("ckpt").c_str(), 0755), 0);
  std::ofstream(Path("ckpt/config.json")) << "{}";
  std::ofstream(Path("ckpt/model.safetensors")) << "x";
  EXPECT_THAT(FilesOfInput(Path("ckpt")),
              ::testing::UnorderedElementsAre(Path("ckpt"), Path("ckpt/config.json"),
                                              Path("ckpt/model.safetensors")));
}

TEST_F(FileChecksTest, DistinctOutputs) {
  EXPECT_TRUE(CheckDistinctOutputs({}).ok());
  EXPECT_TRUE(CheckDistinctOutputs({Path("a"), "", Path("b"), ""}).ok());  // empty: unused
  const auto same = [](const absl::Status& status) { return std::string(status.message()); };
  // The same name, spelled differently (missing files: by path).
  ASSERT_EQ(mkdir(Path("sub").c_str(), 0755), 0);
  EXPECT_EQ(same(CheckDistinctOutputs({Path("a"), Path("sub/../a")})),
            Path("sub/../a") + ": is the same file as the output " + Path("a") +
                "; refusing to write both");
  // Through a (dangling) symlink, and a relative one.
  ASSERT_EQ(symlink("a", Path("link").c_str()), 0);
  EXPECT_THAT(same(CheckDistinctOutputs({Path("a"), Path("b"), Path("link")})),
              HasSubstr("link: is the same file as the output " + Path("a")));
  // Hard links of an existing file.
  ASSERT_EQ(link(input_.c_str(), Path("hard").c_str()), 0);
  EXPECT_THAT(same(CheckDistinctOutputs({input_, Path("hard")})),
              HasSubstr("hard: is the same file as the output " + input_));
  EXPECT_TRUE(CheckDistinctOutputs({Path("a"), Path("sub/a")}).ok());
}

}  // namespace
}  // namespace cortiq
