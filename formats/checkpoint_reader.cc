// The safetensors and GGUF implementations of CheckpointReader (see checkpoint_reader.h).
#include "formats/checkpoint_reader.h"


#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "formats/absl_compat.h"
#include "base/file_util.h"
#include "formats/gguf.h"
#include "formats/gguf_gemma4.h"
#include "formats/safetensors.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

absl::Status NoSuchTensor(const std::string& source, const std::string& name) {
  return absl::NotFoundError(absl::StrCat(source, ": no tensor named ", name));
}

// Shared by both readers: the tensor list and its index.
class ReaderBase : public CheckpointReader {
 public:
  ReaderBase(std::string source, Gemma4TextConfig config)
      : source_(std::move(source)), config_(std::move(config)) {}

  const Gemma4TextConfig& config() const override { return config_; }
  const std::vector<TensorSpec>& tensors() const override { return specs_; }
  const TensorSpec* Find(const std::string& name) const override {
    const auto it = index_.find(name);
    return it == index_.end() ? nullptr : &specs_[it->second];
  }
  std::string source() const override { return source_; }

 protected:
  void Add(TensorSpec spec) {
    index_.emplace(spec.name, specs_.size());
    specs_.push_back(std::move(spec));
  }
  // Index of `name` in tensors(), or -1.
  int64_t IndexOf(const std::string& name) const {
    const auto it = index_.find(name);
    return it == index_.end() ? -1 : static_cast<int64_t>(it->second);
  }

  const std::string source_;

 private:
  const Gemma4TextConfig config_;
  std::vector<TensorSpec> specs_;
  absl::flat_hash_map<std::string, size_t> index_;
};

class SafetensorsReader final : public ReaderBase {
 public:
  SafetensorsReader(std::string source, Gemma4TextConfig config, SafetensorsCheckpoint checkpoint)
      : ReaderBase(std::move(source), std::move(config)), checkpoint_(std::move(checkpoint)) {
    for (const TensorInfo& info : checkpoint_.tensors()) {
      Add(TensorSpec{info.name, info.dtype, info.shape});
    }
  }

  std::string StoredTypeName(const std::string& name) const override {
    const TensorInfo* info = checkpoint_.Find(name);
    return info == nullptr ? std::string() : info->dtype_name;
  }

  std::string StoredName(const std::string& name) const override {
    return checkpoint_.Find(name) == nullptr ? std::string() : name;
  }

  absl::Status ReadAsF32(const std::string& name, float* out) const override {
    const TensorInfo* info = checkpoint_.Find(name);
    if (info == nullptr) return NoSuchTensor(source_, name);
    return checkpoint_.ReadAsF32(*info, out);
  }

  absl::Status ReadAsBF16(const std::string& name, uint16_t* out) const override {
    const TensorInfo* info = checkpoint_.Find(name);
    if (info == nullptr) return NoSuchTensor(source_, name);
    return checkpoint_.ReadAsBF16(*info, out);
  }

  absl::StatusOr<absl::Span<const uint8_t>> RawData(const std::string& name) const override {
    const TensorInfo* info = checkpoint_.Find(name);
    if (info == nullptr) return NoSuchTensor(source_, name);
    const std::string file = checkpoint_.files()[info->file_index];
    if (info->dtype == DType::kUnsupported) {
      return absl::UnimplementedError(absl::StrCat(file, ": unsupported type ", info->dtype_name,
                                                   " for tensor ", name,
                                                   " (F32, BF16 and F16 can be read)"));
    }
    const absl::Span<const uint8_t> data = checkpoint_.Data(*info);
    if (data.size() != info->num_bytes) {
      return absl::FailedPreconditionError(
          absl::StrCat(file, ": tensor ", name,
                       ": data are not mapped (the checkpoint was opened with map_data = false)"));
    }
    return data;
  }

 private:
  const SafetensorsCheckpoint checkpoint_;
};

class GgufReader final : public ReaderBase {
 public:
  GgufReader(Gemma4TextConfig config, GgufFile gguf)
      : ReaderBase(gguf.path(), std::move(config)), gguf_(std::move(gguf)) {
    // Built after gguf_ has its final address: the infos point into it.
    for (Gemma4GgufTensor& tensor : Gemma4TensorsFromGguf(gguf_, this->config())) {
      infos_.push_back(tensor.info);
      Add(std::move(tensor.spec));
    }
  }

  std::string StoredTypeName(const std::string& name) const override {
    const GgufTensorInfo* info = Info(name);
    return info == nullptr ? std::string() : std::string(info->type_name);
  }

  std::string StoredName(const std::string& name) const override {
    const GgufTensorInfo* info = Info(name);
    return info == nullptr ? std::string() : info->name;
  }

  absl::Status ReadAsF32(const std::string& name, float* out) const override {
    const GgufTensorInfo* info = Info(name);
    if (info == nullptr) return NoSuchTensor(source_, name);
    return Named(gguf_.ReadAsF32(*info, out), *info, name);
  }

  absl::Status ReadAsBF16(const std::string& name, uint16_t* out) const override {
    const GgufTensorInfo* info = Info(name);
    if (info == nullptr) return NoSuchTensor(source_, name);
    return Named(gguf_.ReadAsBF16(*info, out), *info, name);
  }

  absl::StatusOr<absl::Span<const uint8_t>> RawData(const std::string& name) const override {
    const GgufTensorInfo* info = Info(name);
    if (info == nullptr) return NoSuchTensor(source_, name);
    if (info->dtype == DType::kUnsupported) {
      return Named(absl::UnimplementedError(absl::StrCat(
                       source_, ": unsupported type ", ToAbsl(info->type_name), " for tensor ",
                       info->name, " (", kReadableGgufTypes, " can be read)")),
                   *info, name);
    }
    absl::StatusOr<absl::Span<const uint8_t>> data = gguf_.Data(*info);
    if (!data.ok()) return Named(data.status(), *info, name);
    return data;
  }

 private:
  const GgufTensorInfo* Info(const std::string& name) const {
    const int64_t index = IndexOf(name);
    return index < 0 ? nullptr : infos_[index];
  }

  // `status` with the HF name appended when it differs from the GGUF one.
  static absl::Status Named(absl::Status status, const GgufTensorInfo& info,
                            const std::string& name) {
    if (status.ok() || info.name == name) return status;
    return absl::Status(status.code(), absl::StrCat(status.message(), " (", name, ")"));
  }

  const GgufFile gguf_;
  std::vector<const GgufTensorInfo*> infos_;  // parallel to tensors().
};

absl::StatusOr<std::unique_ptr<CheckpointReader>> OpenGguf(const std::string& path, bool map_data) {
  absl::StatusOr<GgufFile> gguf = GgufFile::Open(path, map_data);
  if (!gguf.ok()) return gguf.status();
  // A shard of llama-gguf-split's output (split.count > 1, written into every shard) holds only
  // some of the tensors: refused by name rather than failing later on a "missing" tensor.
  if (const GgufValue* count = gguf->FindValue("split.count");
      count != nullptr && count->Int().value_or(1) > 1) {
    const GgufValue* index = gguf->FindValue("split.no");
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": is shard ", index != nullptr ? index->Int().value_or(0) + 1 : 0, " of a split GGUF (",
        "split.count = ", *count->Int(), "), which cortiq does not read; merge the shards into one "
        "file first (llama-gguf-split --merge MODEL-00001-of-N.gguf MODEL.gguf)"));
  }
  absl::StatusOr<Gemma4TextConfig> config = Gemma4ConfigFromGguf(*gguf);
  if (!config.ok()) return config.status();
  return std::unique_ptr<CheckpointReader>(
      std::make_unique<GgufReader>(*std::move(config), *std::move(gguf)));
}

absl::StatusOr<std::unique_ptr<CheckpointReader>> OpenSafetensors(const std::string& path,
                                                                  const std::string& config_dir,
                                                                  bool map_data) {
  absl::StatusOr<Gemma4TextConfig> config = LoadGemma4TextConfig(config_dir);
  if (!config.ok()) return config.status();
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(path, map_data);
  if (!checkpoint.ok()) return checkpoint.status();
  return std::unique_ptr<CheckpointReader>(
      std::make_unique<SafetensorsReader>(path, *std::move(config), *std::move(checkpoint)));
}

// The error for a directory without config.json: what a checkpoint directory holds, and the
// GGUF files in it, if any (the likely intended input).
absl::Status NotACheckpointDirectory(const std::string& path) {
  std::vector<std::string> ggufs;
  for (const std::string& name : DirectoryEntries(path)) {
    if (EndsWith(name, ".gguf")) ggufs.push_back(name);
  }
  std::string hint;
  if (!ggufs.empty()) {
    hint = absl::StrCat("; it holds ", ggufs.size() == 1 ? "a GGUF file, " : "GGUF files, ",
                        absl::StrJoin(ggufs, ", "), ": give the .gguf file itself");
  }
  return absl::NotFoundError(absl::StrCat(
      path, ": not a checkpoint directory: it has no config.json (a Hugging Face checkpoint "
      "directory holds config.json and model.safetensors, or model.safetensors.index.json with "
      "its shards)", hint));
}

}  // namespace

CheckpointReader::~CheckpointReader() = default;

absl::StatusOr<std::unique_ptr<CheckpointReader>> OpenCheckpoint(const std::string& path,
                                                                 bool map_data) {
  if (IsDirectory(path)) {
    if (!PathExists(JoinPath(path, "config.json"))) return NotACheckpointDirectory(path);
    return OpenSafetensors(path, path, map_data);
  }
  if (EndsWith(path, ".gguf")) return OpenGguf(path, map_data);
  // Opening first reports a missing path (NotFound) or one that is not a regular file.
  absl::StatusOr<ReadOnlyFile> file = ReadOnlyFile::Open(path);
  if (!file.ok()) return file.status();
  char magic[4] = {};
  if (file->size() >= sizeof(magic)) {
    CORTIQ_RETURN_IF_ERROR(file->ReadAt(0, sizeof(magic), magic));
    if (std::memcmp(magic, "GGUF", sizeof(magic)) == 0) return OpenGguf(path, map_data);
  }
  if (EndsWith(path, ".safetensors")) {
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
    return OpenSafetensors(path, dir, map_data);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path,
                   ": not a checkpoint: expected a directory (config.json + safetensors), "
                   "a .gguf file or a .safetensors file"));
}

}  // namespace cortiq
