// Tests of formats/checkpoint_reader: OpenCheckpoint on the tiny-a safetensors
// directories and their GGUF conversions (same config, same tensors bit for bit), Q8_0 / Q4_0
// GGUF files written here from ops/quantize.h blocks, unsupported types, and path errors.
#include "formats/checkpoint_reader.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/gguf.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/quantize.h"
#include "tests/formats/gguf_test_util.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;
using testing_gguf::CopyGemma4Gguf;
using testing_gguf::ExpectSameConfig;
using testing_gguf::FreshDir;
using testing_gguf::GgufBuilder;
using testing_gguf::ModelPath;
using testing_gguf::Msg;
using testing_gguf::StoredBytes;
using testing_gguf::TensorOut;
using testing_gguf::TensorRewrite;
using testing_gguf::WriteFile;

constexpr uint32_t kQ4_0 = 2, kQ8_0 = 8, kQ8_1 = 9;

std::unique_ptr<CheckpointReader> Open(const std::string& path, bool map_data = true) {
  absl::StatusOr<std::unique_ptr<CheckpointReader>> reader = OpenCheckpoint(path, map_data);
  EXPECT_TRUE(reader.ok()) << Msg(reader.status());
  return reader.ok() ? *std::move(reader) : nullptr;
}

uint64_t Elements(const TensorSpec& spec) {
  uint64_t count = 1;
  for (int64_t dim : spec.shape) count *= static_cast<uint64_t>(dim);
  return count;
}

std::vector<float> F32(const CheckpointReader& reader, const TensorSpec& spec) {
  std::vector<float> values(Elements(spec));
  const absl::Status status = reader.ReadAsF32(spec.name, values.data());
  EXPECT_TRUE(status.ok()) << Msg(status);
  return values;
}

std::vector<uint16_t> BF16(const CheckpointReader& reader, const TensorSpec& spec) {
  std::vector<uint16_t> values(Elements(spec));
  const absl::Status status = reader.ReadAsBF16(spec.name, values.data());
  EXPECT_TRUE(status.ok()) << Msg(status);
  return values;
}

TEST(CheckpointReaderTest, SafetensorsDirectory) {
  std::unique_ptr<CheckpointReader> reader = Open(ModelPath("tiny-a-f32"));
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->source(), ModelPath("tiny-a-f32"));
  absl::StatusOr<Gemma4TextConfig> json = LoadGemma4TextConfig(ModelPath("tiny-a-f32"));
  ASSERT_TRUE(json.ok());
  ExpectSameConfig(reader->config(), *json);
  EXPECT_EQ(reader->tensors().size(), 146u);  // vision/audio towers included
  const std::string name = "model.language_model.layers.0.self_attn.q_proj.weight";
  const TensorSpec* q = reader->Find(name);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dtype, DType::kF32);
  EXPECT_EQ(q->shape, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(reader->StoredTypeName(name), "F32");
  EXPECT_EQ(reader->StoredTypeName("nope"), "");
  EXPECT_EQ(reader->Find("nope"), nullptr);
  absl::StatusOr<absl::Span<const uint8_t>> raw = reader->RawData(name);
  ASSERT_TRUE(raw.ok()) << Msg(raw.status());
  EXPECT_EQ(raw->size(), TensorBytes(q->dtype, q->shape));
  std::vector<float> values = F32(*reader, *q);
  EXPECT_EQ(std::memcmp(values.data(), raw->data(), raw->size()), 0);
  const absl::Status missing = reader->ReadAsF32("nope", values.data());
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(missing), HasSubstr("no tensor named nope"));
  EXPECT_EQ(reader->RawData("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(CheckpointReaderTest, SingleSafetensorsFile) {
  std::unique_ptr<CheckpointReader> reader =
      Open(ModelPath("tiny-a-bf16") + "/model.safetensors", false);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->config().hidden_size, 64);
  EXPECT_EQ(reader->Find("model.language_model.norm.weight")->dtype, DType::kBF16);
}

// Every tensor of the GGUF file equals the safetensors tensor of the same HF name, bit for bit.
TEST(CheckpointReaderTest, GgufF32EqualsSafetensors) {
  std::unique_ptr<CheckpointReader> gguf = Open(ModelPath("tiny-a-f32.gguf"));
  std::unique_ptr<CheckpointReader> hf = Open(ModelPath("tiny-a-f32"));
  ASSERT_NE(gguf, nullptr);
  ASSERT_NE(hf, nullptr);
  EXPECT_EQ(gguf->source(), ModelPath("tiny-a-f32.gguf"));
  ExpectSameConfig(gguf->config(), hf->config());
  EXPECT_EQ(gguf->tensors().size(), 141u);  // the 146 minus 5 vision/audio tensors
  for (const TensorSpec& spec : gguf->tensors()) {
    SCOPED_TRACE(spec.name);
    const TensorSpec* expected = hf->Find(spec.name);
    ASSERT_NE(expected, nullptr);
    EXPECT_EQ(spec.shape, expected->shape);
    EXPECT_EQ(spec.dtype, DType::kF32);
    const std::vector<float> a = F32(*gguf, spec);
    const std::vector<float> b = F32(*hf, *expected);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
    absl::StatusOr<absl::Span<const uint8_t>> raw = gguf->RawData(spec.name);
    ASSERT_TRUE(raw.ok()) << Msg(raw.status());
    EXPECT_EQ(raw->size(), TensorBytes(spec.dtype, spec.shape));
  }
  // Every decoder tensor of the safetensors file is in the GGUF file.
  for (const TensorSpec& spec : hf->tensors()) {
    if (spec.name.rfind("model.language_model.", 0) == 0) {
      EXPECT_NE(gguf->Find(spec.name), nullptr) << spec.name;
    }
  }
}

TEST(CheckpointReaderTest, GgufBF16EqualsSafetensors) {
  std::unique_ptr<CheckpointReader> gguf = Open(ModelPath("tiny-a-bf16.gguf"));
  std::unique_ptr<CheckpointReader> hf = Open(ModelPath("tiny-a-bf16"));
  ASSERT_NE(gguf, nullptr);
  ASSERT_NE(hf, nullptr);
  ExpectSameConfig(gguf->config(), hf->config());
  int bf16_tensors = 0;
  for (const TensorSpec& spec : gguf->tensors()) {
    SCOPED_TRACE(spec.name);
    const TensorSpec* expected = hf->Find(spec.name);
    ASSERT_NE(expected, nullptr);
    EXPECT_EQ(spec.shape, expected->shape);
    // llama.cpp keeps 1-D tensors (norms, layer_scalar) in F32: exact for bf16 values.
    EXPECT_EQ(spec.dtype, spec.shape.size() == 1 ? DType::kF32 : DType::kBF16);
    bf16_tensors += spec.dtype == DType::kBF16;
    EXPECT_EQ(BF16(*gguf, spec), BF16(*hf, *expected));
    const std::vector<float> a = F32(*gguf, spec);
    const std::vector<float> b = F32(*hf, *expected);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  }
  EXPECT_GT(bf16_tensors, 50);
}

TEST(CheckpointReaderTest, HeadersOnly) {
  std::unique_ptr<CheckpointReader> gguf = Open(ModelPath("tiny-a-f32.gguf"), false);
  std::unique_ptr<CheckpointReader> hf = Open(ModelPath("tiny-a-f32"), false);
  ASSERT_NE(gguf, nullptr);
  ASSERT_NE(hf, nullptr);
  ExpectSameConfig(gguf->config(), hf->config());
  const std::string name = "model.language_model.norm.weight";
  EXPECT_EQ(gguf->RawData(name).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(hf->RawData(name).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(gguf->RawData(name).status()), HasSubstr("map_data"));
  std::vector<float> values(64);
  EXPECT_EQ(hf->ReadAsF32(name, values.data()).code(), absl::StatusCode::kFailedPrecondition);
  // A GGUF file falls back to positional reads.
  EXPECT_TRUE(gguf->ReadAsF32(name, values.data()).ok());
}

// tiny-a-f32.gguf with every 2-D tensor whose rows are a multiple of 32 quantized to `type`.
std::string QuantizedTinyA(uint32_t type) {
  absl::StatusOr<GgufFile> source = GgufFile::Open(ModelPath("tiny-a-f32.gguf"));
  EXPECT_TRUE(source.ok()) << Msg(source.status());
  const TensorRewrite quantize = [type](const GgufTensorInfo& info, const GgufFile& gguf) {
    if (info.ne.size() != 2 || info.ne[0] % 32 != 0) {
      return std::optional<TensorOut>(TensorOut{info.type, StoredBytes(gguf, info)});
    }
    std::vector<float> values(info.num_elements());
    EXPECT_TRUE(gguf.ReadAsF32(info, values.data()).ok());
    const size_t n = values.size();
    std::string blocks(type == kQ8_0 ? ops::Q8_0RowBytes(n) : ops::Q4_0RowBytes(n), '\0');
    if (type == kQ8_0) {
      ops::QuantizeRowQ8_0(values.data(), n, blocks.data());
    } else {
      ops::QuantizeRowQ4_0(values.data(), n, blocks.data());
    }
    return std::optional<TensorOut>(TensorOut{type, blocks});
  };
  const std::string path = absl::StrCat(FreshDir("checkpoint_reader"), "/tiny-a-",
                                        type == kQ8_0 ? "q8_0" : "q4_0", ".gguf");
  WriteFile(path, CopyGemma4Gguf(*source, nullptr, quantize).Build());
  return path;
}

TEST(CheckpointReaderTest, QuantizedGgufReadsBack) {
  std::unique_ptr<CheckpointReader> hf = Open(ModelPath("tiny-a-f32"));
  ASSERT_NE(hf, nullptr);
  for (const uint32_t type : {kQ8_0, kQ4_0}) {
    SCOPED_TRACE(type);
    const DType dtype = type == kQ8_0 ? DType::kQ8_0 : DType::kQ4_0;
    std::unique_ptr<CheckpointReader> gguf = Open(QuantizedTinyA(type));
    ASSERT_NE(gguf, nullptr);
    ExpectSameConfig(gguf->config(), hf->config());
    int quantized = 0;
    for (const TensorSpec& spec : gguf->tensors()) {
      SCOPED_TRACE(spec.name);
      const TensorSpec* original = hf->Find(spec.name);
      ASSERT_NE(original, nullptr);
      EXPECT_EQ(spec.shape, original->shape);
      const std::vector<float> f32 = F32(*hf, *original);
      if (spec.dtype != dtype) {
        EXPECT_EQ(spec.dtype, DType::kF32);
        EXPECT_EQ(F32(*gguf, spec), f32);
        continue;
      }
      ++quantized;
      EXPECT_EQ(gguf->StoredTypeName(spec.name), type == kQ8_0 ? "Q8_0" : "Q4_0");
      // RawData is exactly the blocks ops/quantize.h makes from the f32 weights.
      std::string blocks(TensorBytes(dtype, spec.shape), '\0');
      std::vector<float> dequantized(f32.size());
      if (dtype == DType::kQ8_0) {
        ops::QuantizeRowQ8_0(f32.data(), f32.size(), blocks.data());
        ops::DequantizeRowQ8_0(blocks.data(), f32.size(), dequantized.data());
      } else {
        ops::QuantizeRowQ4_0(f32.data(), f32.size(), blocks.data());
        ops::DequantizeRowQ4_0(blocks.data(), f32.size(), dequantized.data());
      }
      absl::StatusOr<absl::Span<const uint8_t>> raw = gguf->RawData(spec.name);
      ASSERT_TRUE(raw.ok()) << Msg(raw.status());
      ASSERT_EQ(raw->size(), blocks.size());
      EXPECT_EQ(std::memcmp(raw->data(), blocks.data(), blocks.size()), 0);
      // ReadAsF32 dequantizes; ReadAsBF16 rounds the dequantized values.
      EXPECT_EQ(F32(*gguf, spec), dequantized);
      std::vector<uint16_t> bf16(dequantized.size());
      for (size_t i = 0; i < bf16.size(); ++i) bf16[i] = F32ToBf16(dequantized[i]);
      EXPECT_EQ(BF16(*gguf, spec), bf16);
    }
    // Every matrix but blk.N.proj.weight (rows of 16): 3 global ones and 8 per layer.
    EXPECT_EQ(quantized, 3 + 8 * 8);
  }
}

TEST(CheckpointReaderTest, UnsupportedTypeFailsWhenRead) {
  absl::StatusOr<GgufFile> source = GgufFile::Open(ModelPath("tiny-a-f32.gguf"));
  ASSERT_TRUE(source.ok()) << Msg(source.status());
  const TensorRewrite q8_1 = [](const GgufTensorInfo& info, const GgufFile& gguf) {
    if (info.name != "blk.0.attn_q.weight") {
      return std::optional<TensorOut>(TensorOut{info.type, StoredBytes(gguf, info)});
    }
    return std::optional<TensorOut>(TensorOut{kQ8_1, std::string(64 * 64 / 32 * 36, '\0')});
  };
  const std::string path = absl::StrCat(FreshDir("checkpoint_reader"), "/q8_1.gguf");
  WriteFile(path, CopyGemma4Gguf(*source, nullptr, q8_1).Build());
  std::unique_ptr<CheckpointReader> reader = Open(path);  // listing is fine
  ASSERT_NE(reader, nullptr);
  const std::string name = "model.language_model.layers.0.self_attn.q_proj.weight";
  ASSERT_NE(reader->Find(name), nullptr);
  EXPECT_EQ(reader->Find(name)->dtype, DType::kUnsupported);
  EXPECT_EQ(reader->StoredTypeName(name), "Q8_1");
  std::vector<float> values(64 * 64);
  const absl::Status status = reader->ReadAsF32(name, values.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Msg(status), HasSubstr("unsupported type Q8_1 for tensor blk.0.attn_q.weight"));
  EXPECT_THAT(Msg(status), HasSubstr(name));
  std::vector<uint16_t> bits(64 * 64);
  EXPECT_EQ(reader->ReadAsBF16(name, bits.data()).code(), absl::StatusCode::kUnimplemented);
  absl::StatusOr<absl::Span<const uint8_t>> raw = reader->RawData(name);
  EXPECT_EQ(raw.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Msg(raw.status()), HasSubstr("unsupported type Q8_1"));
}

// A shard of a split GGUF (llama-gguf-split writes split.no / split.count / split.tensors.count
// into each) is refused, saying it is split.
TEST(CheckpointReaderTest, SplitGgufIsRefusedSayingItIsSplit) {
  absl::StatusOr<GgufFile> source = GgufFile::Open(ModelPath("tiny-a-f32.gguf"));
  ASSERT_TRUE(source.ok()) << Msg(source.status());
  GgufBuilder b = CopyGemma4Gguf(*source);
  b.Scalar("split.no", GgufValueType::kU16, uint16_t{0});
  b.Scalar("split.count", GgufValueType::kU16, uint16_t{3});
  const std::string path =
      absl::StrCat(FreshDir("checkpoint_reader"), "/tiny-00001-of-00003.gguf");
  WriteFile(path, b.Build());
  absl::StatusOr<std::unique_ptr<CheckpointReader>> reader = OpenCheckpoint(path, false);
  ASSERT_FALSE(reader.ok());
  EXPECT_THAT(Msg(reader.status()), HasSubstr("is shard 1 of a split GGUF (split.count = 3)"));
  EXPECT_THAT(Msg(reader.status()), HasSubstr("llama-gguf-split --merge"));
}

TEST(CheckpointReaderTest, PathKinds) {
  const std::string dir = FreshDir("checkpoint_reader");
  absl::StatusOr<std::unique_ptr<CheckpointReader>> missing =
      OpenCheckpoint(dir + "/missing.gguf", true);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  missing = OpenCheckpoint(dir + "/missing", true);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);

  WriteFile(dir + "/notes.txt", "hello, world");
  absl::StatusOr<std::unique_ptr<CheckpointReader>> text = OpenCheckpoint(dir + "/notes.txt", true);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(text.status()), HasSubstr("not a checkpoint"));

  WriteFile(dir + "/bad.gguf", "GGUX and more bytes after the magic....");
  absl::StatusOr<std::unique_ptr<CheckpointReader>> bad = OpenCheckpoint(dir + "/bad.gguf", true);
  EXPECT_THAT(Msg(bad.status()), HasSubstr("bad magic"));

  // A GGUF file without the .gguf extension is recognised by its magic.
  std::string bytes;
  {
    std::ifstream in(ModelPath("tiny-a-f32.gguf"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  WriteFile(dir + "/model.bin", bytes);
  std::unique_ptr<CheckpointReader> sniffed = Open(dir + "/model.bin", false);
  ASSERT_NE(sniffed, nullptr);
  EXPECT_EQ(sniffed->tensors().size(), 141u);

  // An empty directory has no config.json.
  EXPECT_EQ(OpenCheckpoint(dir, true).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace cortiq
