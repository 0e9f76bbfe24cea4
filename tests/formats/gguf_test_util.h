// Test helper for the GGUF reader tests: GgufBuilder writes GGUF bytes (any version, counts,
// alignment, key types, tensor placement, including invalid ones), and CopyGemma4Gguf rewrites
// a real GGUF's decoder (its gemma4 keys and tensors) with changes, e.g. Q8_0 weights.
#ifndef CORTIQ_TESTS_COMPILER_CHECKPOINT_GGUF_TEST_UTIL_H_
#define CORTIQ_TESTS_COMPILER_CHECKPOINT_GGUF_TEST_UTIL_H_

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/gguf.h"
#include "formats/model_config.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace testing_gguf {

// The status message as std::string (absl::string_view prints as a char array in gtest).
inline std::string Msg(const absl::Status& status) { return std::string(status.message()); }

template <typename T>
std::string Bytes(T value) {
  std::string bytes(sizeof(T), '\0');
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

inline std::string GgufString(const std::string& text) {
  return Bytes<uint64_t>(text.size()) + text;
}

inline uint32_t TypeNumber(GgufValueType type) { return static_cast<uint32_t>(type); }

// Serializes a GGUF file. Values are given as their encoded bytes after the key, so any
// (including invalid) encoding can be written; the typed helpers cover the valid ones.
class GgufBuilder {
 public:
  struct TensorEntry {
    std::string name;
    std::vector<int64_t> ne;
    uint32_t type = 0;
    std::string data;
    std::optional<uint64_t> offset;  // relative to the data section; auto-placed if absent.
  };

  std::string magic = "GGUF";
  uint32_t version = 3;
  uint64_t alignment = 32;  // placement only; write general.alignment with U32() to declare it.
  std::optional<uint64_t> tensor_count;  // override of the written counts.
  std::optional<uint64_t> kv_count;

  // A key with its value bytes (type included).
  GgufBuilder& Raw(const std::string& key, const std::string& typed_value) {
    kvs_.push_back(GgufString(key) + typed_value);
    return *this;
  }
  template <typename T>
  GgufBuilder& Scalar(const std::string& key, GgufValueType type, T value) {
    return Raw(key, Bytes<uint32_t>(TypeNumber(type)) + Bytes<T>(value));
  }
  GgufBuilder& U32(const std::string& key, uint32_t v) {
    return Scalar(key, GgufValueType::kU32, v);
  }
  GgufBuilder& I32(const std::string& key, int32_t v) {
    return Scalar(key, GgufValueType::kI32, v);
  }
  GgufBuilder& F32(const std::string& key, float v) { return Scalar(key, GgufValueType::kF32, v); }
  GgufBuilder& Bool(const std::string& key, bool v) {
    return Scalar(key, GgufValueType::kBool, static_cast<uint8_t>(v));
  }
  GgufBuilder& Str(const std::string& key, const std::string& v) {
    return Raw(key, Bytes<uint32_t>(TypeNumber(GgufValueType::kString)) + GgufString(v));
  }
  template <typename T>
  GgufBuilder& Array(const std::string& key, GgufValueType element, const std::vector<T>& values) {
    std::string bytes = Bytes<uint32_t>(TypeNumber(GgufValueType::kArray)) +
                        Bytes<uint32_t>(TypeNumber(element)) + Bytes<uint64_t>(values.size());
    for (const T& v : values) bytes += Bytes<T>(v);
    return Raw(key, bytes);
  }
  GgufBuilder& BoolArray(const std::string& key, const std::vector<bool>& values) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return Array(key, GgufValueType::kBool, bytes);
  }
  GgufBuilder& StrArray(const std::string& key, const std::vector<std::string>& values) {
    std::string bytes = Bytes<uint32_t>(TypeNumber(GgufValueType::kArray)) +
                        Bytes<uint32_t>(TypeNumber(GgufValueType::kString)) +
                        Bytes<uint64_t>(values.size());
    for (const std::string& v : values) bytes += GgufString(v);
    return Raw(key, bytes);
  }
  // Re-encodes a parsed value under `key`.
  GgufBuilder& Value(const std::string& key, const GgufValue& value) {
    std::string bytes;
    if (value.is_array()) {
      bytes = Bytes<uint32_t>(TypeNumber(GgufValueType::kArray)) +
              Bytes<uint32_t>(TypeNumber(value.type())) + Bytes<uint64_t>(value.size());
    } else {
      bytes = Bytes<uint32_t>(TypeNumber(value.type()));
    }
    for (uint64_t i = 0; i < value.size(); ++i) bytes += Element(value, i);
    return Raw(key, bytes);
  }

  GgufBuilder& Tensor(const std::string& name, std::vector<int64_t> ne, uint32_t type,
                      std::string data, std::optional<uint64_t> offset = std::nullopt) {
    tensors_.push_back(TensorEntry{name, std::move(ne), type, std::move(data), offset});
    return *this;
  }

  // Byte offset where the tensor infos start / where the data section starts in Build().
  uint64_t InfosOffset() const {
    uint64_t size = 4 + 4 + 8 + 8;
    for (const std::string& kv : kvs_) size += kv.size();
    return size;
  }
  uint64_t DataOffset() const {
    uint64_t size = InfosOffset();
    for (const TensorEntry& t : tensors_) size += 8 + t.name.size() + 4 + 8 * t.ne.size() + 4 + 8;
    return (size + alignment - 1) / alignment * alignment;
  }

  std::string Build() const {
    std::string out = magic.substr(0, 4);
    out += Bytes<uint32_t>(version);
    out += Bytes<uint64_t>(tensor_count.value_or(tensors_.size()));
    out += Bytes<uint64_t>(kv_count.value_or(kvs_.size()));
    for (const std::string& kv : kvs_) out += kv;
    std::vector<uint64_t> offsets;
    uint64_t next = 0;
    for (const TensorEntry& t : tensors_) {
      const uint64_t offset = t.offset.value_or(next);
      offsets.push_back(offset);
      next = std::max(next, (offset + t.data.size() + alignment - 1) / alignment * alignment);
    }
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const TensorEntry& t = tensors_[i];
      out += GgufString(t.name);
      out += Bytes<uint32_t>(static_cast<uint32_t>(t.ne.size()));
      for (int64_t d : t.ne) out += Bytes<int64_t>(d);
      out += Bytes<uint32_t>(t.type);
      out += Bytes<uint64_t>(offsets[i]);
    }
    const uint64_t data_start = (out.size() + alignment - 1) / alignment * alignment;
    out.resize(data_start, '\0');
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const std::string& data = tensors_[i].data;
      if (data.empty()) continue;  // Lets a test place a tensor anywhere, e.g. past the end.
      const uint64_t at = data_start + offsets[i];
      if (out.size() < at + data.size()) out.resize(at + data.size(), '\0');
      // Later tensors overwrite earlier ones where they overlap (overlap tests only).
      std::memcpy(out.data() + at, data.data(), data.size());
    }
    return out;
  }

 private:
  static std::string Element(const GgufValue& value, uint64_t i) {
    switch (value.type()) {
      case GgufValueType::kU8:
        return Bytes<uint8_t>(static_cast<uint8_t>(*value.Int(i)));
      case GgufValueType::kI8:
        return Bytes<int8_t>(static_cast<int8_t>(*value.Int(i)));
      case GgufValueType::kU16:
        return Bytes<uint16_t>(static_cast<uint16_t>(*value.Int(i)));
      case GgufValueType::kI16:
        return Bytes<int16_t>(static_cast<int16_t>(*value.Int(i)));
      case GgufValueType::kU32:
        return Bytes<uint32_t>(static_cast<uint32_t>(*value.Int(i)));
      case GgufValueType::kI32:
        return Bytes<int32_t>(static_cast<int32_t>(*value.Int(i)));
      case GgufValueType::kU64:
        return Bytes<uint64_t>(static_cast<uint64_t>(*value.Int(i)));
      case GgufValueType::kI64:
        return Bytes<int64_t>(*value.Int(i));
      case GgufValueType::kF32:
        return Bytes<float>(static_cast<float>(*value.Float(i)));
      case GgufValueType::kF64:
        return Bytes<double>(*value.Float(i));
      case GgufValueType::kBool:
        return Bytes<uint8_t>(*value.Bool(i) ? 1 : 0);
      case GgufValueType::kString:
        return GgufString(std::string(*value.String(i)));
      case GgufValueType::kArray:
        break;
    }
    ADD_FAILURE() << "unexpected value type";
    return "";
  }

  std::vector<std::string> kvs_;
  std::vector<TensorEntry> tensors_;
};

// A fresh directory under the gtest temp dir, named after the running test.
inline std::string FreshDir(const std::string& tag) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = absl::StrCat(info->test_suite_name(), "_", info->name());
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  const std::string dir = absl::StrCat(::testing::TempDir(), "/cortiq_", tag, "_", name);
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string ModelPath(const std::string& name) {
  return absl::StrCat(CORTIQ_TEST_DATA_DIR, "/models/", name);
}

// How CopyGemma4Gguf writes one tensor: its ggml type and bytes, or nullopt to drop it.
struct TensorOut {
  uint32_t type;
  std::string data;
  std::optional<std::vector<int64_t>> ne = std::nullopt;  // the source's ne if absent.
};
using TensorRewrite =
    std::function<std::optional<TensorOut>(const GgufTensorInfo& info, const GgufFile& source)>;
// How CopyGemma4Gguf writes one key: false to drop it (the builder may add a replacement).
using KeyFilter = std::function<bool(const std::string& key)>;

// The bytes of `info` as stored (data must be mapped).
inline std::string StoredBytes(const GgufFile& source, const GgufTensorInfo& info) {
  absl::StatusOr<absl::Span<const uint8_t>> data = source.Data(info);
  EXPECT_TRUE(data.ok()) << Msg(data.status());
  if (!data.ok()) return "";
  return std::string(reinterpret_cast<const char*>(data->data()), data->size());
}

// A builder holding `source`'s general.architecture and gemma4.* keys (those `keep` accepts)
// and its tensors (as `rewrite` gives them; unchanged by default). Tokenizer keys are dropped.
inline GgufBuilder CopyGemma4Gguf(const GgufFile& source, const KeyFilter& keep = nullptr,
                                  const TensorRewrite& rewrite = nullptr) {
  GgufBuilder builder;
  for (const GgufKeyValue& kv : source.metadata()) {
    if (kv.key != "general.architecture" && kv.key.rfind("gemma4.", 0) != 0) continue;
    if (keep && !keep(kv.key)) continue;
    builder.Value(kv.key, kv.value);
  }
  for (const GgufTensorInfo& info : source.tensors()) {
    std::optional<TensorOut> out =
        rewrite ? rewrite(info, source)
                : std::optional<TensorOut>(TensorOut{info.type, StoredBytes(source, info)});
    if (!out.has_value()) continue;
    builder.Tensor(info.name, out->ne.value_or(info.ne), out->type, std::move(out->data));
  }
  return builder;
}

// Expects `actual` (e.g. read from GGUF) to equal `expected` (from config.json) field by field,
// and their per-layer derived quantities to agree.
inline void ExpectSameConfig(const Gemma4TextConfig& actual, const Gemma4TextConfig& expected) {
  EXPECT_EQ(actual.vocab_size, expected.vocab_size);
  EXPECT_EQ(actual.hidden_size, expected.hidden_size);
  EXPECT_EQ(actual.intermediate_size, expected.intermediate_size);
  EXPECT_EQ(actual.num_hidden_layers, expected.num_hidden_layers);
  EXPECT_EQ(actual.num_attention_heads, expected.num_attention_heads);
  EXPECT_EQ(actual.num_key_value_heads, expected.num_key_value_heads);
  EXPECT_EQ(actual.head_dim, expected.head_dim);
  EXPECT_EQ(actual.global_head_dim, expected.global_head_dim);
  EXPECT_EQ(actual.sliding_window, expected.sliding_window);
  EXPECT_EQ(actual.num_kv_shared_layers, expected.num_kv_shared_layers);
  EXPECT_EQ(actual.hidden_size_per_layer_input, expected.hidden_size_per_layer_input);
  EXPECT_EQ(actual.vocab_size_per_layer_input, expected.vocab_size_per_layer_input);
  EXPECT_EQ(actual.max_position_embeddings, expected.max_position_embeddings);
  EXPECT_EQ(actual.rms_norm_eps, expected.rms_norm_eps);
  EXPECT_EQ(actual.final_logit_softcapping, expected.final_logit_softcapping);
  EXPECT_EQ(actual.tie_word_embeddings, expected.tie_word_embeddings);
  EXPECT_EQ(actual.use_double_wide_mlp, expected.use_double_wide_mlp);
  EXPECT_EQ(actual.attention_k_eq_v, expected.attention_k_eq_v);
  EXPECT_EQ(actual.hidden_activation, expected.hidden_activation);
  EXPECT_EQ(actual.layer_types, expected.layer_types);
  for (const auto& [a, e] : {std::make_pair(&actual.rope_sliding, &expected.rope_sliding),
                             std::make_pair(&actual.rope_full, &expected.rope_full)}) {
    EXPECT_EQ(a->rope_type, e->rope_type);
    EXPECT_EQ(a->rope_theta, e->rope_theta);
    EXPECT_EQ(a->partial_rotary_factor, e->partial_rotary_factor);
  }
  ASSERT_EQ(actual.num_hidden_layers, expected.num_hidden_layers);
  for (int64_t l = 0; l < actual.num_hidden_layers; ++l) {
    SCOPED_TRACE(l);
    EXPECT_EQ(actual.is_kv_shared(l), expected.is_kv_shared(l));
    EXPECT_EQ(actual.kv_source_layer(l), expected.kv_source_layer(l));
    EXPECT_EQ(actual.layer_head_dim(l), expected.layer_head_dim(l));
    EXPECT_EQ(actual.layer_intermediate_size(l), expected.layer_intermediate_size(l));
    EXPECT_EQ(actual.rotated_pairs(l), expected.rotated_pairs(l));
  }
}

}  // namespace testing_gguf
}  // namespace cortiq

#endif  // CORTIQ_TESTS_COMPILER_CHECKPOINT_GGUF_TEST_UTIL_H_
