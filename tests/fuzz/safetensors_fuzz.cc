// Fuzz target: a safetensors file → SafetensorsCheckpoint::Open (8-byte length, the JSON header
// entry by entry, dtypes, shapes, offsets, tiling of the data section), with and without the
// data mapped, then every tensor read as f32 and as bf16 and its raw bytes; the same bytes also go
// to ParseSafetensorsHeader as a bare header. An input that starts with '{' is also opened as
// the model.safetensors.index.json of a directory whose one shard is the micro seed
// (model-00001-of-00001.safetensors): the index parse and its cross-checks with the shard.
// Invariants: errors name the file; an accepted tensor's bytes lie inside the file and match its
// shape and dtype.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "formats/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Element counts the harness allocates output buffers for (a file within libFuzzer's -max_len
// holds far fewer; larger counts only occur for dtypes that cannot be read).
constexpr uint64_t kMaxElements = uint64_t{1} << 22;
// Without the mapping every read fails at once (FailedPrecondition), so only small tensors get
// output buffers there.
constexpr uint64_t kSmallElements = 1024;

// A directory holding the micro seed as its one shard; the index is written per input.
std::string g_index_dir;

void ReadAll(const cortiq::SafetensorsCheckpoint& checkpoint, bool map_data, size_t file_size) {
  using namespace cortiq;
  const std::vector<std::string> files = checkpoint.files();
  for (const TensorInfo& info : checkpoint.tensors()) {
    CORTIQ_FUZZ_CHECK(info.file_index >= 0 && static_cast<size_t>(info.file_index) < files.size(),
                      "file index of ", info.name);
    CORTIQ_FUZZ_CHECK(info.data_offset <= file_size &&
                          info.num_bytes <= file_size - info.data_offset,
                      "tensor ", info.name, " outside the file");
    CORTIQ_FUZZ_CHECK(checkpoint.Find(info.name) == &info, "Find ", info.name);
    const absl::Span<const uint8_t> raw = checkpoint.Data(info);
    CORTIQ_FUZZ_CHECK(raw.size() == (map_data ? info.num_bytes : 0), "Data of ", info.name);
    const uint64_t elements = info.num_elements();
    if (elements > (map_data ? kMaxElements : kSmallElements)) continue;
    if (info.dtype != DType::kUnsupported) {
      CORTIQ_FUZZ_CHECK(elements * DTypeSize(info.dtype) == info.num_bytes, "size of ",
                        info.name);
    }
    std::vector<float> f32(elements);
    std::vector<uint16_t> bf16(elements);
    const absl::Status a = checkpoint.ReadAsF32(info, f32.data());
    const absl::Status b = checkpoint.ReadAsBF16(info, bf16.data());
    CORTIQ_FUZZ_CHECK(a.code() == b.code(), a.ToString(), " vs ", b.ToString());
    CORTIQ_FUZZ_CHECK(!a.ok() || (map_data && info.dtype != DType::kUnsupported),
                      "read without data or of an unsupported dtype: ", info.name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  char dir[] = "/tmp/cortiq_safetensors_fuzz_XXXXXX";
  if (mkdtemp(dir) == nullptr) std::abort();
  g_index_dir = dir;
  std::atexit([] { (void)std::system(("rm -rf '" + g_index_dir + "'").c_str()); });
  const std::string shard = g_index_dir + "/model-00001-of-00001.safetensors";
  if (std::system(("cp '" CORTIQ_FUZZ_SAFETENSORS_SHARD "' '" + shard + "'").c_str()) != 0) {
    std::fprintf(stderr, "cannot copy the shard %s\n", CORTIQ_FUZZ_SAFETENSORS_SHARD);
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cortiq;
  static fuzz::MemFile file("safetensors");
  file.Set(data, size);

  if (size > 0 && data[0] == '{') {
    const std::string index = g_index_dir + "/model.safetensors.index.json";
    FILE* f = std::fopen(index.c_str(), "wb");
    if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) std::abort();
    absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(g_index_dir);
    fuzz::CheckNamesFile(checkpoint.status(), g_index_dir);
    if (checkpoint.ok()) ReadAll(*checkpoint, true, /*file_size=*/uint64_t{1} << 40);
  }

  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<TensorInfo>> header =
      ParseSafetensorsHeader(bytes, 0, size + 4096, "fuzz/header", 0);
  fuzz::CheckNamesFile(header.status(), "fuzz/header");

  for (const bool map_data : {true, false}) {
    absl::StatusOr<SafetensorsCheckpoint> checkpoint =
        SafetensorsCheckpoint::Open(file.path(), map_data);
    fuzz::CheckNamesFile(checkpoint.status(), file.path());
    if (!checkpoint.ok()) return 0;
    ReadAll(*checkpoint, map_data, size);
  }
  return 0;
}
