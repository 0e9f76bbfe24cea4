// Tests of formats/gguf: the tiny-a GGUF files, every metadata value type, Q8_0 /
// Q4_0 / F16 reads, and hostile files (bad magic, versions, truncation at every offset, absurd
// counts and lengths, bad tensor tables, random corruption): each must give a clear status,
// never a crash or a hang.
#include "formats/gguf.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/quantize.h"
#include "ops/quantize_iq4.h"
#include "ops/quantize_k.h"
#include "tests/formats/gguf_test_util.h"

namespace cortiq {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_gguf::Bytes;
using testing_gguf::FreshDir;
using testing_gguf::GgufBuilder;
using testing_gguf::GgufString;
using testing_gguf::ModelPath;
using testing_gguf::Msg;
using testing_gguf::WriteFile;

constexpr uint32_t kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ8_0 = 8, kQ4_K = 12, kIQ2_XXS = 16,
                   kBF16 = 30;

// Writes `bytes` to a file of the running test and opens it.
absl::StatusOr<GgufFile> OpenBytes(const std::string& bytes, bool map_data = true,
                                   const std::string& name = "test.gguf") {
  const std::string path = absl::StrCat(FreshDir("gguf"), "/", name);
  WriteFile(path, bytes);
  return GgufFile::Open(path, map_data);
}

std::string OpenError(const std::string& bytes) {
  absl::StatusOr<GgufFile> gguf = OpenBytes(bytes);
  EXPECT_FALSE(gguf.ok()) << "opened a file that should have been rejected";
  if (gguf.ok()) return "";
  EXPECT_EQ(gguf.status().code(), absl::StatusCode::kInvalidArgument) << Msg(gguf.status());
  return Msg(gguf.status());
}

std::string F32Data(const std::vector<float>& values) {
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// A small valid file: keys of several types and two F32 tensors, the last one ending the file.
GgufBuilder SmallFile() {
  GgufBuilder b;
  b.Str("general.architecture", "test")
      .U32("test.count", 7)
      .StrArray("test.names", {"a", "bc", ""})
      .BoolArray("test.flags", {true, false})
      .F32("test.eps", 1e-6f);
  b.Tensor("a", {3}, kF32, F32Data({1, 2, 3}));
  b.Tensor("b", {2, 2}, kF32, F32Data({4, 5, 6, 7}));
  return b;
}

TEST(GgufTest, OpensTinyAF32) {
  absl::StatusOr<GgufFile> gguf = GgufFile::Open(ModelPath("tiny-a-f32.gguf"));
  ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
  EXPECT_EQ(gguf->version(), 3u);
  EXPECT_EQ(gguf->alignment(), 32u);
  EXPECT_EQ(gguf->metadata().size(), 39u);
  EXPECT_EQ(gguf->tensors().size(), 142u);
  EXPECT_EQ(gguf->data_section_offset() % 32, 0u);
  EXPECT_EQ(gguf->metadata()[0].key, "general.architecture");
  ASSERT_NE(gguf->FindValue("general.architecture"), nullptr);
  EXPECT_EQ(*gguf->FindValue("general.architecture")->String(), "gemma4");
  const GgufValue* layers = gguf->FindValue("gemma4.block_count");
  ASSERT_NE(layers, nullptr);
  EXPECT_EQ(layers->type(), GgufValueType::kU32);
  EXPECT_EQ(*layers->Int(), 8);
  const GgufValue* pattern = gguf->FindValue("gemma4.attention.sliding_window_pattern");
  ASSERT_NE(pattern, nullptr);
  EXPECT_TRUE(pattern->is_array());
  EXPECT_EQ(pattern->TypeString(), "arr[bool,8]");
  EXPECT_EQ(*pattern->Bool(3), false);
  EXPECT_EQ(*pattern->Bool(4), true);
  const GgufValue* tokens = gguf->FindValue("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->size(), 512u);
  EXPECT_EQ(*tokens->String(0), "<pad>");
  EXPECT_EQ(*tokens->String(2), "<bos>");
  EXPECT_FALSE(tokens->String(512).has_value());
  EXPECT_FALSE(tokens->Int(0).has_value());
  EXPECT_EQ(gguf->FindValue("no.such.key"), nullptr);

  const GgufTensorInfo* embed = gguf->FindTensor("token_embd.weight");
  ASSERT_NE(embed, nullptr);
  EXPECT_THAT(embed->ne, ElementsAre(64, 512));
  EXPECT_THAT(embed->hf_shape(), ElementsAre(512, 64));
  EXPECT_EQ(embed->type_name, "F32");
  EXPECT_EQ(embed->dtype, DType::kF32);
  EXPECT_EQ(embed->num_elements(), 64u * 512u);
  EXPECT_EQ(embed->num_bytes, 64u * 512u * 4u);
  EXPECT_EQ(embed->data_offset, gguf->data_section_offset() + embed->offset);
  EXPECT_EQ(gguf->FindTensor("rope_freqs.weight")->offset, 0u);

  // ReadAsF32 of an F32 tensor is its bytes.
  absl::StatusOr<absl::Span<const uint8_t>> raw = gguf->Data(*embed);
  ASSERT_TRUE(raw.ok()) << Msg(raw.status());
  std::vector<float> expected(embed->num_elements());
  std::memcpy(expected.data(), raw->data(), raw->size());
  std::vector<float> values(embed->num_elements());
  ASSERT_TRUE(gguf->ReadAsF32(*embed, values.data()).ok());
  EXPECT_EQ(std::memcmp(values.data(), expected.data(), raw->size()), 0);
}

TEST(GgufTest, OpensTinyABF16) {
  absl::StatusOr<GgufFile> gguf = GgufFile::Open(ModelPath("tiny-a-bf16.gguf"));
  ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
  const GgufTensorInfo* embed = gguf->FindTensor("token_embd.weight");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->type, kBF16);
  EXPECT_EQ(embed->type_name, "BF16");
  EXPECT_EQ(embed->dtype, DType::kBF16);
  EXPECT_EQ(embed->num_bytes, 64u * 512u * 2u);
  // Norms stay F32 in llama.cpp's bf16 files.
  EXPECT_EQ(gguf->FindTensor("output_norm.weight")->dtype, DType::kF32);
  std::vector<uint16_t> bits(embed->num_elements());
  ASSERT_TRUE(gguf->ReadAsBF16(*embed, bits.data()).ok());
  std::vector<float> values(embed->num_elements());
  ASSERT_TRUE(gguf->ReadAsF32(*embed, values.data()).ok());
  for (size_t i = 0; i < bits.size(); ++i) ASSERT_EQ(Bf16ToF32(bits[i]), values[i]) << i;
}

TEST(GgufTest, WithoutMapDataReadsByPositionalReads) {
  absl::StatusOr<GgufFile> gguf = GgufFile::Open(ModelPath("tiny-a-f32.gguf"), false);
  ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
  const GgufTensorInfo* freqs = gguf->FindTensor("rope_freqs.weight");
  ASSERT_NE(freqs, nullptr);
  absl::StatusOr<absl::Span<const uint8_t>> data = gguf->Data(*freqs);
  EXPECT_EQ(data.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(data.status()), HasSubstr("map_data"));
  std::vector<float> values(16);
  ASSERT_TRUE(gguf->ReadAsF32(*freqs, values.data()).ok());
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[3], 1.0f);
  EXPECT_EQ(values[4], 1e30f);
  absl::StatusOr<std::vector<uint8_t>> copy = gguf->CopyData(*freqs);
  ASSERT_TRUE(copy.ok());
  ASSERT_EQ(copy->size(), 64u);
  EXPECT_EQ(std::memcmp(copy->data(), values.data(), 64), 0);
}

TEST(GgufTest, EveryValueType) {
  GgufBuilder b;
  b.Scalar<uint8_t>("u8", GgufValueType::kU8, 250)
      .Scalar<int8_t>("i8", GgufValueType::kI8, -5)
      .Scalar<uint16_t>("u16", GgufValueType::kU16, 65000)
      .Scalar<int16_t>("i16", GgufValueType::kI16, -30000)
      .U32("u32", 4000000000u)
      .I32("i32", -2000000000)
      .Scalar<uint64_t>("u64", GgufValueType::kU64, 1ull << 40)
      .Scalar<uint64_t>("u64.big", GgufValueType::kU64, ~0ull)
      .Scalar<int64_t>("i64", GgufValueType::kI64, -(1ll << 50))
      .F32("f32", 0.1f)
      .Scalar<double>("f64", GgufValueType::kF64, 0.1)
      .Bool("bool", true)
      .Str("str", "h\xc3\xa9llo")
      .Str("empty", "")
      .Array<int32_t>("arr.i32", GgufValueType::kI32, {1, -2, 3})
      .Array<float>("arr.f32", GgufValueType::kF32, {0.5f, -1.0f})
      .Array<uint8_t>("arr.empty", GgufValueType::kU8, {})
      .StrArray("arr.str", {"x", "", "yz"});
  absl::StatusOr<GgufFile> gguf = OpenBytes(b.Build());
  ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
  auto value = [&](const char* key) {
    const GgufValue* v = gguf->FindValue(key);
    EXPECT_NE(v, nullptr) << key;
    return v;
  };
  EXPECT_EQ(*value("u8")->Int(), 250);
  EXPECT_EQ(*value("i8")->Int(), -5);
  EXPECT_EQ(*value("u16")->Int(), 65000);
  EXPECT_EQ(*value("i16")->Int(), -30000);
  EXPECT_EQ(*value("u32")->Int(), 4000000000ll);
  EXPECT_EQ(*value("i32")->Int(), -2000000000);
  EXPECT_EQ(*value("u64")->Int(), 1ll << 40);
  EXPECT_FALSE(value("u64.big")->Int().has_value());  // above 2^63 - 1
  EXPECT_EQ(*value("i64")->Int(), -(1ll << 50));
  EXPECT_EQ(*value("f32")->Float(), static_cast<double>(0.1f));
  EXPECT_EQ(*value("f64")->Float(), 0.1);
  EXPECT_FALSE(value("f64")->Int().has_value());
  EXPECT_FALSE(value("u8")->Float().has_value());
  EXPECT_EQ(*value("bool")->Bool(), true);
  EXPECT_FALSE(value("bool")->Int().has_value());
  EXPECT_EQ(*value("str")->String(), "h\xc3\xa9llo");
  EXPECT_EQ(*value("empty")->String(), "");
  EXPECT_EQ(value("str")->TypeString(), "str");
  EXPECT_EQ(value("u64")->TypeString(), "u64");
  const GgufValue* ints = value("arr.i32");
  EXPECT_TRUE(ints->is_array());
  EXPECT_EQ(ints->type(), GgufValueType::kI32);
  EXPECT_EQ(ints->size(), 3u);
  EXPECT_EQ(*ints->Int(1), -2);
  EXPECT_FALSE(ints->Int(3).has_value());
  EXPECT_EQ(ints->TypeString(), "arr[i32,3]");
  EXPECT_EQ(*value("arr.f32")->Float(1), -1.0);
  EXPECT_EQ(value("arr.empty")->size(), 0u);
  EXPECT_FALSE(value("arr.empty")->Int(0).has_value());
  const GgufValue* strings = value("arr.str");
  EXPECT_EQ(strings->size(), 3u);
  EXPECT_EQ(*strings->String(0), "x");
  EXPECT_EQ(*strings->String(1), "");
  EXPECT_EQ(*strings->String(2), "yz");
  EXPECT_EQ(gguf->tensors().size(), 0u);
}

TEST(GgufTest, VersionTwoAndCustomAlignment) {
  GgufBuilder b = SmallFile();
  b.version = 2;
  b.alignment = 64;
  b.U32("general.alignment", 64);
  absl::StatusOr<GgufFile> gguf = OpenBytes(b.Build());
  ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
  EXPECT_EQ(gguf->version(), 2u);
  EXPECT_EQ(gguf->alignment(), 64u);
  EXPECT_EQ(gguf->data_section_offset() % 64, 0u);
  EXPECT_EQ(gguf->FindTensor("b")->offset, 64u);
  std::vector<float> values(4);
  ASSERT_TRUE(gguf->ReadAsF32(*gguf->FindTensor("b"), values.data()).ok());
  EXPECT_THAT(values, ElementsAre(4, 5, 6, 7));
}

TEST(GgufTest, QuantizedAndHalfTensors) {
  // Two rows of 64 weights: one smooth, one with a large outlier and negative maxima.
  std::vector<float> weights(128);
  for (int i = 0; i < 128; ++i) weights[i] = std::sin(0.37f * i) * (i < 64 ? 1.0f : 0.01f);
  weights[70] = -3.5f;
  weights[100] = 0.0f;
  std::string q8(ops::Q8_0RowBytes(64) * 2, '\0');
  std::string q4(ops::Q4_0RowBytes(64) * 2, '\0');
  ops::QuantizeRowQ8_0(weights.data(), 128, q8.data());
  ops::QuantizeRowQ4_0(weights.data(), 128, q4.data());
  std::string f16(128 * 2, '\0');
  for (int i = 0; i < 128; ++i) {
    const uint16_t bits = F32ToF16(weights[i]);
    std::memcpy(f16.data() + 2 * i, &bits, 2);
  }
  GgufBuilder b;
  b.Tensor("q8", {64, 2}, kQ8_0, q8)
      .Tensor("q4", {64, 2}, kQ4_0, q4)
      .Tensor("h", {64, 2}, kF16, f16);
  absl::StatusOr<GgufFile> gguf = OpenBytes(b.Build());
  ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());

  struct Case {
    const char* name;
    const std::string* stored;
    DType dtype;
  };
  for (const Case& c : {Case{"q8", &q8, DType::kQ8_0}, Case{"q4", &q4, DType::kQ4_0},
                        Case{"h", &f16, DType::kF16}}) {
    SCOPED_TRACE(c.name);
    const GgufTensorInfo* info = gguf->FindTensor(c.name);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->dtype, c.dtype);
    EXPECT_EQ(info->num_bytes, c.stored->size());
    EXPECT_EQ(TensorBytes(info->dtype, info->hf_shape()), c.stored->size());
    absl::StatusOr<absl::Span<const uint8_t>> raw = gguf->Data(*info);
    ASSERT_TRUE(raw.ok());
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(raw->data()), raw->size()), *c.stored);

    std::vector<float> expected(128);
    if (c.dtype == DType::kQ8_0) {
      ops::DequantizeRowQ8_0(q8.data(), 128, expected.data());
    } else if (c.dtype == DType::kQ4_0) {
      ops::DequantizeRowQ4_0(q4.data(), 128, expected.data());
    } else {
      for (int i = 0; i < 128; ++i) expected[i] = F16ToF32(F32ToF16(weights[i]));
    }
    std::vector<float> values(128);
    ASSERT_TRUE(gguf->ReadAsF32(*info, values.data()).ok());
    std::vector<uint16_t> bits(128);
    ASSERT_TRUE(gguf->ReadAsBF16(*info, bits.data()).ok());
    for (int i = 0; i < 128; ++i) {
      ASSERT_EQ(values[i], expected[i]) << i;
      ASSERT_EQ(bits[i], F32ToBf16(expected[i])) << i;
      // Quantization error stays within half a step of the block scale (sanity).
      ASSERT_NEAR(values[i], weights[i], c.dtype == DType::kQ4_0 ? 0.3f : 0.02f) << i;
    }
  }
}

TEST(GgufTest, UnsupportedTypeIsListedAndFailsWhenRead) {
  // IQ2_XXS: a type ggml has and cortiq does not read (a 256-weight super-block of 66 bytes).
  GgufBuilder b;
  b.Tensor("blk.0.attn_q.weight", {256, 2}, kIQ2_XXS, std::string(2 * 66, '\x11'));
  b.Tensor("ok", {4}, kF32, F32Data({1, 2, 3, 4}));
  absl::StatusOr<GgufFile> gguf = OpenBytes(b.Build());
  ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
  const GgufTensorInfo* info = gguf->FindTensor("blk.0.attn_q.weight");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->type_name, "IQ2_XXS");
  EXPECT_EQ(info->dtype, DType::kUnsupported);
  EXPECT_EQ(info->num_bytes, 132u);
  std::vector<float> out(512);
  const absl::Status status = gguf->ReadAsF32(*info, out.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Msg(status), HasSubstr("unsupported type IQ2_XXS for tensor blk.0.attn_q.weight"));
  std::vector<uint16_t> bits(512);
  EXPECT_THAT(Msg(gguf->ReadAsBF16(*info, bits.data())), HasSubstr("unsupported type IQ2_XXS"));
  // The bytes themselves are available.
  EXPECT_TRUE(gguf->Data(*info).ok());
}

// A zero-element tensor takes no bytes, so nothing in the file bounds its other dimensions:
// ne [2^62, 0] is a valid empty tensor, and reading it must allocate nothing sized by ne[0] (the
// per-row scratch of the quantized bf16 read once was std::vector<float>(ne[0]): an abort).
TEST(GgufTest, EmptyTensorWithAHugeRowReadsAsNothing) {
  for (const uint32_t type : {kF32, kF16, kBF16, kQ8_0, kQ4_0, 3u, 6u, 7u, 10u, 11u, 12u, 13u, 14u,
                              20u, 23u}) {
    SCOPED_TRACE(type);
    GgufBuilder b;
    b.Tensor("empty", {int64_t{1} << 62, 0}, type, "");
    b.Tensor("ok", {4}, kF32, F32Data({1, 2, 3, 4}));
    for (const bool map_data : {true, false}) {
      absl::StatusOr<GgufFile> gguf = OpenBytes(b.Build(), map_data);
      ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
      const GgufTensorInfo* info = gguf->FindTensor("empty");
      ASSERT_NE(info, nullptr);
      EXPECT_EQ(info->num_elements(), 0u);
      EXPECT_EQ(info->num_bytes, 0u);
      float f32_sentinel = 7.0f;
      uint16_t bf16_sentinel = 7;
      EXPECT_TRUE(gguf->ReadAsF32(*info, &f32_sentinel).ok());
      EXPECT_TRUE(gguf->ReadAsBF16(*info, &bf16_sentinel).ok());
      EXPECT_EQ(f32_sentinel, 7.0f);
      EXPECT_EQ(bf16_sentinel, 7);
      absl::StatusOr<std::vector<uint8_t>> bytes = gguf->CopyData(*info);
      ASSERT_TRUE(bytes.ok());
      EXPECT_TRUE(bytes->empty());
    }
  }
}

TEST(GgufTest, GgmlTypeTable) {
  EXPECT_EQ(FindGgmlType(kQ8_0)->type_size, 34u);
  EXPECT_EQ(FindGgmlType(kQ4_0)->type_size, 18u);
  EXPECT_EQ(FindGgmlType(kQ4_0)->block_size, 32u);
  EXPECT_EQ(FindGgmlType(kQ4_K)->name, "Q4_K");
  EXPECT_EQ(FindGgmlType(kQ4_K)->block_size, 256u);
  EXPECT_EQ(FindGgmlType(kBF16)->type_size, 2u);
  EXPECT_EQ(FindGgmlType(4), nullptr);   // Q4_2, removed
  EXPECT_EQ(FindGgmlType(33), nullptr);  // Q4_0_8_8, removed
  EXPECT_EQ(FindGgmlType(1000), nullptr);
  EXPECT_EQ(DTypeFromGgmlType(kF16), DType::kF16);
  EXPECT_EQ(DTypeFromGgmlType(kIQ2_XXS), DType::kUnsupported);
  // The readable block types: ggml's type numbers (ggml.h), block sizes and type sizes
  // (ggml-common.h), and the DType of the same name with the same geometry.
  const struct {
    uint32_t type;
    const char* name;
    uint32_t block_size, type_size;
    DType dtype;
  } kReadable[] = {
      {2, "Q4_0", 32, 18, DType::kQ4_0},     {3, "Q4_1", 32, 20, DType::kQ4_1},
      {6, "Q5_0", 32, 22, DType::kQ5_0},     {7, "Q5_1", 32, 24, DType::kQ5_1},
      {8, "Q8_0", 32, 34, DType::kQ8_0},     {10, "Q2_K", 256, 84, DType::kQ2_K},
      {11, "Q3_K", 256, 110, DType::kQ3_K},  {12, "Q4_K", 256, 144, DType::kQ4_K},
      {13, "Q5_K", 256, 176, DType::kQ5_K},  {14, "Q6_K", 256, 210, DType::kQ6_K},
      {20, "IQ4_NL", 32, 18, DType::kIQ4_NL}, {23, "IQ4_XS", 256, 136, DType::kIQ4_XS},
  };
  for (const auto& t : kReadable) {
    SCOPED_TRACE(t.name);
    ASSERT_NE(FindGgmlType(t.type), nullptr);
    EXPECT_EQ(FindGgmlType(t.type)->name, t.name);
    EXPECT_EQ(FindGgmlType(t.type)->block_size, t.block_size);
    EXPECT_EQ(FindGgmlType(t.type)->type_size, t.type_size);
    EXPECT_EQ(DTypeFromGgmlType(t.type), t.dtype);
    EXPECT_EQ(DTypeName(t.dtype), t.name);
    EXPECT_EQ(DTypeBlockElements(t.dtype), t.block_size);
    EXPECT_EQ(DTypeBlockBytes(t.dtype), t.type_size);
    EXPECT_EQ(TensorBytes(t.dtype, {3, 2 * int64_t{t.block_size}}), 6u * t.type_size);
  }
}

// A Q4_K and an IQ4_XS tensor read as f32 are llama.cpp's dequantization of their blocks (the
// scalar references, checked bit for bit against llama.cpp in tests/ops), and as bf16 those
// values rounded.
TEST(GgufTest, KQuantTensorsReadAsTheirDequantizedBlocks) {
  std::vector<float> source(2 * 512);
  for (size_t i = 0; i < source.size(); ++i) source[i] = std::sin(0.37f * i) * (1 + i % 7);
  std::string q4_k(2 * 2 * 144, '\0'), iq4_xs(2 * 2 * 136, '\0');
  ops::QuantizeRowQ4_K(source.data(), source.size(), q4_k.data());
  ops::QuantizeRowIQ4_XS(source.data(), source.size(), iq4_xs.data());
  GgufBuilder b;
  b.Tensor("q4_k", {512, 2}, kQ4_K, q4_k);
  b.Tensor("iq4_xs", {512, 2}, 23, iq4_xs);
  absl::StatusOr<GgufFile> gguf = OpenBytes(b.Build());
  ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
  for (const auto& [name, blocks] : {std::pair<std::string, std::string>{"q4_k", q4_k},
                                     {"iq4_xs", iq4_xs}}) {
    SCOPED_TRACE(name);
    const GgufTensorInfo* info = gguf->FindTensor(name);
    ASSERT_NE(info, nullptr);
    std::vector<float> expected(source.size()), out(source.size());
    if (name == "q4_k") {
      ops::DequantizeRowQ4_K(blocks.data(), expected.size(), expected.data());
    } else {
      ops::DequantizeRowIQ4_XS(blocks.data(), expected.size(), expected.data());
    }
    ASSERT_TRUE(gguf->ReadAsF32(*info, out.data()).ok());
    EXPECT_EQ(out, expected);
    std::vector<uint16_t> bits(source.size());
    ASSERT_TRUE(gguf->ReadAsBF16(*info, bits.data()).ok());
    for (size_t i = 0; i < bits.size(); ++i) ASSERT_EQ(bits[i], F32ToBf16(expected[i])) << i;
  }
}

TEST(GgufHostileTest, BadMagicAndVersions) {
  GgufBuilder b = SmallFile();
  b.magic = "GGUX";
  EXPECT_THAT(OpenError(b.Build()), HasSubstr("bad magic \"GGUX\""));
  b.magic = std::string("\x89PNG", 4);
  EXPECT_THAT(OpenError(b.Build()), HasSubstr("bad magic \"?PNG\""));
  b.magic = "GGUF";
  for (uint32_t version : {0u, 1u, 4u, 1000u}) {
    b.version = version;
    EXPECT_THAT(OpenError(b.Build()),
                HasSubstr(absl::StrCat("GGUF version ", version, " is not supported")));
  }
  b.version = 0x03000000;  // a big-endian version 3
  EXPECT_THAT(OpenError(b.Build()), HasSubstr("big-endian"));
  EXPECT_THAT(OpenError(""), HasSubstr("truncated: the magic at byte 0"));
  EXPECT_THAT(OpenError("GG"), HasSubstr("truncated"));
}

TEST(GgufHostileTest, TruncatedAtEveryOffset) {
  const std::string bytes = SmallFile().Build();
  ASSERT_TRUE(OpenBytes(bytes).ok());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    SCOPED_TRACE(cut);
    const std::string message = OpenError(bytes.substr(0, cut));
    EXPECT_TRUE(message.find("truncated") != std::string::npos ||
                message.find("is impossible") != std::string::npos ||
                message.find("pass the end of the file") != std::string::npos)
        << message;
  }
}

TEST(GgufHostileTest, TruncatedTinyA) {
  absl::StatusOr<GgufFile> gguf = GgufFile::Open(ModelPath("tiny-a-f32.gguf"), false);
  ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
  const uint64_t data_start = gguf->data_section_offset();
  std::string bytes(gguf->file_size(), '\0');
  {
    std::ifstream in(ModelPath("tiny-a-f32.gguf"), std::ios::binary);
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::vector<uint64_t> cuts;
  for (uint64_t cut = 0; cut < data_start; cut += 61) cuts.push_back(cut);
  for (uint64_t cut :
       {data_start - 1, data_start, data_start + 100, static_cast<uint64_t>(bytes.size() / 2),
        static_cast<uint64_t>(bytes.size() - 1)}) {
    cuts.push_back(cut);
  }
  for (uint64_t cut : cuts) {
    SCOPED_TRACE(cut);
    const std::string message = OpenError(bytes.substr(0, cut));
    EXPECT_TRUE(message.find("truncated") != std::string::npos ||
                message.find("is impossible") != std::string::npos ||
                message.find("pass the end of the file") != std::string::npos)
        << message;
  }
}

TEST(GgufHostileTest, AbsurdCounts) {
  GgufBuilder b = SmallFile();
  b.tensor_count = uint64_t{1} << 40;
  EXPECT_THAT(OpenError(b.Build()), HasSubstr("tensor count 1099511627776 is impossible"));
  b.tensor_count = ~uint64_t{0};
  EXPECT_THAT(OpenError(b.Build()), HasSubstr("is impossible"));
  b.tensor_count.reset();
  b.kv_count = ~uint64_t{0};
  EXPECT_THAT(OpenError(b.Build()),
              HasSubstr("key/value count 18446744073709551615 is impossible"));
  b.kv_count = 1000;  // fits the limit but not the file
  EXPECT_THAT(OpenError(b.Build()), HasSubstr("key/value count 1000 is impossible"));
  b.kv_count = 6;  // one more than written: the tensor infos are read as a key/value pair
  EXPECT_FALSE(OpenBytes(b.Build()).ok());
}

TEST(GgufHostileTest, LengthsPastTheEnd) {
  // A key whose length runs past the end of the file.
  {
    GgufBuilder b;
    b.kv_count = 1;
    std::string bytes = b.Build().substr(0, 24);  // the preamble, without the padding
    bytes += Bytes<uint64_t>(uint64_t{1} << 62) + std::string(20, 'k');
    EXPECT_THAT(OpenError(bytes), HasSubstr("the key of key/value 0 at byte 24 has length"));
  }
  {
    GgufBuilder b;
    b.Raw("k", Bytes<uint32_t>(8) + Bytes<uint64_t>(1000) + "short");
    EXPECT_THAT(OpenError(b.Build()),
                HasSubstr("truncated: the value of key k at byte 45 needs 1000 bytes"));
  }
  {
    GgufBuilder b;
    b.Raw("k", Bytes<uint32_t>(9) + Bytes<uint32_t>(8) + Bytes<uint64_t>(2) + GgufString("a") +
                   Bytes<uint64_t>(uint64_t{1} << 60));
    EXPECT_THAT(OpenError(b.Build()), HasSubstr("truncated: string 1 of key k"));
  }
  {
    GgufBuilder b;
    b.Raw("k", Bytes<uint32_t>(9) + Bytes<uint32_t>(4) + Bytes<uint64_t>(uint64_t{1} << 61));
    EXPECT_THAT(OpenError(b.Build()),
                HasSubstr("array key k: element count 2305843009213693952 is impossible"));
  }
  {
    GgufBuilder b;  // more elements than the limit, even if the file were large enough
    b.Raw("k",
          Bytes<uint32_t>(9) + Bytes<uint32_t>(0) + Bytes<uint64_t>(kMaxGgufArrayElements + 1));
    EXPECT_THAT(OpenError(b.Build()),
                HasSubstr("array key k: element count 16777217 is impossible"));
  }
  {
    GgufBuilder b;
    b.Tensor(std::string(64, 'n'), {1}, kF32, F32Data({1}));
    EXPECT_THAT(OpenError(b.Build()), HasSubstr("has length 64, more than the limit of 63"));
  }
}

TEST(GgufHostileTest, BadKeysAndValues) {
  auto with = [](const std::function<void(GgufBuilder&)>& edit) {
    GgufBuilder b = SmallFile();
    edit(b);
    return OpenError(b.Build());
  };
  EXPECT_THAT(with([](GgufBuilder& b) { b.U32("test.count", 8); }),
              HasSubstr("key test.count appears twice"));
  EXPECT_THAT(with([](GgufBuilder& b) { b.U32("", 8); }), HasSubstr("has an empty key"));
  // A key's bad bytes (a NUL, invalid UTF-8) are shown hex-escaped, and a long key cut at 200
  // bytes: the message stays whole and printable.
  EXPECT_THAT(with([](GgufBuilder& b) {
                b.Raw(std::string("a\0z\xff", 4), Bytes<uint32_t>(13) + Bytes<uint32_t>(0));
              }),
              HasSubstr("the type of key a\\x00z\\xff at byte"));
  {
    const std::string message = with([](GgufBuilder& b) {
      b.Raw(std::string(5000, 'k'), Bytes<uint32_t>(13) + Bytes<uint32_t>(0));
    });
    EXPECT_THAT(message, HasSubstr(std::string(200, 'k') + "... at byte"));
    EXPECT_EQ(message.find(std::string(201, 'k')), std::string::npos);
  }
  EXPECT_THAT(with([](GgufBuilder& b) { b.Raw("t", Bytes<uint32_t>(13) + Bytes<uint32_t>(0)); }),
              HasSubstr("the type of key t at byte"));
  EXPECT_THAT(with([](GgufBuilder& b) { b.Raw("t", Bytes<uint32_t>(13) + Bytes<uint32_t>(0)); }),
              HasSubstr("is 13, not a GGUF value type"));
  EXPECT_THAT(with([](GgufBuilder& b) {
                b.Raw("t", Bytes<uint32_t>(9) + Bytes<uint32_t>(9) + Bytes<uint64_t>(0));
              }),
              HasSubstr("key t is an array of arrays"));
  EXPECT_THAT(with([](GgufBuilder& b) { b.Scalar<uint8_t>("t", GgufValueType::kBool, 2); }),
              HasSubstr("key t: bool byte 2 is neither 0 nor 1"));
  EXPECT_THAT(with([](GgufBuilder& b) {
                b.Array<uint8_t>("t", GgufValueType::kBool, {0, 1, 7});
              }),
              HasSubstr("key t[2]: bool byte 7"));
  EXPECT_THAT(with([](GgufBuilder& b) {
                b.Scalar<uint64_t>("general.alignment", GgufValueType::kU64, 32);
              }),
              HasSubstr("general.alignment has type u64; it must be a u32"));
  EXPECT_THAT(with([](GgufBuilder& b) { b.U32("general.alignment", 48); }),
              HasSubstr("general.alignment (48) must be a power of two"));
  EXPECT_THAT(with([](GgufBuilder& b) { b.U32("general.alignment", 0); }),
              HasSubstr("must be a power of two"));
}

TEST(GgufHostileTest, BadTensorTables) {
  auto build = [](const std::function<void(GgufBuilder&)>& edit) {
    GgufBuilder b;
    b.Str("general.architecture", "test");
    edit(b);
    return OpenError(b.Build());
  };
  EXPECT_THAT(build([](GgufBuilder& b) {
                b.Tensor("t", {1, 1, 1, 1, 1}, kF32, F32Data({1}));
              }),
              HasSubstr("tensor t has 5 dimensions; at most 4 are allowed"));
  EXPECT_THAT(build([](GgufBuilder& b) {
                b.Tensor("t", {4, -1}, kF32, "");
              }),
              HasSubstr("tensor t: ne[1] = -1 is negative"));
  EXPECT_THAT(build([](GgufBuilder& b) {
                b.Tensor("t", {int64_t{1} << 62, 4}, kF32, "");
              }),
              HasSubstr("more than 2^63 - 1 elements"));
  EXPECT_THAT(build([](GgufBuilder& b) { b.Tensor("t", {int64_t{1} << 62}, kF32, ""); }),
              HasSubstr("takes more than 2^63 - 1 bytes"));
  EXPECT_THAT(build([](GgufBuilder& b) {
                b.Tensor("t", {4}, 4, F32Data({1, 2, 3, 4}));
              }),
              HasSubstr("tensor t has unknown ggml type 4"));
  EXPECT_THAT(build([](GgufBuilder& b) {
                b.Tensor("t", {4}, 77, F32Data({1, 2, 3, 4}));
              }),
              HasSubstr("unknown ggml type 77"));
  EXPECT_THAT(build([](GgufBuilder& b) {
                b.Tensor("t", {33, 1}, kQ8_0, std::string(34, '\0'));
              }),
              HasSubstr("tensor t of type Q8_0 has 33 elements per row (ne[0]), not a multiple "
                        "of its block size 32"));
  EXPECT_THAT(build([](GgufBuilder& b) {
                b.Tensor("t", {1}, kF32, F32Data({1})).Tensor("t", {1}, kF32, F32Data({1}));
              }),
              HasSubstr("tensor t appears twice"));
  EXPECT_THAT(build([](GgufBuilder& b) { b.Tensor("", {1}, kF32, F32Data({1})); }),
              HasSubstr("tensor 0 has an empty name"));
  EXPECT_THAT(build([](GgufBuilder& b) {
                b.Tensor(std::string("t\x01\xc3", 3), {4}, 77, F32Data({1, 2, 3, 4}));
              }),
              HasSubstr("tensor t\\x01\\xc3 has unknown ggml type 77"));
  EXPECT_THAT(build([](GgufBuilder& b) {
                b.Tensor("t", {4}, kF32, F32Data({1, 2, 3, 4}), uint64_t{4});
              }),
              HasSubstr("tensor t: offset 4 is not a multiple of the alignment 32"));
  // Offsets past the end (the builder writes no data for them), up to one near 2^64 (no
  // wrap-around in the bounds check).
  for (const uint64_t offset : {uint64_t{32}, uint64_t{1} << 40, ~uint64_t{31}}) {
    GgufBuilder b;
    b.Tensor("a", {4}, kF32, F32Data({1, 2, 3, 4}), uint64_t{0});
    b.Tensor("t", {4}, kF32, "", offset);
    const std::string message = OpenError(b.Build());
    EXPECT_THAT(message, HasSubstr(absl::StrCat("tensor t: data [", offset, ", +16)")));
    EXPECT_THAT(message, HasSubstr("pass the end of the file"));
  }
  EXPECT_THAT(build([](GgufBuilder& b) {
                b.Tensor("a", {16}, kF32, std::string(64, '\1'), uint64_t{0});
                b.Tensor("b", {16}, kF32, std::string(64, '\2'), uint64_t{32});
              }),
              HasSubstr("tensor b: data [32, 96) overlap tensor a [0, 64)"));
  // Zero-size tensors take no bytes and never overlap.
  {
    GgufBuilder b;
    b.Tensor("a", {16}, kF32, std::string(64, '\1'), uint64_t{0});
    b.Tensor("empty", {0, 16}, kF32, "", uint64_t{32});
    absl::StatusOr<GgufFile> gguf = OpenBytes(b.Build());
    ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
    EXPECT_EQ(gguf->FindTensor("empty")->num_bytes, 0u);
  }
}

TEST(GgufHostileTest, RandomCorruptionNeverCrashes) {
  const std::string original = SmallFile().Build();
  std::mt19937 rng(1234);
  int rejected = 0;
  for (int iteration = 0; iteration < 600; ++iteration) {
    std::string bytes = original;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const size_t at = rng() % bytes.size();
      bytes[at] = static_cast<char>(rng() % 4 == 0 ? 0xff : rng());
    }
    absl::StatusOr<GgufFile> gguf = OpenBytes(bytes);
    if (!gguf.ok()) {
      ++rejected;
      continue;
    }
    // Whatever opened must be readable within its bounds.
    for (const GgufTensorInfo& info : gguf->tensors()) {
      if (info.dtype == DType::kUnsupported) continue;
      std::vector<float> out(info.num_elements());
      EXPECT_TRUE(gguf->ReadAsF32(info, out.data()).ok());
    }
  }
  EXPECT_GT(rejected, 100);
}

TEST(GgufHostileTest, NotARegularFile) {
  absl::StatusOr<GgufFile> gguf = GgufFile::Open(FreshDir("gguf"));
  EXPECT_FALSE(gguf.ok());
  absl::StatusOr<GgufFile> missing = GgufFile::Open("/nonexistent/model.gguf");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace cortiq
