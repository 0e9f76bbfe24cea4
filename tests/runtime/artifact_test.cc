// Tests of runtime/artifact.cc: write/open round trip, and every way a file can
// be broken (truncated, wrong magic, newer version, corrupted metadata, bad
// header offsets, hostile metadata that still has a valid checksum) giving the
// right error with the path.
#include "runtime/artifact.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <xxhash.h>

#include "gmock/gmock.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/weight_hash.h"
#include "tests/runtime/plan_test_util.h"
#include "tests/runtime/toy_model.h"

namespace cortiq {
namespace {

using ::cortiq::testing::BuildToyModel;
using ::cortiq::testing::ToyConfig;
using ::cortiq::testing::ToyLayer;
using ::cortiq::testing::ToyModel;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/cortiq_artifact_test_" +
         std::to_string(getpid()) + "_" + name;
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

ToyModel Toy(WeightFormat format = WeightFormat::kF32) {
  ToyConfig config;
  config.format = format;
  config.layers = {ToyLayer{true, 4, -1}, ToyLayer{false, 0, -1},
                   ToyLayer{true, 4, 0}};
  return BuildToyModel(config);
}

// The toy's plan as the writer stores it: every weight's chunk hashes, computed here by Debian's
// shared libxxhash (the reference XXH3, not the library's copy).
Plan AsWritten(const ToyModel& toy) {
  Plan plan = toy.plan;
  plan.weight_hash_chunk_bytes = kWeightHashChunkBytes;
  for (WeightEntry& w : plan.weights) {
    w.xxh3_64.clear();
    for (uint64_t at = 0; at < w.size_bytes; at += kWeightHashChunkBytes) {
      w.xxh3_64.push_back(XXH3_64bits(toy.weights() + w.offset + at,
                                      std::min(kWeightHashChunkBytes, w.size_bytes - at)));
    }
  }
  return plan;
}

// Writes the toy to a fresh path and returns the path.
std::string WriteToy(const ToyModel& toy, const std::string& name) {
  const std::string path = TempPath(name);
  const absl::Status status = WriteArtifact(
      path, toy.plan, [&](size_t i, uint8_t* dst) { return toy.Fill(i, dst); });
  EXPECT_TRUE(status.ok()) << status;
  return path;
}

// Re-encodes the header of `bytes` after `edit`, optionally with a recomputed
// checksum.
void EditHeader(std::vector<uint8_t>* bytes,
                const std::function<void(ArtifactHeader&)>& edit,
                bool fix_checksum) {
  ArtifactHeader h = DecodeArtifactHeader(bytes->data());
  edit(h);
  if (fix_checksum && h.metadata_offset + h.metadata_size <= bytes->size()) {
    h.checksum =
        ArtifactChecksum(h, bytes->data() + h.metadata_offset, h.metadata_size);
  }
  EncodeArtifactHeader(h, bytes->data());
}

absl::Status OpenStatus(const std::string& path) {
  return Artifact::Open(path).status();
}

// cortiq-run / -bench / -dump and the C API given the GGUF itself: told to compile it first.
TEST(ArtifactTest, AGgufFileIsToldToBeCompiledFirst) {
  const std::string path = std::string(CORTIQ_TEST_DATA_DIR) + "/models/tiny-a-f32.gguf";
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path);
  ASSERT_FALSE(artifact.ok());
  EXPECT_NE(std::string(artifact.status().message())
                .find("a GGUF checkpoint, not a cortiq artifact: compile it first (cortiq-compile " +
                      path + " -o MODEL.cortiq)"),
            std::string::npos)
      << artifact.status();
}

TEST(ArtifactTest, Fnv1aKnownValues) {
  // Published FNV-1a 64 test vectors.
  EXPECT_EQ(Fnv1a64(nullptr, 0), 0xcbf29ce484222325ull);
  const uint8_t a[] = {'a'};
  EXPECT_EQ(Fnv1a64(a, 1), 0xaf63dc4c8601ec8cull);
  const uint8_t foobar[] = {'f', 'o', 'o', 'b', 'a', 'r'};
  EXPECT_EQ(Fnv1a64(foobar, 6), 0x85944171f73967e8ull);
  EXPECT_EQ(Fnv1a64(foobar + 3, 3, Fnv1a64(foobar, 3)), Fnv1a64(foobar, 6));
}

TEST(ArtifactTest, HeaderEncodingIsLittleEndianAndRoundTrips) {
  ArtifactHeader h;
  std::memcpy(h.magic, kArtifactMagic, 8);
  h.version_major = 1;
  h.version_minor = 2;
  h.file_size = 0x0102030405060708ull;
  h.metadata_offset = 64;
  h.metadata_size = 3;
  h.weights_offset = 4096;
  h.weights_size = 5;
  h.checksum = 0xdeadbeefcafef00dull;
  uint8_t bytes[kArtifactHeaderSize];
  EncodeArtifactHeader(h, bytes);
  EXPECT_EQ(std::memcmp(bytes, "CORTIQ\0\1", 8), 0);
  EXPECT_EQ(bytes[8], 1);
  EXPECT_EQ(bytes[12], 2);
  EXPECT_EQ(bytes[16], 0x08);
  EXPECT_EQ(bytes[23], 0x01);
  const ArtifactHeader back = DecodeArtifactHeader(bytes);
  EXPECT_EQ(back.file_size, h.file_size);
  EXPECT_EQ(back.weights_offset, h.weights_offset);
  EXPECT_EQ(back.checksum, h.checksum);
}

// A plan with the fused steps goes through a file unchanged.
TEST(ArtifactTest, FusedPlanRoundTripsThroughAFile) {
  ToyConfig config;
  config.format = WeightFormat::kBF16;
  config.post_norms = true;
  config.fused = true;
  config.layers = {ToyLayer{true, 4, -1}, ToyLayer{false, 0, -1}};
  const ToyModel toy = BuildToyModel(config);
  const std::string path = WriteToy(toy, "roundtrip_fused");
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  ExpectPlansEqual(AsWritten(toy), (*artifact)->plan());
  std::remove(path.c_str());
}

TEST(ArtifactTest, WriteOpenRoundTrip) {
  for (WeightFormat format : {WeightFormat::kF32, WeightFormat::kBF16}) {
    const ToyModel toy = Toy(format);
    const std::string path =
        WriteToy(toy, std::string("roundtrip_") + WeightFormatName(format));
    absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path);
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    const Artifact& a = **artifact;
    // The toy builder lays out its weights exactly as the writer does (index
    // order, 64-byte aligned), so the whole plan must come back unchanged.
    ExpectPlansEqual(AsWritten(toy), a.plan());
    EXPECT_EQ(a.path(), path);
    EXPECT_EQ(a.file_size(), ReadBytes(path).size());
    EXPECT_EQ(a.header().version_major, kArtifactVersionMajor);
    EXPECT_EQ(a.header().weights_offset % kArtifactWeightsAlignment, 0u);
    for (size_t i = 0; i < toy.plan.weights.size(); ++i) {
      const WeightEntry& w = a.plan().weights[i];
      EXPECT_EQ(w.offset % 64, 0u);
      EXPECT_EQ(
          reinterpret_cast<uintptr_t>(a.weight_data(static_cast<int32_t>(i))) %
              64,
          0u);
      EXPECT_EQ(std::memcmp(a.weight_data(static_cast<int32_t>(i)),
                            toy.weights() + w.offset, w.size_bytes),
                0)
          << "weight " << i;
    }
    EXPECT_FALSE(FileExists(path + ".tmp"));
    std::remove(path.c_str());
  }
}

// ArtifactLoad::kRead: the same plan and weight bytes as the mapping, in private memory (not the
// file's pages), aligned as the mapping is; the corrupt-file checks run on the copy.
TEST(ArtifactTest, ReadIntoMemoryEqualsTheMapping) {
  const ToyModel toy = Toy(WeightFormat::kF32);
  const std::string path = WriteToy(toy, "read_into_memory");
  absl::StatusOr<std::unique_ptr<Artifact>> mapped = Artifact::Open(path);
  absl::StatusOr<std::unique_ptr<Artifact>> read = Artifact::Open(path, ArtifactLoad::kRead);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectPlansEqual((*mapped)->plan(), (*read)->plan());
  EXPECT_EQ((*read)->file_size(), (*mapped)->file_size());
  for (size_t i = 0; i < toy.plan.weights.size(); ++i) {
    const int32_t w = static_cast<int32_t>(i);
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*read)->weight_data(w)) % 64, 0u);
    EXPECT_NE((*read)->weight_data(w), (*mapped)->weight_data(w));
    EXPECT_EQ(std::memcmp((*read)->weight_data(w), (*mapped)->weight_data(w),
                          (*read)->plan().weights[i].size_bytes),
              0)
        << "weight " << i;
  }
  // A damaged copy is refused like a damaged mapping.
  std::vector<uint8_t> bytes = ReadBytes(path);
  bytes.pop_back();
  WriteBytes(path, bytes);
  const absl::StatusOr<std::unique_ptr<Artifact>> truncated =
      Artifact::Open(path, ArtifactLoad::kRead);
  ASSERT_FALSE(truncated.ok());
  EXPECT_THAT(std::string(truncated.status().message()), HasSubstr("truncated"));
  std::remove(path.c_str());
}

// ArtifactLoad::kReadMatrices: the mapping with the pages of the multiplied matrices replaced by
// private copies: every weight at the same place relative to the weight section, with the same
// bytes (the matrices' read from the file, the rest still mapped).
TEST(ArtifactTest, ReadMatricesEqualsTheMapping) {
  const ToyModel toy = Toy(WeightFormat::kF32);
  const std::string path = WriteToy(toy, "read_matrices");
  absl::StatusOr<std::unique_ptr<Artifact>> mapped = Artifact::Open(path);
  absl::StatusOr<std::unique_ptr<Artifact>> hybrid =
      Artifact::Open(path, ArtifactLoad::kReadMatrices);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ASSERT_TRUE(hybrid.ok()) << hybrid.status();
  ExpectPlansEqual((*mapped)->plan(), (*hybrid)->plan());
  int matrices = 0;
  for (const Step& step : (*hybrid)->plan().steps) {
    matrices += step.kind == StepKind::kLinear || step.kind == StepKind::kLmHead;
  }
  EXPECT_GT(matrices, 0) << "the toy model multiplies matrices";
  for (size_t i = 0; i < toy.plan.weights.size(); ++i) {
    const int32_t w = static_cast<int32_t>(i);
    EXPECT_EQ((*hybrid)->weight_data(w) - (*hybrid)->weight_section(),
              (*mapped)->weight_data(w) - (*mapped)->weight_section());
    EXPECT_EQ(std::memcmp((*hybrid)->weight_data(w), (*mapped)->weight_data(w),
                          (*hybrid)->plan().weights[i].size_bytes),
              0)
        << "weight " << i;
  }
  EXPECT_TRUE((*hybrid)->VerifyWeights().ok());
  std::remove(path.c_str());
}

// Pages of `path` in the page cache (mincore of a mapping of its own).
size_t ResidentPages(const std::string& path, size_t* total) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  fstat(fd, &st);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t size = static_cast<size_t>(st.st_size);
  *total = (size + page - 1) / page;
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return 0;
  std::vector<unsigned char> in_core(*total);
  size_t resident = 0;
  if (mincore(map, size, in_core.data()) == 0) {
    for (unsigned char c : in_core) resident += c & 1;
  }
  munmap(map, size);
  return resident;
}

// Opening a mapped artifact (kMap, kReadMatrices) reads its weights ahead into the page cache,
// so that a token's first use of a table row is not a synchronous disk read: after the file is
// evicted, Open brings every page of it back (polled: the read-ahead is asynchronous). A toy
// of 65536 tokens: its 16 MiB tables are far past what the kernel reads ahead of Open's own
// reads of the header and metadata.
TEST(ArtifactTest, MappedOpenReadsTheWeightsAhead) {
  ToyConfig config;
  config.vocab = 65536;
  const ToyModel toy = BuildToyModel(config);
  const std::string path = WriteToy(toy, "read_ahead");
  // Evicts the file; false if the file system keeps it in memory anyway (tmpfs).
  const auto evict = [&] {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    size_t total = 0;
    return ResidentPages(path, &total) < total;
  };
  // Polls until every page is in the page cache (at most 10 s); the pages resident.
  const auto await_resident = [&](size_t* total) {
    size_t resident = 0;
    for (int i = 0; i < 1000 && (resident = ResidentPages(path, total)) < *total; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return resident;
  };
  // The file system must honour the advice itself (some network and FUSE ones ignore it).
  if (!evict()) GTEST_SKIP() << "the file system keeps " << path << " in memory (tmpfs?)";
  {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    for (off_t at = 0; at < (off_t{64} << 20); at += off_t{4} << 20) {
      posix_fadvise(fd, at, off_t{4} << 20, POSIX_FADV_WILLNEED);
    }
    close(fd);
    size_t total = 0;
    if (await_resident(&total) < total) {
      GTEST_SKIP() << "the file system of " << path << " ignores POSIX_FADV_WILLNEED";
    }
  }
  for (ArtifactLoad load : {ArtifactLoad::kMap, ArtifactLoad::kReadMatrices}) {
    ASSERT_TRUE(evict());
    absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path, load);
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    size_t total = 0;
    EXPECT_EQ(await_resident(&total), total) << "load " << static_cast<int>(load);
  }
  std::remove(path.c_str());
}

TEST(ArtifactTest, WriterAssignsOffsetsAndSizes) {
  ToyModel toy = Toy();
  Plan plan = toy.plan;
  for (WeightEntry& w : plan.weights) {
    w.offset = 12345;  // ignored
    w.size_bytes = 1;  // recomputed
  }
  const std::string path = TempPath("assign");
  ASSERT_TRUE(WriteArtifact(path, plan, [&](size_t i, uint8_t* dst) {
                return toy.Fill(i, dst);
              }).ok());
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  ExpectPlansEqual(AsWritten(toy), (*artifact)->plan());
  std::remove(path.c_str());
}

TEST(ArtifactTest, WriterRejectsInvalidPlanAndLeavesNoFile) {
  ToyModel toy = Toy();
  toy.plan.steps[2].in0 = 999;
  const std::string path = TempPath("invalid_plan");
  const absl::Status status = WriteArtifact(
      path, toy.plan, [&](size_t i, uint8_t* dst) { return toy.Fill(i, dst); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith(path + ": invalid plan: step 2"));
  EXPECT_FALSE(FileExists(path));
  EXPECT_FALSE(FileExists(path + ".tmp"));
}

TEST(ArtifactTest, WriterReportsFillErrorWithPathAndWeight) {
  const ToyModel toy = Toy();
  const std::string path = TempPath("fill_error");
  const absl::Status status =
      WriteArtifact(path, toy.plan, [&](size_t i, uint8_t* dst) {
        if (i == 3) return absl::DataLossError("tensor data ends early");
        return toy.Fill(i, dst);
      });
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(std::string(status.message()), path + ": weight 3 '" +
                                               toy.plan.weights[3].name +
                                               "': tensor data ends early");
  EXPECT_FALSE(FileExists(path));
  EXPECT_FALSE(FileExists(path + ".tmp"));
}

TEST(ArtifactTest, WriterReportsUnwritablePath) {
  const ToyModel toy = Toy();
  const std::string path = TempPath("no_such_dir") + "/model.cortiq";
  const absl::Status status = WriteArtifact(
      path, toy.plan, [&](size_t i, uint8_t* dst) { return toy.Fill(i, dst); });
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr(path));
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

mode_t FileType(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

TEST(ArtifactTest, WriterRefusesSpecialFileOutputs) {
  // Writing PATH.tmp and renaming it over PATH replaced device nodes, FIFOs (and, as root,
  // /dev/null itself) with a regular file.
  const ToyModel toy = Toy();
  const auto fill = [&](size_t i, uint8_t* dst) { return toy.Fill(i, dst); };
  const std::string fifo = TempPath("out_fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  absl::Status status = WriteArtifact(fifo, toy.plan, fill);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            fifo + ": is a FIFO, not a regular file; refusing to overwrite it");
  EXPECT_EQ(FileType(fifo), S_IFIFO);
  EXPECT_FALSE(FileExists(fifo + ".tmp"));
  std::remove(fifo.c_str());

  const std::string dir = TempPath("out_dir");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  status = WriteArtifact(dir, toy.plan, fill);
  EXPECT_EQ(std::string(status.message()),
            dir + ": is a directory, not a regular file; refusing to overwrite it");
  EXPECT_EQ(FileType(dir), S_IFDIR);
  EXPECT_FALSE(FileExists(dir + ".tmp"));
  rmdir(dir.c_str());

  // A private stand-in for /dev/null (making device nodes needs root).
  const std::string null = TempPath("out_null");
  if (mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    status = WriteArtifact(null, toy.plan, fill);
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(null + ": is a character device, not a regular file"));
    EXPECT_EQ(FileType(null), S_IFCHR);
    EXPECT_FALSE(FileExists(null + ".tmp"));
    std::remove(null.c_str());
  }
}

TEST(ArtifactTest, WriterWritesThroughSymlinks) {
  // The rename used to replace the link itself, leaving its target unwritten.
  const ToyModel toy = Toy();
  const auto fill = [&](size_t i, uint8_t* dst) { return toy.Fill(i, dst); };
  const std::string dir = TempPath("links");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir + "/models").c_str(), 0755), 0);
  const std::string link = dir + "/link.cortiq";
  const std::string target = dir + "/models/target.cortiq";
  // Dangling, with a target relative to the link's directory.
  ASSERT_EQ(symlink("models/target.cortiq", link.c_str()), 0);
  for (int round = 0; round < 2; ++round) {  // create the target, then replace it
    const absl::Status status = WriteArtifact(link, toy.plan, fill);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(FileType(link), S_IFLNK) << "round " << round;
    EXPECT_EQ(FileType(target), S_IFREG) << "round " << round;
    absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(target);
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    ExpectPlansEqual(AsWritten(toy), (*artifact)->plan());
    EXPECT_FALSE(FileExists(link + ".tmp"));
    EXPECT_FALSE(FileExists(target + ".tmp"));
  }
  std::system(absl::StrCat("rm -rf '", dir, "'").c_str());
}

TEST(ArtifactTest, WriterLeavesAnExistingTmpAlone) {
  // A leftover PATH.tmp that is a symlink was once opened with O_TRUNC through the link (its
  // target overwritten); then the writer removed any PATH.tmp as "stale", which deleted the
  // input of `cortiq-compile X.tmp -o X` and any user's file of that name. The temporary is now
  // a fresh file (base/atomic_file.h): an existing PATH.tmp is neither followed nor removed.
  const ToyModel toy = Toy();
  const std::string victim = TempPath("victim");
  { std::ofstream(victim) << "precious"; }
  const std::string path = TempPath("stale");
  ASSERT_EQ(symlink(victim.c_str(), (path + ".tmp").c_str()), 0);
  const std::string other = TempPath("other");
  { std::ofstream(other + ".tmp") << "a user's file"; }
  for (const std::string& out : {path, other}) {
    const absl::Status status = WriteArtifact(
        out, toy.plan, [&](size_t i, uint8_t* dst) { return toy.Fill(i, dst); });
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(FileType(out), S_IFREG);
    EXPECT_TRUE(Artifact::Open(out).ok());
  }
  EXPECT_EQ(ReadText(victim), "precious");
  EXPECT_EQ(FileType(path + ".tmp"), S_IFLNK);
  EXPECT_EQ(ReadText(other + ".tmp"), "a user's file");
  for (const std::string& p : {path, path + ".tmp", other, other + ".tmp", victim}) {
    std::remove(p.c_str());
  }
}

// Child-process exit codes of WriterReportsFullDisk.
constexpr int kChildOk = 0;
constexpr int kChildSkip = 77;  // no private tmpfs possible here

// In a forked child: mounts a 64 KiB tmpfs at `mount_point` in a private mount namespace (so the
// mount never leaks, even if the child dies) and writes the ~300 KB toy artifact onto it.
int WriteToFullDisk(const ToyModel& toy, const std::string& mount_point) {
  if (geteuid() != 0) {
    // An unprivileged user may mount a tmpfs inside its own user namespace.
    const uid_t uid = geteuid();
    const gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return kChildSkip;
    std::ofstream("/proc/self/setgroups") << "deny";
    std::ofstream("/proc/self/uid_map") << "0 " << uid << " 1";
    std::ofstream("/proc/self/gid_map") << "0 " << gid << " 1";
  } else if (unshare(CLONE_NEWNS) != 0) {
    return kChildSkip;
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64k") != 0) {
    return kChildSkip;
  }
  const std::string path = mount_point + "/model.cortiq";
  const absl::Status status = WriteArtifact(
      path, toy.plan, [&](size_t i, uint8_t* dst) { return toy.Fill(i, dst); });
  std::fprintf(stderr, "WriteArtifact on a full disk: %s\n", status.ToString().c_str());
  if (status.code() != absl::StatusCode::kResourceExhausted) return 2;
  const std::string message(status.message());
  if (message.find(path + ": cannot reserve ") != 0 ||
      message.find(" bytes: No space left on device") == std::string::npos) {
    return 3;
  }
  // Neither the output nor a temporary of any name is left.
  DIR* dir = opendir(mount_point.c_str());
  if (dir == nullptr) return 5;
  int entries = 0;
  while (dirent* entry = readdir(dir)) entries += entry->d_name[0] != '.';
  closedir(dir);
  if (entries != 0) return 4;
  return kChildOk;
}

TEST(ArtifactTest, WriterReportsFullDiskInsteadOfSigbus) {
  // Stores into a mapped sparse file on a full filesystem raised SIGBUS (and left a temporary).
  const ToyModel toy = Toy();
  const std::string mount_point = TempPath("full_disk");
  ASSERT_EQ(mkdir(mount_point.c_str(), 0755), 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(WriteToFullDisk(toy, mount_point));
  int wait_status = 0;
  ASSERT_EQ(waitpid(pid, &wait_status, 0), pid);
  rmdir(mount_point.c_str());
  ASSERT_FALSE(WIFSIGNALED(wait_status))
      << "the writer was killed by signal " << WTERMSIG(wait_status);
  ASSERT_TRUE(WIFEXITED(wait_status));
  if (WEXITSTATUS(wait_status) == kChildSkip) {
    GTEST_SKIP() << "cannot mount a private tmpfs here";
  }
  EXPECT_EQ(WEXITSTATUS(wait_status), kChildOk) << "see the child's message above";
}

// A written toy artifact as bytes, for the corruption tests.
class CorruptArtifactTest : public ::testing::Test {
 protected:
  void SetUp() override {
    toy_ = Toy();
    path_ = WriteToy(
        toy_,
        std::string("corrupt_") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    bytes_ = ReadBytes(path_);
    ASSERT_GT(bytes_.size(), kArtifactHeaderSize);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  // Writes bytes_ back and returns the Open error (expects one), checking it
  // names the path.
  absl::Status Reopen() {
    WriteBytes(path_, bytes_);
    const absl::Status status = OpenStatus(path_);
    EXPECT_FALSE(status.ok());
    EXPECT_THAT(std::string(status.message()), StartsWith(path_ + ": "));
    return status;
  }

  ToyModel toy_;
  std::string path_;
  std::vector<uint8_t> bytes_;
};

TEST_F(CorruptArtifactTest, Truncated) {
  const size_t size = bytes_.size();
  bytes_.pop_back();
  const absl::Status status = Reopen();
  EXPECT_EQ(std::string(status.message()),
            path_ + ": truncated: header says " + std::to_string(size) +
                " bytes, file has " + std::to_string(size - 1));
}

TEST_F(CorruptArtifactTest, TruncatedInsideHeader) {
  bytes_.resize(20);
  EXPECT_THAT(std::string(Reopen().message()),
              HasSubstr("truncated: file has 20 bytes"));
}

TEST_F(CorruptArtifactTest, TrailingBytes) {
  bytes_.push_back(0);
  EXPECT_THAT(std::string(Reopen().message()),
              HasSubstr("corrupted: header says"));
}

TEST_F(CorruptArtifactTest, WrongMagic) {
  bytes_[0] = 'G';
  EXPECT_THAT(std::string(Reopen().message()),
              HasSubstr("not a cortiq artifact"));
}

TEST_F(CorruptArtifactTest, SmallForeignFile) {
  bytes_.assign({'G', 'G', 'U', 'F', 3, 0});
  EXPECT_THAT(std::string(Reopen().message()),
              HasSubstr("not a cortiq artifact"));
}

TEST_F(CorruptArtifactTest, EmptyFile) {
  bytes_.clear();
  EXPECT_THAT(std::string(Reopen().message()),
              HasSubstr("not a cortiq artifact"));
}

TEST_F(CorruptArtifactTest, NewerMajorVersion) {
  EditHeader(
      &bytes_,
      [](ArtifactHeader& h) {
        h.version_major = 4;
        h.version_minor = 3;
      },
      /*fix_checksum=*/false);
  const absl::Status status = Reopen();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      std::string(status.message()),
      path_ +
          ": was written by a newer cortiq (format v4.3); this build reads v3");
}

// A version no cortiq writes (a flipped byte of the header) is damage, not a newer cortiq.
TEST_F(CorruptArtifactTest, ImplausibleVersionIsDamage) {
  EditHeader(
      &bytes_,
      [](ArtifactHeader& h) {
        h.version_major = 2774138883u;
        h.version_minor = 90;
      },
      /*fix_checksum=*/false);
  const absl::Status status = Reopen();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(": damaged header: its format version reads v2774138883.90, which no "
                        "cortiq writes (this build writes v3."));
}

TEST_F(CorruptArtifactTest, OlderMajorVersion) {
  for (uint32_t major : {0u, 1u}) {
    EditHeader(
        &bytes_,
        [&](ArtifactHeader& h) {
          h.version_major = major;
          h.version_minor = 0;
        },
        true);
    EXPECT_THAT(std::string(Reopen().message()),
                HasSubstr(absl::StrCat("unsupported format v", major,
                                       ".0; this build reads v2.0 and v3.x")));
  }
  // 2.0 is read, but no later minor of 2 ever existed.
  EditHeader(
      &bytes_,
      [&](ArtifactHeader& h) {
        h.version_major = 2;
        h.version_minor = 1;
      },
      true);
  EXPECT_THAT(std::string(Reopen().message()), HasSubstr("unsupported format v2.1"));
}

TEST_F(CorruptArtifactTest, NewerMinorVersionIsAccepted) {
  EditHeader(
      &bytes_, [](ArtifactHeader& h) { h.version_minor = 7; }, true);
  WriteBytes(path_, bytes_);
  EXPECT_TRUE(OpenStatus(path_).ok()) << OpenStatus(path_);
}

TEST_F(CorruptArtifactTest, FlippedMetadataByte) {
  const ArtifactHeader h = DecodeArtifactHeader(bytes_.data());
  bytes_[h.metadata_offset + h.metadata_size / 2] ^= 0x10;
  const absl::Status status = Reopen();
  EXPECT_EQ(std::string(status.message()),
            path_ + ": corrupted: checksum mismatch");
}

TEST_F(CorruptArtifactTest, FlippedHeaderByte) {
  bytes_[kArtifactHeaderSize - 9] ^= 1;  // top byte of weights_size
  EXPECT_FALSE(Reopen().ok());
}

TEST_F(CorruptArtifactTest, FlippedWeightByteIsNotChecked) {
  // By design: weights are not checksummed (opening stays O(metadata)).
  bytes_.back() ^= 1;
  WriteBytes(path_, bytes_);
  EXPECT_TRUE(OpenStatus(path_).ok());
}

TEST_F(CorruptArtifactTest, MetadataOutsideFile) {
  EditHeader(
      &bytes_, [&](ArtifactHeader& h) { h.metadata_offset = bytes_.size(); },
      false);
  EXPECT_THAT(std::string(Reopen().message()),
              HasSubstr("corrupted: metadata ["));
}

TEST_F(CorruptArtifactTest, MetadataOverlapsHeader) {
  EditHeader(
      &bytes_, [&](ArtifactHeader& h) { h.metadata_offset = 8; }, false);
  EXPECT_THAT(std::string(Reopen().message()),
              HasSubstr("corrupted: metadata ["));
}

TEST_F(CorruptArtifactTest, MetadataSizeOverflow) {
  EditHeader(
      &bytes_, [&](ArtifactHeader& h) { h.metadata_size = ~uint64_t{0} - 10; },
      false);
  EXPECT_THAT(std::string(Reopen().message()),
              HasSubstr("corrupted: metadata ["));
}

TEST_F(CorruptArtifactTest, WeightsOffsetMisaligned) {
  EditHeader(
      &bytes_, [&](ArtifactHeader& h) { h.weights_offset += 8; }, false);
  EXPECT_THAT(std::string(Reopen().message()),
              HasSubstr("is not a multiple of 64"));
}

TEST_F(CorruptArtifactTest, WeightsOverlapMetadata) {
  EditHeader(
      &bytes_, [&](ArtifactHeader& h) { h.weights_offset = 64; }, false);
  EXPECT_THAT(std::string(Reopen().message()),
              HasSubstr("overlap the metadata"));
}

TEST_F(CorruptArtifactTest, WeightsPastEnd) {
  EditHeader(
      &bytes_, [&](ArtifactHeader& h) { h.weights_size += 64; }, false);
  EXPECT_THAT(std::string(Reopen().message()), HasSubstr("leave the file"));
}

TEST_F(CorruptArtifactTest, WeightsSizeOverflow) {
  EditHeader(
      &bytes_, [&](ArtifactHeader& h) { h.weights_size = ~uint64_t{0}; },
      false);
  EXPECT_THAT(std::string(Reopen().message()), HasSubstr("corrupted: weights"));
}

TEST_F(CorruptArtifactTest, ShrunkWeightSectionFailsValidation) {
  // A consistent header whose weight section is too small for the plan's
  // weights.
  EditHeader(
      &bytes_, [&](ArtifactHeader& h) { h.weights_size -= 64; }, true);
  EXPECT_THAT(std::string(Reopen().message()),
              HasSubstr("invalid plan: weight " +
                        std::to_string(toy_.plan.weights.size() - 1)));
}

// The plan in the metadata of `bytes` (as written: offsets and hashes assigned).
Plan WrittenPlan(const std::vector<uint8_t>& bytes) {
  const ArtifactHeader h = DecodeArtifactHeader(bytes.data());
  absl::StatusOr<Plan> plan = ParsePlan(bytes.data() + h.metadata_offset, h.metadata_size,
                                        h.version_major, h.version_minor);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : Plan();
}

// Replaces the metadata with `plan`'s encoding (same length) and fixes the
// checksum: the file is intact, but its plan is hostile.
void ReplaceMetadata(std::vector<uint8_t>* bytes, const Plan& plan) {
  const ArtifactHeader h = DecodeArtifactHeader(bytes->data());
  const std::string metadata = SerializePlan(plan);
  ASSERT_EQ(metadata.size(), h.metadata_size);
  std::memcpy(bytes->data() + h.metadata_offset, metadata.data(),
              metadata.size());
  EditHeader(
      bytes, [](ArtifactHeader&) {}, true);
}

TEST_F(CorruptArtifactTest, HostilePlanWithValidChecksum) {
  Plan plan = WrittenPlan(bytes_);
  plan.buffers[5].offset = plan.arena_bytes;  // past the arena
  ReplaceMetadata(&bytes_, plan);
  const absl::Status status = Reopen();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(": invalid plan: buffer 5: "));
}

TEST_F(CorruptArtifactTest, HostileCountWithValidChecksum) {
  // Overwrite the weight count (right after the model info) with 2^40.
  const ArtifactHeader h = DecodeArtifactHeader(bytes_.data());
  // The model record: its u32 size, the source (u32 length + bytes), four i64.
  const size_t count_at =
      h.metadata_offset + 4 + 4 + toy_.plan.model.source.size() + 4 * 8;
  const uint64_t huge = uint64_t{1} << 40;
  for (int i = 0; i < 8; ++i)
    bytes_[count_at + i] = static_cast<uint8_t>(huge >> (8 * i));
  EditHeader(
      &bytes_, [](ArtifactHeader&) {}, true);
  EXPECT_THAT(
      std::string(Reopen().message()),
      HasSubstr(
          "metadata: weight count at byte 43: count 1099511627776 exceeds"));
}

TEST_F(CorruptArtifactTest, HostileArenaBytesWithValidChecksum) {
  // The session allocated (arena_bytes + 3) / 4 floats: 0 for 2^64 - 1, then overran it.
  Plan plan = WrittenPlan(bytes_);
  plan.arena_bytes = ~uint64_t{0};
  ReplaceMetadata(&bytes_, plan);
  const absl::Status status = Reopen();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(": invalid plan: arena_bytes = 18446744073709551615 exceeds the "
                        "limit of 1099511627776 bytes"));
}

TEST_F(CorruptArtifactTest, IntactWeightsVerify) {
  WriteBytes(path_, bytes_);
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path_);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  for (int threads : {1, 2, 5}) {
    EXPECT_TRUE((*artifact)->VerifyWeights(threads).ok()) << (*artifact)->VerifyWeights(threads);
  }
}

TEST_F(CorruptArtifactTest, FlippedWeightBitsAreNamedByVerify) {
  // Not covered by the checksum: the file opens, and only VerifyWeights sees the damage.
  const Plan plan = WrittenPlan(bytes_);
  const ArtifactHeader h = DecodeArtifactHeader(bytes_.data());
  const size_t last = plan.weights.size() - 1;
  for (size_t i : {size_t{0}, size_t{3}, last}) {
    bytes_[h.weights_offset + plan.weights[i].offset + plan.weights[i].size_bytes - 1] ^= 0x10;
  }
  WriteBytes(path_, bytes_);
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path_);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  const absl::Status status = (*artifact)->VerifyWeights(2);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()),
              StartsWith(absl::StrCat(path_, ": 3 of ", plan.weights.size(),
                                      " weights are corrupted (their bytes do not match the "
                                      "XXH3-64 hashes written with them): weight 0 'embed' (bytes [0, ")));
  for (size_t i : {size_t{3}, last}) {
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(absl::StrCat("weight ", i, " '", plan.weights[i].name, "' (bytes [0, ",
                                       plan.weights[i].size_bytes, ") of its ",
                                       plan.weights[i].size_bytes, ")")));
  }
}

TEST_F(CorruptArtifactTest, VerifyWithoutHashesSaysToRecompile) {
  // A 3.0 file: the plan records no hashes.
  Plan plan = WrittenPlan(bytes_);
  plan.weight_hash_chunk_bytes = 0;
  for (WeightEntry& w : plan.weights) w.xxh3_64.clear();
  const std::string metadata = SerializePlan(plan);
  const ArtifactHeader h = DecodeArtifactHeader(bytes_.data());
  ASSERT_LE(metadata.size(), h.metadata_size);
  std::memcpy(bytes_.data() + h.metadata_offset, metadata.data(), metadata.size());
  EditHeader(
      &bytes_,
      [&](ArtifactHeader& e) {
        e.version_minor = 0;
        e.metadata_size = metadata.size();
      },
      true);
  WriteBytes(path_, bytes_);
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path_);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  const absl::Status status = (*artifact)->VerifyWeights();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(status.message()),
            path_ + ": has no weight hashes (written before artifact format 3.1): recompile the "
                    "model with this cortiq to verify its weights");
}

TEST_F(CorruptArtifactTest, OtherMetadataLayoutSaysToRecompile) {
  // The format 2.0 encoding of the plan under a 3.0 header, with a valid checksum: a file from
  // another cortiq build, not a corrupted one.
  const std::string old_layout = SerializePlanV2ForTest(toy_.plan);
  const ArtifactHeader h = DecodeArtifactHeader(bytes_.data());
  ASSERT_LE(old_layout.size(), h.weights_offset - h.metadata_offset);
  std::memcpy(bytes_.data() + h.metadata_offset, old_layout.data(), old_layout.size());
  EditHeader(
      &bytes_, [&](ArtifactHeader& e) { e.metadata_size = old_layout.size(); }, true);
  const absl::Status status = Reopen();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), StartsWith(path_ + ": metadata: "));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(absl::StrCat(" (the metadata does not match this build's format v",
                                     kArtifactVersionMajor, ".", kArtifactVersionMinor,
                                     " layout: recompile the model with this cortiq)")));
}

// Artifacts of format 2.0 (the encoding before records carried their sizes) still open, with
// the same plan, and run as the same model.
// Format 3.1: named sections (the tokenizer) between the metadata and the weights, page-aligned,
// exposed in place; a file without them has none.
TEST(ArtifactTest, NamedSectionsRoundTrip) {
  const ToyModel toy = Toy();
  std::vector<uint8_t> tokenizer(10000);
  for (size_t i = 0; i < tokenizer.size(); ++i) tokenizer[i] = static_cast<uint8_t>(i * 7);
  const std::vector<uint8_t> other = {1, 2, 3};
  const std::string path = TempPath("sections");
  ASSERT_TRUE(WriteArtifact(
                  path, toy.plan, [&](size_t i, uint8_t* dst) { return toy.Fill(i, dst); },
                  {{kTokenizerSectionName, tokenizer}, {"other", other}})
                  .ok());
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  const Artifact& a = **artifact;
  EXPECT_EQ(a.header().version_minor, kArtifactVersionMinor);
  ExpectPlansEqual(AsWritten(toy), a.plan());
  ASSERT_EQ(a.sections().size(), 2u);
  const absl::Span<const uint8_t> t = a.tokenizer_section();
  ASSERT_EQ(t.size(), tokenizer.size());
  EXPECT_EQ(std::memcmp(t.data(), tokenizer.data(), t.size()), 0);
  EXPECT_EQ(a.sections()[0].offset % kArtifactWeightsAlignment, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % kArtifactWeightsAlignment, 0u);
  EXPECT_EQ(a.section("other").size(), 3u);
  EXPECT_EQ(a.section("other")[2], 3);
  EXPECT_GE(a.sections()[1].offset, a.sections()[0].offset + tokenizer.size());
  EXPECT_GE(a.header().weights_offset, a.sections()[1].offset + other.size());
  EXPECT_TRUE(a.section("absent").empty());
  for (size_t i = 0; i < toy.plan.weights.size(); ++i) {
    const WeightEntry& w = a.plan().weights[i];
    EXPECT_EQ(std::memcmp(a.weight_data(static_cast<int32_t>(i)), toy.weights() + w.offset,
                          w.size_bytes),
              0);
  }
  std::remove(path.c_str());

  const std::string plain = WriteToy(toy, "no_sections");
  artifact = Artifact::Open(plain);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  EXPECT_TRUE((*artifact)->sections().empty());
  EXPECT_TRUE((*artifact)->tokenizer_section().empty());
  std::remove(plain.c_str());

  EXPECT_THAT(std::string(WriteArtifact(
                              path, toy.plan,
                              [&](size_t i, uint8_t* dst) { return toy.Fill(i, dst); },
                              {{"a", other}, {"a", other}})
                              .message()),
              HasSubstr("two sections are named 'a'"));
  EXPECT_FALSE(FileExists(path));
}

// Section entries that a valid checksum covers but that point at the wrong bytes.
TEST(ArtifactTest, RejectsBadSectionEntries) {
  const ToyModel toy = Toy();
  const std::vector<uint8_t> data(100, 9);
  const std::string path = TempPath("bad_sections");
  ASSERT_TRUE(WriteArtifact(
                  path, toy.plan, [&](size_t i, uint8_t* dst) { return toy.Fill(i, dst); },
                  {{kTokenizerSectionName, data}})
                  .ok());
  const std::vector<uint8_t> good = ReadBytes(path);
  const ArtifactHeader h = DecodeArtifactHeader(good.data());
  absl::StatusOr<std::unique_ptr<Artifact>> written = Artifact::Open(path);
  ASSERT_TRUE(written.ok()) << written.status();
  const uint64_t at = (*written)->sections()[0].offset;  // where the writer put it
  written->reset();
  const auto reopen_with = [&](const std::vector<SectionEntry>& sections) {
    std::vector<uint8_t> bytes = good;
    const std::string metadata = SerializeMetadata(toy.plan, sections);
    EXPECT_LE(metadata.size(), at - kArtifactHeaderSize);  // fits before the section
    std::memcpy(bytes.data() + h.metadata_offset, metadata.data(), metadata.size());
    EditHeader(&bytes, [&](ArtifactHeader& e) { e.metadata_size = metadata.size(); }, true);
    WriteBytes(path, bytes);
    return std::string(OpenStatus(path).message());
  };
  EXPECT_EQ(reopen_with({{kTokenizerSectionName, at, 100}}), "");
  EXPECT_THAT(reopen_with({{kTokenizerSectionName, at + 4, 100}}), HasSubstr("misaligned"));
  EXPECT_THAT(reopen_with({{kTokenizerSectionName, at, good.size()}}),
              HasSubstr(absl::StrCat("corrupted: section 'tokenizer' [", at, ", +")));
  EXPECT_THAT(reopen_with({{kTokenizerSectionName, 8, 100}}), HasSubstr("after the metadata"));
  EXPECT_THAT(reopen_with({{kTokenizerSectionName, h.weights_offset - 8, 100}}),
              HasSubstr("overlaps the weights"));
  EXPECT_THAT(reopen_with({{kTokenizerSectionName, at, 100}, {"x", at + 64, 8}}),
              HasSubstr(absl::StrCat("section 'x' [", at + 64,
                                     ", +8) overlaps section 'tokenizer'")));
  EXPECT_THAT(reopen_with({{kTokenizerSectionName, at, 100}, {kTokenizerSectionName, at, 0}}),
              HasSubstr("two sections are named 'tokenizer'"));
  EXPECT_THAT(reopen_with({{"", at, 100}}), HasSubstr("has no name"));
  std::remove(path.c_str());
}

TEST(ArtifactTest, OpensFormat2Artifacts) {
  for (bool fused : {false, true}) {
    ToyConfig config;
    config.layers = {ToyLayer{true, 4, -1}, ToyLayer{false, 0, -1}, ToyLayer{true, 4, 0}};
    config.post_norms = fused;
    config.fused = fused;
    const ToyModel toy = BuildToyModel(config);
    const std::string path = WriteToy(toy, "format2");
    std::vector<uint8_t> bytes = ReadBytes(path);
    ArtifactHeader h = DecodeArtifactHeader(bytes.data());
    const std::string v2 = SerializePlanV2ForTest(toy.plan);
    ASSERT_LE(v2.size(), h.weights_offset - h.metadata_offset);
    std::memcpy(bytes.data() + h.metadata_offset, v2.data(), v2.size());
    EditHeader(
        &bytes,
        [&](ArtifactHeader& e) {
          e.version_major = 2;
          e.version_minor = 0;
          e.metadata_size = v2.size();
        },
        true);
    WriteBytes(path, bytes);
    absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path);
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    EXPECT_EQ((*artifact)->header().version_major, 2u);
    ExpectPlansEqual(toy.plan, (*artifact)->plan());
    std::remove(path.c_str());
  }
}

TEST(ArtifactTest, OpenMissingFile) {
  const std::string path = TempPath("does_not_exist");
  const absl::Status status = OpenStatus(path);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()),
              StartsWith(path + ": cannot open"));
}

TEST(ArtifactTest, OpenDirectory) {
  const absl::Status status = OpenStatus(::testing::TempDir());
  EXPECT_THAT(std::string(status.message()), HasSubstr("not a regular file"));
}

TEST(ArtifactTest, OpenFifoFailsWithoutBlocking) {
  // open(O_RDONLY) of a FIFO blocks until a writer appears: Open hung forever.
  const std::string path = TempPath("fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0644), 0);
  std::future<absl::Status> opened =
      std::async(std::launch::async, [&] { return OpenStatus(path); });
  if (opened.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    // Opening the write end releases the blocked reader, so the test can still finish.
    const int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK);
    ADD_FAILURE() << "Artifact::Open blocked on a FIFO";
    opened.wait();
    if (fd >= 0) close(fd);
  } else {
    EXPECT_EQ(std::string(opened.get().message()), path + ": not a regular file");
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace cortiq
