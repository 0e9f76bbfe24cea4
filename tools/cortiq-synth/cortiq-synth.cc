// cortiq-synth: writes a Gemma-4 E-series checkpoint directory with random weights and the real
// config layout of a preset (tiny, e2b, e4b), streaming tensor by tensor so an E4B-sized bf16
// checkpoint (~16 GB) needs only a few MB of RAM; with a Gemma-4-shaped tokenizer
// (synth_tokenizer.h) so that llama.cpp's converter accepts it.
//
// Every file is written under a temporary name and renamed into place only once all of them are
// complete, so a failure (a full disk, a file size limit) leaves no truncated model.safetensors,
// and no shard set without its index, that a reader could mistake for a checkpoint: the
// temporary files are removed, and the directory too if this run created it.
//
// Nor does it replace another checkpoint: a file it would write over must be empty, the same
// bytes it is about to write, or in a directory of its own earlier output (weights carrying its
// safetensors mark, or its own tokenizer.json); `-o` naming a real checkpoint is refused.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "formats/model_config.h"
#include "formats/safetensors.h"
#include "formats/safetensors_writer.h"
#include "compiler/import/gemma4_tensors.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "base/status_macros.h"
#include "tools/common/flags.h"
#include "tools/cortiq-synth/synth_tokenizer.h"

namespace cortiq {
namespace {

// The command line (see main for the flags).
struct SynthFlags {
  std::string preset = "tiny";
  std::string dtype = "bf16";
  int64_t seed = 1;
  std::string output;
  bool metadata_only = false;
  int64_t max_shard_mb = 4096;
};
SynthFlags flags_values;

}  // namespace
}  // namespace cortiq

namespace cortiq {
namespace {

// Text-config fields of a preset (HF Gemma4TextConfig names; values from the spec §1 table).
struct Preset {
  int64_t vocab_size, hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
      num_key_value_heads, head_dim, global_head_dim, sliding_window, num_kv_shared_layers,
      hidden_size_per_layer_input;
  int full_every;  // layer i is full attention iff (i + 1) % full_every == 0
  bool use_double_wide_mlp;
};

absl::StatusOr<Preset> FindPreset(const std::string& name) {
  // tiny = the shape of the golden tiny-a checkpoint.
  if (name == "tiny") return Preset{512, 64, 128, 8, 4, 2, 16, 32, 8, 4, 16, 4, false};
  if (name == "e2b") return Preset{262144, 1536, 6144, 35, 8, 1, 256, 512, 512, 20, 256, 5, true};
  if (name == "e4b") return Preset{262144, 2560, 10240, 42, 8, 2, 256, 512, 512, 18, 256, 6, false};
  return absl::InvalidArgumentError(
      absl::StrCat("--preset must be tiny, e2b or e4b, not '", name, "'"));
}

// The multimodal config.json of the official releases: the decoder under "text_config".
llvm::json::Object ConfigJson(const Preset& p, const std::string& dtype) {
  llvm::json::Array layer_types;
  for (int64_t i = 0; i < p.num_hidden_layers; ++i) {
    layer_types.push_back((i + 1) % p.full_every == 0 ? "full_attention" : "sliding_attention");
  }
  const char* torch_dtype = dtype == "f32" ? "float32" : "bfloat16";
  llvm::json::Object text{
      {"model_type", "gemma4_text"},
      {"vocab_size", p.vocab_size},
      {"vocab_size_per_layer_input", p.vocab_size},
      {"hidden_size", p.hidden_size},
      {"intermediate_size", p.intermediate_size},
      {"num_hidden_layers", p.num_hidden_layers},
      {"num_attention_heads", p.num_attention_heads},
      {"num_key_value_heads", p.num_key_value_heads},
      {"head_dim", p.head_dim},
      {"global_head_dim", p.global_head_dim},
      {"sliding_window", p.sliding_window},
      {"num_kv_shared_layers", p.num_kv_shared_layers},
      {"hidden_size_per_layer_input", p.hidden_size_per_layer_input},
      {"use_double_wide_mlp", p.use_double_wide_mlp},
      {"layer_types", std::move(layer_types)},
      {"rope_parameters",
       llvm::json::Object{
           {"full_attention", llvm::json::Object{{"partial_rotary_factor", 0.25},
                                                 {"rope_theta", 1000000.0},
                                                 {"rope_type", "proportional"}}},
           {"sliding_attention",
            llvm::json::Object{{"rope_theta", 10000.0}, {"rope_type", "default"}}}}},
      {"final_logit_softcapping", 30.0},
      {"rms_norm_eps", 1e-6},
      {"hidden_activation", "gelu_pytorch_tanh"},
      {"max_position_embeddings", 131072},
      {"tie_word_embeddings", true},
      {"attention_k_eq_v", false},
      {"attention_bias", false},
      {"enable_moe_block", false},
      // As in the released configs, the mixture-of-experts and other unused fields are present
      // and null (llama.cpp's converter looks some of them up).
      {"moe_intermediate_size", nullptr},
      {"num_experts", nullptr},
      {"top_k_experts", nullptr},
      {"num_global_key_value_heads", nullptr},
      {"use_bidirectional_attention", nullptr},
      {"bos_token_id", 2},
      {"eos_token_id", 1},
      {"pad_token_id", 0},
      {"dtype", torch_dtype},
  };
  return llvm::json::Object{
      {"architectures", llvm::json::Array{"Gemma4ForConditionalGeneration"}},
      {"model_type", "gemma4"},
      {"dtype", torch_dtype},
      {"tie_word_embeddings", true},
      {"text_config", std::move(text)},
  };
}

// splitmix64: a small, fast, well-mixed generator; one stream per tensor so the weights do not
// depend on the order tensors are written in.
struct SplitMix64 {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float Uniform() { return static_cast<float>(static_cast<int64_t>(Next() >> 11) * 0x1.0p-52 - 1.0); }
};

// 64-bit FNV-1a: unlike absl::Hash, the same in every process, so a seed names one set of
// weights.
uint64_t StableHash(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

// Value distribution of a tensor, chosen so activations stay O(1) through every layer:
// norm gains 1 ± 0.2, layer_scalar in [0.6, 1.0], matrices uniform with variance 1/in (so
// W·x keeps the scale of x), embedding rows with variance 1/hidden (× sqrt(hidden) at lookup).
void FillTensor(const TensorSpec& spec, uint64_t seed, std::vector<float>& chunk,
                uint64_t begin, size_t count) {
  SplitMix64 rng{seed ^ StableHash(spec.name) ^ (begin * 0x9E3779B97F4A7C15ull)};
  const bool is_norm = absl::StrContains(spec.name, "norm.weight");
  const bool is_scalar = absl::EndsWith(spec.name, "layer_scalar");
  float bound = 1.0f;
  if (spec.shape.size() == 2) bound = std::sqrt(3.0f / static_cast<float>(spec.shape[1]));
  chunk.resize(count);
  for (size_t i = 0; i < count; ++i) {
    float u = rng.Uniform();
    chunk[i] = is_norm ? 1.0f + 0.2f * u : is_scalar ? 0.8f + 0.2f * u : bound * u;
  }
}

// Largest --max-shard-mb: 2^24 MiB = 16 TiB, far above any checkpoint, and small enough that the
// size in bytes (<< 20) cannot overflow 64 bits.
constexpr uint64_t kMaxShardMb = uint64_t{1} << 24;

// Suffix of the temporary name of each output file until the whole checkpoint is written.
constexpr char kPartialSuffix[] = ".partial";

// The files of one run, written under temporary names: Commit() renames them all into place,
// Abandon() removes them (and the output directory if the run created it).
class StagedFiles {
 public:
  StagedFiles(std::string dir, bool created_dir)
      : dir_(std::move(dir)), created_dir_(created_dir) {}

  // The temporary path to write `name` (a file of the output directory) to. It is registered
  // before anything is written, so that Abandon() also removes a file whose creation failed
  // halfway.
  std::string Stage(const std::string& name) {
    const std::string final_path = JoinPath(dir_, name);
    staged_.emplace_back(final_path + kPartialSuffix, final_path);
    return staged_.back().first;
  }

  // Renames every staged file to its final name, in staging order, so that the index (staged
  // last) appears only after its shards. On error the files not yet renamed stay staged, for
  // Abandon().
  absl::Status Commit() {
    for (size_t i = 0; i < staged_.size(); ++i) {
      const auto& [temporary, final_path] = staged_[i];
      if (::rename(temporary.c_str(), final_path.c_str()) != 0) {
        const absl::Status status = absl::InternalError(absl::StrCat(
            final_path, ": cannot rename ", temporary, " into place: ", std::strerror(errno)));
        staged_.erase(staged_.begin(), staged_.begin() + static_cast<ptrdiff_t>(i));
        return status;
      }
    }
    staged_.clear();
    return absl::OkStatus();
  }

  // The names of the files staged so far.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [temporary, final_path] : staged_) {
      out.push_back(final_path.substr(final_path.find_last_of('/') + 1));
    }
    return out;
  }

  // Best-effort removal of the staged files, then of the directory if this run created it (rmdir
  // leaves it alone if anything else is in it).
  void Abandon() {
    for (const auto& [temporary, final_path] : staged_) ::unlink(temporary.c_str());
    staged_.clear();
    if (created_dir_) ::rmdir(dir_.c_str());
  }

 private:
  std::string dir_;
  bool created_dir_;
  std::vector<std::pair<std::string, std::string>> staged_;  // (temporary, final) paths.
};

// Writes `text` to `path` (created or truncated), checking every write and the close: an
// llvm::raw_fd_ostream would abort the process on a write error (e.g. ENOSPC) instead.
absl::Status WriteTextFile(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
  }
  const char* data = text.data();
  size_t size = text.size();
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat(path, ": write failed: ", std::strerror(error)));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    return absl::InternalError(absl::StrCat(path, ": close failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// The `__metadata__` entry every safetensors file of cortiq-synth carries, by which a later run
// knows the directory as its own output (CheckOwnDirectory).
constexpr char kGeneratorKey[] = "generator";
constexpr char kGeneratorValue[] = "cortiq-synth";

absl::Status WriteShard(const std::string& path, const std::vector<TensorSpec>& tensors,
                        uint64_t seed) {
  CORTIQ_ASSIGN_OR_RETURN(
      SafetensorsWriter writer,
      SafetensorsWriter::Create(path, tensors,
                                {{"format", "pt"}, {kGeneratorKey, kGeneratorValue}}));
  std::vector<float> chunk;
  constexpr uint64_t kChunk = 1 << 20;
  for (const TensorSpec& spec : tensors) {
    uint64_t n = 1;
    for (int64_t d : spec.shape) n *= static_cast<uint64_t>(d);
    for (uint64_t begin = 0; begin < n; begin += kChunk) {
      size_t count = static_cast<size_t>(std::min(kChunk, n - begin));
      FillTensor(spec, seed, chunk, begin, count);
      CORTIQ_RETURN_IF_ERROR(writer.AppendF32(chunk));
    }
  }
  return writer.Finish();
}

// The text files of a checkpoint, name -> content: `config_text` as config.json and the
// tokenizer files of a vocabulary of `vocab_size` ids.
absl::StatusOr<std::map<std::string, std::string>> TextFiles(const std::string& config_text,
                                                             int64_t vocab_size) {
  CORTIQ_ASSIGN_OR_RETURN(SynthTokenizerFiles tokenizer, MakeSynthTokenizer(vocab_size));
  return std::map<std::string, std::string>{
      {"config.json", config_text},
      {"tokenizer.json", std::move(tokenizer.tokenizer_json)},
      {"tokenizer_config.json", std::move(tokenizer.tokenizer_config_json)},
      {"generation_config.json", std::move(tokenizer.generation_config_json)}};
}

// Writes `texts` under their staged names.
absl::Status WriteTextFiles(const std::map<std::string, std::string>& texts, StagedFiles& files) {
  for (const auto& [name, text] : texts) {
    CORTIQ_RETURN_IF_ERROR(WriteTextFile(files.Stage(name), text));
  }
  return absl::OkStatus();
}

// The preset's config.json text, checked by the real reader (which also gives the config the
// tensor list follows from).
absl::StatusOr<std::pair<std::string, Gemma4TextConfig>> MakeConfig(const Preset& preset,
                                                                    const std::string& dtype_flag) {
  std::string config_text;
  llvm::raw_string_ostream os(config_text);
  os << llvm::formatv("{0:2}", llvm::json::Value(ConfigJson(preset, dtype_flag)));
  os.flush();
  CORTIQ_ASSIGN_OR_RETURN(Gemma4TextConfig config,
                          ParseGemma4TextConfig(config_text, "generated config.json"));
  return std::make_pair(config_text + "\n", config);
}

// True if `path` is a safetensors file whose `__metadata__` names cortiq-synth as its generator.
bool HasGeneratorMark(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char length_bytes[8];
  std::string header;
  bool ok = ::pread(fd, length_bytes, 8, 0) == 8;
  if (ok) {
    uint64_t length = 0;
    for (int i = 7; i >= 0; --i) length = length << 8 | length_bytes[i];
    ok = length <= kMaxSafetensorsHeaderBytes;
    if (ok) {
      header.resize(length);
      ok = ::pread(fd, header.data(), length, 8) == static_cast<ssize_t>(length);
    }
  }
  ::close(fd);
  if (!ok) return false;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(header);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return false;
  }
  const llvm::json::Object* root = parsed->getAsObject();
  const llvm::json::Object* metadata = root ? root->getObject("__metadata__") : nullptr;
  if (metadata == nullptr) return false;
  const llvm::Optional<llvm::StringRef> generator = metadata->getString(kGeneratorKey);
  return generator && *generator == kGeneratorValue;
}

// A weights file of a checkpoint directory: model.safetensors, or the index and shards
// (model-NNNNN-of-MMMMM.safetensors) of a sharded one.
bool IsWeightsFile(const std::string& name) {
  return name == "model.safetensors" || name == "model.safetensors.index.json" ||
         (absl::StartsWith(name, "model-") && absl::EndsWith(name, ".safetensors"));
}


// True if the weights file `name` of `dir` (whose entries are `names`) is cortiq-synth's own: a
// safetensors file carrying the generator mark, or an index whose shards beside it all do (at
// least one). Only such a file may be replaced or removed: ownership is decided per file, so that
// real weights beside a synthetic tokenizer (--metadata-only writes one there) are never lost.
bool OwnWeightsFile(const std::string& dir, const std::string& name,
                    const std::vector<std::string>& names) {
  if (absl::EndsWith(name, ".safetensors")) return HasGeneratorMark(JoinPath(dir, name));
  bool any = false;
  for (const std::string& other : names) {
    if (other == name || !IsWeightsFile(other) || !absl::EndsWith(other, ".safetensors")) continue;
    if (!HasGeneratorMark(JoinPath(dir, other))) return false;
    any = true;
  }
  return any;
}

// Checks that this run may write its files into the existing directory `dir`: `texts` maps the
// names of the text files it writes to their contents, and with `weights` it also writes
// model.safetensors (or an index and its model-NNNNN-of-MMMMM shards). A file already there is
// replaced only if it is empty or this tool's own: a weights file by OwnWeightsFile; a text file
// if it holds exactly the text this run writes, or the directory's weights are its own or its
// tokenizer.json is this run's (the output of a version that did not mark its weights; their
// weights are then refused, to be removed by hand). Otherwise a real checkpoint's weights,
// config or tokenizer would be lost. Errors: AlreadyExists naming the first such file.
absl::Status CheckOwnDirectory(const std::string& dir,
                               const std::map<std::string, std::string>& texts, bool weights) {
  const std::vector<std::string> names = DirectoryEntries(dir);
  const auto non_empty = [&](const std::string& name) {
    struct stat st;
    return ::stat(JoinPath(dir, name).c_str(), &st) == 0 &&
           !(S_ISREG(st.st_mode) && st.st_size == 0);
  };
  const auto same_text = [&](const std::string& name) {
    absl::StatusOr<std::string> old =
        ReadFileToString(JoinPath(dir, name), texts.at(name).size() + 1);
    return old.ok() && *old == texts.at(name);
  };
  bool own_texts = texts.count("tokenizer.json") > 0 &&
                   std::count(names.begin(), names.end(), "tokenizer.json") > 0 &&
                   same_text("tokenizer.json");
  for (const std::string& name : names) {
    if (absl::EndsWith(name, ".safetensors") && IsWeightsFile(name) &&
        HasGeneratorMark(JoinPath(dir, name))) {
      own_texts = true;
    }
  }
  for (const std::string& name : names) {
    const bool text = texts.count(name) > 0;
    if (!text && !(weights && IsWeightsFile(name))) continue;  // not written by this run
    if (!non_empty(name)) continue;
    const bool own = text ? same_text(name) || own_texts : OwnWeightsFile(dir, name, names);
    if (!own) {
      // Beside its own texts, unmarked weights are those of a version before the mark (or real
      // ones given its tokenizer): said so, since "not written by cortiq-synth" would puzzle
      // the user of an older build's output.
      return absl::AlreadyExistsError(absl::StrCat(
          JoinPath(dir, name),
          own_texts ? ": exists without cortiq-synth's mark (an earlier version's output, or "
                      "other weights beside its tokenizer); refusing to replace it: remove it "
                      "first or choose another directory"
                    : ": exists and was not written by cortiq-synth; refusing to replace a "
                      "checkpoint's files: remove them first or choose another directory"));
    }
  }
  return absl::OkStatus();
}

// --metadata-only: config.json and the tokenizer files into `dir`. A config.json already there
// must describe the same shape (the files would otherwise disagree with the weights beside them).
absl::Status WriteMetadata(const Preset& preset, const std::string& dtype_flag,
                           const std::string& dir, StagedFiles& files) {
  CORTIQ_ASSIGN_OR_RETURN(auto made, MakeConfig(preset, dtype_flag));
  const Gemma4TextConfig& config = made.second;
  if (PathExists(JoinPath(dir, "config.json"))) {
    CORTIQ_ASSIGN_OR_RETURN(Gemma4TextConfig existing, LoadGemma4TextConfig(dir));
    const std::pair<const char*, std::pair<int64_t, int64_t>> fields[] = {
        {"vocab_size", {existing.vocab_size, config.vocab_size}},
        {"hidden_size", {existing.hidden_size, config.hidden_size}},
        {"intermediate_size", {existing.intermediate_size, config.intermediate_size}},
        {"num_hidden_layers", {existing.num_hidden_layers, config.num_hidden_layers}},
        {"num_kv_shared_layers", {existing.num_kv_shared_layers, config.num_kv_shared_layers}},
    };
    for (const auto& [name, values] : fields) {
      if (values.first != values.second) {
        return absl::InvalidArgumentError(absl::StrCat(
            JoinPath(dir, "config.json"), ": ", name, " is ", values.first, ", preset ",
            flags_values.preset, " has ", values.second, " (--metadata-only)"));
      }
    }
  }
  CORTIQ_ASSIGN_OR_RETURN(auto texts, TextFiles(made.first, preset.vocab_size));
  CORTIQ_RETURN_IF_ERROR(CheckOwnDirectory(dir, texts, /*weights=*/false));
  return WriteTextFiles(texts, files);
}

// Writes every file of the checkpoint under its staged (temporary) name.
// A directory this run did not create (`created_dir` false) must be its own (CheckOwnDirectory).
absl::Status WriteCheckpoint(const Preset& preset, const std::string& dtype_flag, DType dtype,
                             uint64_t max_shard, const std::string& dir, bool created_dir,
                             StagedFiles& files) {
  CORTIQ_ASSIGN_OR_RETURN(auto made, MakeConfig(preset, dtype_flag));
  const Gemma4TextConfig& config = made.second;
  CORTIQ_ASSIGN_OR_RETURN(auto texts, TextFiles(made.first, preset.vocab_size));
  if (!created_dir) CORTIQ_RETURN_IF_ERROR(CheckOwnDirectory(dir, texts, /*weights=*/true));
  CORTIQ_RETURN_IF_ERROR(WriteTextFiles(texts, files));

  std::vector<TensorSpec> tensors = Gemma4TextTensors(config, dtype);
  // As in the official releases: the KV-shared layers still ship k/v projections (ignored).
  for (int64_t l = config.first_kv_shared_layer(); l < config.num_hidden_layers; ++l) {
    int64_t width = config.num_key_value_heads * config.layer_head_dim(l);
    for (const char* proj : {"k_proj", "v_proj"}) {
      tensors.push_back(TensorSpec{
          absl::StrCat(kMultimodalTextPrefix, "layers.", l, ".self_attn.", proj, ".weight"),
          dtype, {width, config.hidden_size}});
    }
  }
  std::vector<SafetensorsShard> shards = PlanSafetensorsShards(tensors, max_shard);
  const uint64_t seed = flags_values.seed;
  if (shards.size() == 1) {
    return WriteShard(files.Stage("model.safetensors"), shards[0].tensors, seed);
  }
  for (const SafetensorsShard& shard : shards) {
    std::fprintf(stderr, "cortiq-synth: writing %s\n", shard.file_name.c_str());
    CORTIQ_RETURN_IF_ERROR(WriteShard(files.Stage(shard.file_name), shard.tensors, seed));
  }
  return WriteSafetensorsIndex(files.Stage("model.safetensors.index.json"), shards);
}

absl::Status Run(const std::string& dir) {
  CORTIQ_ASSIGN_OR_RETURN(Preset preset, FindPreset(flags_values.preset));
  const std::string dtype_flag = flags_values.dtype;
  if (dtype_flag != "bf16" && dtype_flag != "f32") {
    return absl::InvalidArgumentError(
        absl::StrCat("--dtype must be bf16 or f32, not '", dtype_flag, "'"));
  }
  const DType dtype = dtype_flag == "f32" ? DType::kF32 : DType::kBF16;
  // 0 would put every tensor in a shard of its own (none fits in 0 bytes): surely a mistake.
  const int64_t max_shard_mb = flags_values.max_shard_mb;
  if (max_shard_mb < 1 || static_cast<uint64_t>(max_shard_mb) > kMaxShardMb) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-shard-mb must be between 1 and ", kMaxShardMb, ", not ", max_shard_mb));
  }
  if (flags_values.metadata_only) {
    if (!IsDirectory(dir)) {
      return absl::InvalidArgumentError(
          absl::StrCat(dir, ": not a directory (--metadata-only writes into an existing one)"));
    }
    StagedFiles files(dir, /*created_dir=*/false);
    absl::Status status = WriteMetadata(preset, dtype_flag, dir, files);
    if (status.ok()) status = files.Commit();
    if (!status.ok()) files.Abandon();
    return status;
  }
  const bool created_dir = ::mkdir(dir.c_str(), 0755) == 0;
  if (!created_dir && errno != EEXIST) {
    return absl::InternalError(
        absl::StrCat(dir, ": cannot create directory: ", std::strerror(errno)));
  }
  if (!IsDirectory(dir)) return absl::InvalidArgumentError(absl::StrCat(dir, ": not a directory"));

  StagedFiles files(dir, created_dir);
  absl::Status status = WriteCheckpoint(preset, dtype_flag, dtype,
                                        static_cast<uint64_t>(max_shard_mb) << 20, dir,
                                        created_dir, files);
  const std::vector<std::string> written = files.names();
  if (status.ok()) status = files.Commit();
  if (!status.ok()) {
    files.Abandon();
    return status;
  }
  // The weights of an earlier run in another layout (a sharded one before a single file, or
  // other shards) would be left beside the new ones, and readers take the index first: they
  // are removed (the directory is this tool's own output: CheckOwnDirectory).
  if (!created_dir) {
    const std::vector<std::string> names = DirectoryEntries(dir);
    std::vector<std::string> stale;  // decided before any goes (an index looks at its shards)
    for (const std::string& name : names) {
      if (IsWeightsFile(name) && std::find(written.begin(), written.end(), name) == written.end() &&
          OwnWeightsFile(dir, name, names)) {
        stale.push_back(name);
      }
    }
    for (const std::string& name : stale) {
      if (::unlink(JoinPath(dir, name).c_str()) == 0) {
        std::fprintf(stderr, "cortiq-synth: removed %s of an earlier run\n", name.c_str());
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) {
  cortiq::SynthFlags& f = cortiq::flags_values;
  cortiq::Flags flags("cortiq-synth", "--preset tiny|e2b|e4b -o DIR [options]",
                      "Writes a Gemma-4 E-series checkpoint directory with random weights and a "
                      "synthetic Gemma-4-shaped tokenizer.");
  flags.AddString("-o, --output", "DIR", &f.output,
                  "the checkpoint directory to write (required; created if missing)");
  flags.AddString("--preset", "NAME", &f.preset,
                  "model shape: tiny (tiny-a: 8 layers, hidden 64), e2b or e4b");
  flags.AddString("--dtype", "bf16|f32", &f.dtype,
                  "tensor dtype: bf16 (as the official releases) or f32");
  flags.AddInt("-s, --seed", "N", &f.seed, 0, INT64_MAX,
               "random seed; the same seed gives the same weights");
  flags.AddInt("--max-shard-mb", "N", &f.max_shard_mb, INT64_MIN, INT64_MAX,
               "largest safetensors shard in MiB; a model larger than one shard gets "
               "model.safetensors.index.json + model-0000N-of-0000M.safetensors (default: 4096)");
  flags.AddBool("--metadata-only", &f.metadata_only,
                "write every file but the weights (config.json, tokenizer.json, "
                "tokenizer_config.json, generation_config.json) into an existing directory, e.g. "
                "one holding the shards of an earlier run; a config.json already there must have "
                "the preset's shape");
  std::vector<std::string> args = flags.ParseOrExit(argc, argv);
  const std::string dir = f.output;
  if (!args.empty() || dir.empty()) {
    std::fprintf(stderr, "cortiq-synth: %s (see --help)\n",
                 dir.empty() ? "-o DIR is required"
                             : ("unexpected argument " + args.front()).c_str());
    return 1;
  }
  // Exceeding the file size limit (ulimit -f) then fails the write with EFBIG, which Run cleans
  // up after like a full disk, instead of killing the process with SIGXFSZ mid-file.
  std::signal(SIGXFSZ, SIG_IGN);
  absl::Status status = cortiq::Run(dir);
  if (!status.ok()) {
    std::fprintf(stderr, "cortiq-synth: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  if (f.metadata_only) {
    std::printf("cortiq-synth: wrote the config and tokenizer of preset %s into %s\n",
                f.preset.c_str(), dir.c_str());
  } else {
    std::printf("cortiq-synth: wrote %s (preset %s, %s)\n", dir.c_str(),
                f.preset.c_str(), f.dtype.c_str());
  }
  return 0;
}
