// Tests of formats/safetensors: the tiny-a checkpoints, dtype conversions on read,
// shard indexes, and one hand-made broken file per header/index error (each must give a clear
// status, never a crash).
#include "formats/safetensors.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/formats/interrupt_guard.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

// The status message as std::string (absl::string_view prints as a char array in gtest).
std::string Msg(const absl::Status& status) { return std::string(status.message()); }

constexpr char kPrefix[] = "model.language_model.";

std::string ModelDir(const char* name) {
  return absl::StrCat(CORTIQ_TEST_DATA_DIR, "/models/", name);
}

// A fresh directory under the gtest temp dir, named after the running test ('/' of
// parameterized test names replaced).
std::string FreshDir() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = absl::StrCat(info->test_suite_name(), "_", info->name());
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  const std::string dir = absl::StrCat(::testing::TempDir(), "/cortiq_safetensors_", name);
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string U64(uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
  return bytes;
}

// A safetensors file: length, header, `data_bytes` bytes of data (value i & 0xff at byte i).
std::string SafetensorsBytes(const std::string& header, size_t data_bytes) {
  std::string data(data_bytes, '\0');
  for (size_t i = 0; i < data_bytes; ++i) data[i] = static_cast<char>(i & 0xff);
  return absl::StrCat(U64(header.size()), header, data);
}

// Writes <dir>/model.safetensors and opens the directory.
absl::StatusOr<SafetensorsCheckpoint> OpenWithHeader(const std::string& header, size_t data_bytes) {
  const std::string dir = FreshDir();
  WriteFile(dir + "/model.safetensors", SafetensorsBytes(header, data_bytes));
  return SafetensorsCheckpoint::Open(dir);
}

TEST(SafetensorsTest, OpensTinyAF32) {
  absl::StatusOr<SafetensorsCheckpoint> checkpoint =
      SafetensorsCheckpoint::Open(ModelDir("tiny-a-f32"));
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->tensors().size(), 146u);  // 141 text + 5 vision/audio
  ASSERT_EQ(checkpoint->files().size(), 1u);
  EXPECT_THAT(checkpoint->files()[0], HasSubstr("tiny-a-f32/model.safetensors"));

  const TensorInfo* embed = checkpoint->Find(absl::StrCat(kPrefix, "embed_tokens.weight"));
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->dtype, DType::kF32);
  EXPECT_EQ(embed->dtype_name, "F32");
  EXPECT_EQ(embed->shape, (std::vector<int64_t>{512, 64}));
  EXPECT_EQ(embed->num_elements(), 512u * 64u);
  EXPECT_EQ(embed->num_bytes, 131072u);
  EXPECT_EQ(embed->data_offset, 8u + 17504u);  // header length 17504, first in the data section
  EXPECT_EQ(embed->file_index, 0);

  const TensorInfo* q3 =
      checkpoint->Find(absl::StrCat(kPrefix, "layers.3.self_attn.q_proj.weight"));
  ASSERT_NE(q3, nullptr);
  EXPECT_EQ(q3->shape, (std::vector<int64_t>{128, 64}));  // full layer: 4 heads × 32
  const TensorInfo* scalar = checkpoint->Find(absl::StrCat(kPrefix, "layers.7.layer_scalar"));
  ASSERT_NE(scalar, nullptr);
  EXPECT_EQ(scalar->shape, (std::vector<int64_t>{1}));
  EXPECT_NE(checkpoint->Find("model.vision_tower.patch_embedder.input_proj.weight"), nullptr);
  EXPECT_EQ(checkpoint->Find("__metadata__"), nullptr);
  EXPECT_EQ(checkpoint->Find("lm_head.weight"), nullptr);

  // Tensors are in file order and their data lie inside the file.
  for (size_t i = 1; i < checkpoint->tensors().size(); ++i) {
    EXPECT_LE(checkpoint->tensors()[i - 1].data_offset, checkpoint->tensors()[i].data_offset);
  }
  const absl::Span<const uint8_t> data = checkpoint->Data(*embed);
  ASSERT_EQ(data.size(), embed->num_bytes);
  std::vector<float> values(embed->num_elements());
  ASSERT_TRUE(checkpoint->ReadAsF32(*embed, values.data()).ok());
  EXPECT_EQ(std::memcmp(values.data(), data.data(), data.size()), 0);
}

TEST(SafetensorsTest, OpensTinyABf16AndWidensExactly) {
  absl::StatusOr<SafetensorsCheckpoint> checkpoint =
      SafetensorsCheckpoint::Open(ModelDir("tiny-a-bf16"));
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->tensors().size(), 146u);
  const TensorInfo* w = checkpoint->Find(absl::StrCat(kPrefix, "layers.0.mlp.gate_proj.weight"));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, DType::kBF16);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{128, 64}));
  EXPECT_EQ(w->num_bytes, 128u * 64u * 2u);

  const absl::Span<const uint8_t> raw = checkpoint->Data(*w);
  std::vector<float> values(w->num_elements());
  ASSERT_TRUE(checkpoint->ReadAsF32(*w, values.data()).ok());
  for (size_t i = 0; i < values.size(); ++i) {
    // bf16 → f32 is the bf16 bits in the upper half of the f32.
    const uint32_t expected = (uint32_t{raw[2 * i + 1]} << 24) | (uint32_t{raw[2 * i]} << 16);
    uint32_t actual;
    std::memcpy(&actual, &values[i], 4);
    ASSERT_EQ(actual, expected) << i;
  }
  std::vector<uint16_t> bf16(w->num_elements());
  ASSERT_TRUE(checkpoint->ReadAsBF16(*w, bf16.data()).ok());
  EXPECT_EQ(std::memcmp(bf16.data(), raw.data(), raw.size()), 0);
}

// The bf16 checkpoint is the f32 one rounded to nearest even, tensor by tensor: ReadAsBF16 of
// the f32 file must reproduce it bit for bit.
TEST(SafetensorsTest, F32ToBf16MatchesTheBf16Checkpoint) {
  absl::StatusOr<SafetensorsCheckpoint> f32 = SafetensorsCheckpoint::Open(ModelDir("tiny-a-f32"));
  absl::StatusOr<SafetensorsCheckpoint> bf16 = SafetensorsCheckpoint::Open(ModelDir("tiny-a-bf16"));
  ASSERT_TRUE(f32.ok() && bf16.ok());
  for (const TensorInfo& info : f32->tensors()) {
    const TensorInfo* other = bf16->Find(info.name);
    ASSERT_NE(other, nullptr) << info.name;
    ASSERT_EQ(other->shape, info.shape);
    std::vector<uint16_t> converted(info.num_elements());
    ASSERT_TRUE(f32->ReadAsBF16(info, converted.data()).ok());
    const absl::Span<const uint8_t> expected = bf16->Data(*other);
    ASSERT_EQ(std::memcmp(converted.data(), expected.data(), expected.size()), 0) << info.name;
  }
}

TEST(SafetensorsTest, HeadersOnlyWithoutMapping) {
  absl::StatusOr<SafetensorsCheckpoint> checkpoint =
      SafetensorsCheckpoint::Open(ModelDir("tiny-a-bf16"), /*map_data=*/false);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  const TensorInfo* norm = checkpoint->Find(absl::StrCat(kPrefix, "norm.weight"));
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->shape, (std::vector<int64_t>{64}));
  EXPECT_TRUE(checkpoint->Data(*norm).empty());
  std::vector<float> values(64);
  const absl::Status status = checkpoint->ReadAsF32(*norm, values.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(status), HasSubstr("map_data"));
}

TEST(SafetensorsTest, OpensASingleFilePath) {
  absl::StatusOr<SafetensorsCheckpoint> checkpoint =
      SafetensorsCheckpoint::Open(ModelDir("tiny-a-f32") + "/model.safetensors");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->tensors().size(), 146u);
}

TEST(SafetensorsTest, ReadsF16AndConvertsToBf16) {
  // 1.0, -2.0, 65504, 2^-24 (subnormal), +inf, 1/3 in f16.
  const uint16_t f16[] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x3555};
  std::string data(reinterpret_cast<const char*>(f16), sizeof(f16));
  // f32 1 + 2^-8 (exactly halfway between two bf16 values → even 1.0) and 1 + 3·2^-8 (→ up).
  const float f32[] = {1.00390625f, 1.01171875f};
  data.append(reinterpret_cast<const char*>(f32), sizeof(f32));
  const std::string header =
      "{\"__metadata__\": {\"format\": \"pt\"},"
      " \"h\": {\"dtype\": \"F16\", \"shape\": [2, 3], \"data_offsets\": [0, 12]},"
      " \"f\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [12, 20]}}";
  const std::string dir = FreshDir();
  WriteFile(dir + "/model.safetensors", absl::StrCat(U64(header.size()), header, data));
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();

  const TensorInfo* h = checkpoint->Find("h");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->dtype, DType::kF16);
  float values[6];
  ASSERT_TRUE(checkpoint->ReadAsF32(*h, values).ok());
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], -2.0f);
  EXPECT_EQ(values[2], 65504.0f);
  EXPECT_EQ(values[3], 5.9604644775390625e-8f);
  EXPECT_TRUE(std::isinf(values[4]));
  EXPECT_FLOAT_EQ(values[5], 0.333251953125f);
  uint16_t bf16[6];
  ASSERT_TRUE(checkpoint->ReadAsBF16(*h, bf16).ok());
  EXPECT_EQ(bf16[0], 0x3f80u);
  EXPECT_EQ(bf16[1], 0xc000u);
  EXPECT_EQ(bf16[4], 0x7f80u);

  const TensorInfo* f = checkpoint->Find("f");
  ASSERT_NE(f, nullptr);
  uint16_t rounded[2];
  ASSERT_TRUE(checkpoint->ReadAsBF16(*f, rounded).ok());
  EXPECT_EQ(rounded[0], 0x3f80u);  // tie → even
  EXPECT_EQ(rounded[1], 0x3f82u);  // tie → even (up)
}

TEST(SafetensorsTest, UnsupportedDtypeFailsOnlyWhenRead) {
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = OpenWithHeader(
      "{\"odd\": {\"dtype\": \"I8\", \"shape\": [4], \"data_offsets\": [0, 4]},"
      " \"wide\": {\"dtype\": \"F64\", \"shape\": [1], \"data_offsets\": [4, 12]},"
      " \"ok\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [12, 16]}}",
      16);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  const TensorInfo* odd = checkpoint->Find("odd");
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(odd->dtype, DType::kUnsupported);
  EXPECT_EQ(odd->dtype_name, "I8");
  EXPECT_EQ(checkpoint->Data(*odd).size(), 4u);
  float out[4];
  absl::Status status = checkpoint->ReadAsF32(*odd, out);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Msg(status), HasSubstr("tensor odd has dtype I8"));
  uint16_t out16[1];
  status = checkpoint->ReadAsBF16(*checkpoint->Find("wide"), out16);
  EXPECT_THAT(Msg(status), HasSubstr("tensor wide has dtype F64"));
  EXPECT_TRUE(checkpoint->ReadAsF32(*checkpoint->Find("ok"), out).ok());
}

TEST(SafetensorsTest, EmptyTensorsAndScalars) {
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = OpenWithHeader(
      "{\"empty\": {\"dtype\": \"F32\", \"shape\": [0, 5], \"data_offsets\": [4, 4]},"
      " \"scalar\": {\"dtype\": \"F32\", \"shape\": [], \"data_offsets\": [0, 4]}}",
      4);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->Find("empty")->num_elements(), 0u);
  EXPECT_EQ(checkpoint->Find("scalar")->num_elements(), 1u);
  float value;
  EXPECT_TRUE(checkpoint->ReadAsF32(*checkpoint->Find("scalar"), &value).ok());
  EXPECT_TRUE(checkpoint->ReadAsF32(*checkpoint->Find("empty"), nullptr).ok());
}

// A bad header and the text its error must contain.
struct HeaderCase {
  std::string label;
  std::string header;
  size_t data_bytes;
  std::string expected_substring;
};

std::ostream& operator<<(std::ostream& os, const HeaderCase& c) { return os << c.label; }

class SafetensorsHeaderErrorTest : public ::testing::TestWithParam<HeaderCase> {};

TEST_P(SafetensorsHeaderErrorTest, ClearError) {
  const HeaderCase& c = GetParam();
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = OpenWithHeader(c.header, c.data_bytes);
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("model.safetensors: "));
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr(c.expected_substring));
}

std::string Entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return absl::StrCat("\"", name, "\": {\"dtype\": ", dtype, ", \"shape\": ", shape,
                      ", \"data_offsets\": ", offsets, "}");
}

INSTANTIATE_TEST_SUITE_P(
    AllErrors, SafetensorsHeaderErrorTest,
    ::testing::Values(
        HeaderCase{"BadJson", "{\"a\": {\"dtype\": \"F32\",", 0,
                   "malformed JSON: unexpected end of the safetensors header in the value of "
                   "\"a\""},
        HeaderCase{"BadJsonInAnEntry", "{\"a\": {\"dtype\": \"F32\",}}", 0,
                   "tensor a: malformed JSON: [1:"},
        HeaderCase{"TrailingComma", "{" + Entry("w", "\"F32\"", "[1]", "[0, 4]") + ",}", 4,
                   "malformed JSON: expected a key string"},
        HeaderCase{"TextAfterTheObject", "{" + Entry("w", "\"F32\"", "[1]", "[0, 4]") + "} x", 4,
                   "malformed JSON: text after the end of the safetensors header"},
        HeaderCase{"EmptyHeader", "", 0, "malformed JSON"},
        HeaderCase{"NotAnObject", "[1, 2, 3]", 0, "header must be a JSON object, got an array"},
        HeaderCase{"DeepNesting",
                   "{\"w\": " + std::string(5000, '[') + std::string(5000, ']') + "}", 0,
                   "tensor w: malformed JSON: nesting deeper than 64"},
        HeaderCase{"MetadataNotStrings", "{\"__metadata__\": {\"format\": 1}}", 0,
                   "__metadata__[\"format\"] must be a string"},
        HeaderCase{"MetadataNotObject", "{\"__metadata__\": [1]}", 0,
                   "__metadata__ must be a JSON object, got an array"},
        HeaderCase{"HugeEntry",
                   "{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4], "
                   "\"junk\": \"" +
                       std::string(70000, 'x') + "\"}}",
                   4, "tensor w: header entry of 70"},
        HeaderCase{"EntryNotObject", "{\"w\": 3}", 0, "tensor w: header entry must be an object"},
        HeaderCase{"DtypeNotString", "{" + Entry("w", "4", "[1]", "[0, 4]") + "}", 4,
                   "tensor w: \"dtype\" must be a string"},
        HeaderCase{"ShapeNotArray", "{" + Entry("w", "\"F32\"", "4", "[0, 4]") + "}", 4,
                   "tensor w: \"shape\" must be an array"},
        HeaderCase{"NegativeShape", "{" + Entry("w", "\"F32\"", "[-1, 4]", "[0, 4]") + "}", 4,
                   "tensor w: \"shape\" must be an array of non-negative integers"},
        HeaderCase{"FractionalShape", "{" + Entry("w", "\"F32\"", "[1.5]", "[0, 4]") + "}", 4,
                   "tensor w: \"shape\""},
        HeaderCase{"HugeShapeOverflow",
                   "{" + Entry("w", "\"F32\"", "[4294967296, 4294967296, 4]", "[0, 4]") + "}", 4,
                   "tensor w: shape has more than 2^64 elements"},
        HeaderCase{"ShapeBytesOverflow",
                   "{" + Entry("w", "\"F32\"", "[4294967296, 1073741824]", "[0, 4]") + "}", 4,
                   "tensor w: shape × F32 size overflows"},
        HeaderCase{"OffsetsArity", "{" + Entry("w", "\"F32\"", "[1]", "[0, 4, 8]") + "}", 8,
                   "tensor w: \"data_offsets\" must be [begin, end]"},
        HeaderCase{"OffsetsNegative", "{" + Entry("w", "\"F32\"", "[1]", "[-4, 0]") + "}", 8,
                   "tensor w: \"data_offsets\""},
        HeaderCase{"OffsetsReversed", "{" + Entry("w", "\"F32\"", "[1]", "[4, 0]") + "}", 8,
                   "tensor w: data_offsets [4, 0] has begin > end"},
        HeaderCase{"OffsetsPastEnd", "{" + Entry("w", "\"F32\"", "[4]", "[0, 16]") + "}", 8,
                   "tensor w: data_offsets [0, 16] pass the end of the data section (8 bytes"},
        HeaderCase{"HugeOffsets",
                   "{" + Entry("w", "\"F32\"", "[1]", "[1000000000000, 1000000000004]") + "}", 8,
                   "pass the end of the data section"},
        HeaderCase{"SizeMismatch", "{" + Entry("w", "\"BF16\"", "[2, 3]", "[0, 8]") + "}", 8,
                   "tensor w: data_offsets [0, 8] hold 8 bytes, but shape [2, 3] of BF16 needs 12"},
        HeaderCase{"SizeMismatchUnsupportedDtype",
                   "{" + Entry("w", "\"F64\"", "[2]", "[0, 8]") + "}", 8,
                   "shape [2] of F64 needs 16"},
        HeaderCase{"Overlap",
                   "{" + Entry("a", "\"F32\"", "[2]", "[0, 8]") + ", " +
                       Entry("b", "\"F32\"", "[2]", "[4, 12]") + "}",
                   12, "tensor b: data range [4, 12) overlaps tensor a [0, 8)"},
        HeaderCase{"Contained",
                   "{" + Entry("big", "\"F32\"", "[4]", "[0, 16]") + ", " +
                       Entry("small", "\"F32\"", "[1]", "[4, 8]") + ", " +
                       Entry("after", "\"F32\"", "[1]", "[8, 12]") + "}",
                   16, "overlaps tensor big"},
        HeaderCase{"DuplicateKey",
                   "{" + Entry("w", "\"F32\"", "[1]", "[0, 4]") + ", " +
                       Entry("w", "\"F32\"", "[1]", "[4, 8]") + "}",
                   8, "malformed JSON: duplicate key \"w\""},
        // Repeats spelled with escapes: llvm::json decodes keys and would silently keep one of
        // the two entries, so the check must compare decoded names.
        HeaderCase{"DuplicateKeyUnicodeEscape",
                   "{" + Entry("norm.weight", "\"F32\"", "[1]", "[0, 4]") + ", " +
                       Entry("nor\\u006d.weight", "\"F32\"", "[1]", "[4, 8]") + "}",
                   8, "malformed JSON: duplicate key \"norm.weight\""},
        HeaderCase{"DuplicateKeyUpperCaseHexEscape",
                   "{" + Entry("\\u004Eorm", "\"F32\"", "[1]", "[0, 4]") + ", " +
                       Entry("Norm", "\"F32\"", "[1]", "[4, 8]") + "}",
                   8, "duplicate key \"Norm\""},
        HeaderCase{"DuplicateKeyShortEscape",
                   "{" + Entry("a/b", "\"F32\"", "[1]", "[0, 4]") + ", " +
                       Entry("a\\/b", "\"F32\"", "[1]", "[4, 8]") + "}",
                   8, "duplicate key \"a/b\""},
        HeaderCase{"DuplicateKeySurrogatePair",
                   "{" + Entry("w\xF0\x9F\x98\x80", "\"F32\"", "[1]", "[0, 4]") + ", " +
                       Entry("w\\ud83d\\ude00", "\"F32\"", "[1]", "[4, 8]") + "}",
                   8, "duplicate key \"w\xF0\x9F\x98\x80\""},
        HeaderCase{"DuplicateKeyBothEscaped",
                   "{" + Entry("\\u0077", "\"F32\"", "[1]", "[0, 4]") + ", " +
                       Entry("\\u0077", "\"F32\"", "[1]", "[4, 8]") + "}",
                   8, "duplicate key \"w\""},
        // The data section must be tiled by the tensors, as the reference reader requires.
        HeaderCase{"GapBetweenTensors",
                   "{" + Entry("a", "\"F32\"", "[1]", "[0, 4]") + ", " +
                       Entry("b", "\"F32\"", "[1]", "[8, 12]") + "}",
                   12,
                   "model.safetensors: bytes [4, 8) of the data section belong to no tensor "
                   "(between tensors a and b)"},
        HeaderCase{"GapBeforeTheFirstTensor", "{" + Entry("a", "\"F32\"", "[1]", "[4, 8]") + "}", 8,
                   "bytes [0, 4) of the data section belong to no tensor (before tensor a)"},
        HeaderCase{"TrailingBytes", "{" + Entry("a", "\"F32\"", "[1]", "[0, 4]") + "}", 7,
                   "bytes [4, 7) of the data section belong to no tensor (after the last tensor, "
                   "a)"},
        HeaderCase{"DataWithoutTensors", "{\"__metadata__\": {\"format\": \"pt\"}}", 3,
                   "bytes [0, 3) of the data section belong to no tensor (the header lists no "
                   "data)"},
        HeaderCase{"TrailingBytesAfterEmptyTensor",
                   "{" + Entry("a", "\"F32\"", "[1]", "[0, 4]") + ", " +
                       Entry("e", "\"F32\"", "[0]", "[6, 6]") + "}",
                   6, "bytes [4, 6) of the data section belong to no tensor"}),
    [](const ::testing::TestParamInfo<HeaderCase>& info) { return info.param.label; });

TEST(SafetensorsTest, HeaderLengthAbsurd) {
  const std::string dir = FreshDir();
  WriteFile(dir + "/model.safetensors", U64(uint64_t{1} << 40) + "{}");
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(checkpoint.status()),
              HasSubstr("header length 1099511627776 exceeds the limit of 16777216"));
  WriteFile(dir + "/model.safetensors", U64(~uint64_t{0}) + "{}");
  checkpoint = SafetensorsCheckpoint::Open(dir);
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("exceeds the limit"));
}

// The repro of a header length lowered into the header's space padding: the JSON still parses
// (only padding is cut), so without the tiling rule every tensor would be read K bytes early.
TEST(SafetensorsTest, HeaderLengthShiftedIntoThePaddingIsRejected) {
  for (const char* model : {"tiny-a-f32", "tiny-a-bf16"}) {
    std::ifstream in(ModelDir(model) + "/model.safetensors", std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string original = buffer.str();
    uint64_t length = 0;
    for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<uint8_t>(original[i]);
    std::string header = original.substr(8, length);
    header.erase(header.find_last_not_of(' ') + 1);
    header.append(8, ' ');  // Legal padding, which a shifted length can cut into.
    const std::string data = original.substr(8 + length);
    const std::string dir = FreshDir();
    for (uint64_t shift = 0; shift < 8; ++shift) {
      WriteFile(dir + "/model.safetensors", absl::StrCat(U64(header.size() - shift), header, data));
      absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
      if (shift == 0) {
        ASSERT_TRUE(checkpoint.ok()) << model << ": " << checkpoint.status();
        continue;
      }
      ASSERT_FALSE(checkpoint.ok()) << model << " shift " << shift;
      EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(Msg(checkpoint.status()),
                  HasSubstr(absl::StrCat(dir, "/model.safetensors: bytes [", data.size(), ", ",
                                         data.size() + shift,
                                         ") of the data section belong to no tensor")));
    }
  }
}

// Empty tensors take no bytes: their offsets need only lie inside the data section.
TEST(SafetensorsTest, EmptyTensorsAnywhereInTheDataSection) {
  absl::StatusOr<SafetensorsCheckpoint> checkpoint =
      OpenWithHeader("{" + Entry("a", "\"F32\"", "[1]", "[0, 4]") + ", " +
                         Entry("e0", "\"F32\"", "[0]", "[0, 0]") + ", " +
                         Entry("e2", "\"BF16\"", "[0, 3]", "[2, 2]") + ", " +
                         Entry("b", "\"F32\"", "[1]", "[4, 8]") + ", " +
                         Entry("e8", "\"F32\"", "[0]", "[8, 8]") + "}",
                     8);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->tensors().size(), 5u);
  // And an empty header with an empty data section is a valid (empty) file.
  EXPECT_TRUE(OpenWithHeader("{}", 0).ok());
  EXPECT_TRUE(OpenWithHeader("  {  }  ", 0).ok());
}

// Keys that differ only in how they are written are one key; keys that decode differently are
// two, even when their raw texts look alike.
TEST(SafetensorsTest, EscapedNamesAreDecoded) {
  absl::StatusOr<SafetensorsCheckpoint> checkpoint =
      OpenWithHeader("{" + Entry("nor\\u006d", "\"F32\"", "[1]", "[0, 4]") + ", " +
                         Entry("norm\\n", "\"F32\"", "[1]", "[4, 8]") + "}",
                     8);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_NE(checkpoint->Find("norm"), nullptr);
  EXPECT_NE(checkpoint->Find("norm\n"), nullptr);
}

// Header size and tensor count limits bound what a header can make the reader allocate.
TEST(SafetensorsTest, HeaderOverTheSizeLimit) {
  const std::string dir = FreshDir();
  // A valid header of 16 MiB + 8 bytes (spaces are legal padding), with the file long enough.
  std::string header = "{}";
  header.resize(kMaxSafetensorsHeaderBytes + 8, ' ');
  WriteFile(dir + "/model.safetensors", absl::StrCat(U64(header.size()), header));
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(checkpoint.status()),
              HasSubstr("model.safetensors: header length 16777224 exceeds the limit of 16777216"));
  EXPECT_THAT(
      Msg(ParseSafetensorsHeader(header, 8 + header.size(), 8 + header.size(), "x", 0).status()),
      HasSubstr("x: header of 16777224 bytes exceeds the limit of 16777216"));
}

// `count` empty tensors named t0000000, t0000001, ...: the cheapest entries per byte.
std::string ManyEmptyTensors(size_t count) {
  std::string header = "{";
  header.reserve(count * 64);
  for (size_t i = 0; i < count; ++i) {
    absl::StrAppend(&header, i == 0 ? "" : ",", "\"t", absl::Dec(i, absl::kZeroPad7),
                    "\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}");
  }
  return header + "}";
}

TEST(SafetensorsTest, TooManyTensors) {
  // With a __metadata__ entry first, the tensor count still decides, with its own message.
  const std::string with_metadata = "{\"__metadata__\": {\"format\": \"pt\"}, " +
                                    ManyEmptyTensors(kMaxSafetensorsTensors + 1).substr(1);
  EXPECT_THAT(Msg(ParseSafetensorsHeader(with_metadata, 8 + with_metadata.size(),
                                         8 + with_metadata.size(), "m", 0)
                      .status()),
              HasSubstr("m: the header lists more than 100000 tensors"));

  const std::string at_limit = ManyEmptyTensors(kMaxSafetensorsTensors);
  absl::StatusOr<std::vector<TensorInfo>> tensors =
      ParseSafetensorsHeader(at_limit, 8 + at_limit.size(), 8 + at_limit.size(), "x", 0);
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  EXPECT_EQ(tensors->size(), kMaxSafetensorsTensors);
  const std::string over = ManyEmptyTensors(kMaxSafetensorsTensors + 1);
  const absl::Status status =
      ParseSafetensorsHeader(over, 8 + over.size(), 8 + over.size(), "x.safetensors", 0).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(status), HasSubstr("x.safetensors: the header lists more than 100000 tensors"));
}

// Peak RSS growth (bytes) of `fn` run in a forked child, or -1 if the child failed. A child
// starts from the parent's RSS, so the growth is that of `fn` alone.
int64_t PeakRssGrowthInChild(const std::function<bool()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    const bool ok = fn();
    getrusage(RUSAGE_SELF, &after);
    const int64_t growth = ok ? (after.ru_maxrss - before.ru_maxrss) * int64_t{1024} : -1;
    (void)!write(fds[1], &growth, sizeof(growth));
    _exit(0);
  }
  close(fds[1]);
  int64_t growth = -1;
  if (pid < 0 || read(fds[0], &growth, sizeof(growth)) != sizeof(growth)) growth = -1;
  close(fds[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  return growth;
}

// The repro of an 83 MB header of dummy tensors took 4.4 GB: llvm::json builds a ≥ 4 KiB hash
// table per entry object. Parsed entry by entry, the largest header of the most entries the
// limits allow (100,000 entries, ~6 MB) must stay within a small multiple of its size.
TEST(SafetensorsTest, HeaderParseMemoryIsASmallMultipleOfItsSize) {
  const std::string header = ManyEmptyTensors(kMaxSafetensorsTensors);
  const int64_t growth = PeakRssGrowthInChild([&] {
    absl::StatusOr<std::vector<TensorInfo>> tensors =
        ParseSafetensorsHeader(header, 8 + header.size(), 8 + header.size(), "x", 0);
    return tensors.ok() && tensors->size() == kMaxSafetensorsTensors;
  });
  ASSERT_GE(growth, 0) << "the parse failed";
  RecordProperty("header_bytes", static_cast<int>(header.size()));
  RecordProperty("peak_rss_growth_bytes", static_cast<int>(growth));
  // ~30 MB measured (TensorInfos, the name set, the vector's growth); a whole-header llvm::json
  // tree took ~450 MB.
  EXPECT_LT(growth, static_cast<int64_t>(8 * header.size())) << header.size() << " bytes";
}

// Open() bounds the total over the shards too.
TEST(SafetensorsTest, TooManyTensorsOverTheShards) {
  const std::string dir = FreshDir();
  const std::string half = ManyEmptyTensors(kMaxSafetensorsTensors / 2 + 1);
  std::string other = half;
  for (size_t at = other.find("\"t"); at != std::string::npos; at = other.find("\"t", at + 1)) {
    other[at + 1] = 'u';  // Same count, other names.
  }
  WriteFile(dir + "/a.safetensors", absl::StrCat(U64(half.size()), half));
  WriteFile(dir + "/b.safetensors", absl::StrCat(U64(other.size()), other));
  WriteFile(dir + "/model.safetensors.index.json",
            "{\"weight_map\": {\"t0000000\": \"a.safetensors\", \"u0000000\": \"b.safetensors\"}}");
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(checkpoint.status()),
              HasSubstr("b.safetensors: the checkpoint has more than 100000 tensors"));
}

// A FIFO in place of a checkpoint file is rejected at once, not waited on forever.
TEST(SafetensorsTest, FifosAreRejectedWithoutBlocking) {
  const InterruptGuard guard;
  const std::string dir = FreshDir();
  // FIFOs left by an earlier run of the test.
  for (const char* path : {"/model.safetensors", "/sharded/s.safetensors",
                           "/fifo_index/model.safetensors.index.json"}) {
    ::unlink((dir + path).c_str());
  }
  ASSERT_EQ(mkfifo((dir + "/model.safetensors").c_str(), 0644), 0);
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(checkpoint.status()),
              HasSubstr(dir + "/model.safetensors: not a regular file (a FIFO)"));
  // The path of the FIFO itself.
  checkpoint = SafetensorsCheckpoint::Open(dir + "/model.safetensors");
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("not a regular file (a FIFO)"));

  // A FIFO shard of an index.
  const std::string sharded = dir + "/sharded";
  ::mkdir(sharded.c_str(), 0755);
  WriteFile(sharded + "/model.safetensors.index.json",
            "{\"weight_map\": {\"w\": \"s.safetensors\"}}");
  ASSERT_EQ(mkfifo((sharded + "/s.safetensors").c_str(), 0644), 0);
  checkpoint = SafetensorsCheckpoint::Open(sharded);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("s.safetensors: not a regular file (a FIFO)"));

  // A FIFO index.
  const std::string fifo_index = dir + "/fifo_index";
  ::mkdir(fifo_index.c_str(), 0755);
  ASSERT_EQ(mkfifo((fifo_index + "/model.safetensors.index.json").c_str(), 0644), 0);
  checkpoint = SafetensorsCheckpoint::Open(fifo_index);
  EXPECT_THAT(Msg(checkpoint.status()),
              HasSubstr("model.safetensors.index.json: not a regular file (a FIFO)"));
}

TEST(SafetensorsTest, HeaderLengthPastFile) {
  const std::string dir = FreshDir();
  WriteFile(dir + "/model.safetensors", U64(100) + "{}");
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(checkpoint.status()),
              HasSubstr("model.safetensors: header length 100 is more than the 2 bytes"));
}

TEST(SafetensorsTest, TruncatedFiles) {
  const std::string dir = FreshDir();
  // Shorter than the length field.
  WriteFile(dir + "/model.safetensors", "abc");
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("truncated: the file has 3 bytes"));
  // An empty file.
  WriteFile(dir + "/model.safetensors", "");
  checkpoint = SafetensorsCheckpoint::Open(dir);
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("truncated: the file has 0 bytes"));
  // A valid file cut in the middle of its data.
  const std::string header = "{" + Entry("w", "\"F32\"", "[16]", "[0, 64]") + "}";
  const std::string full = SafetensorsBytes(header, 64);
  WriteFile(dir + "/model.safetensors", full.substr(0, full.size() - 10));
  checkpoint = SafetensorsCheckpoint::Open(dir);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("tensor w: data_offsets [0, 64] pass the end"));
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("truncated"));
}

TEST(SafetensorsTest, MissingDirectoryOrFile) {
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(FreshDir());
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("no model.safetensors"));
  checkpoint = SafetensorsCheckpoint::Open("/nonexistent/dir");
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("/nonexistent/dir: cannot open"));
}

// Sharded checkpoints: two shards and an index.
class ShardedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir();
    WriteFile(dir_ + "/model-00001-of-00002.safetensors",
              SafetensorsBytes("{" + Entry("a", "\"F32\"", "[2]", "[0, 8]") + ", " +
                                   Entry("b", "\"BF16\"", "[2]", "[8, 12]") + "}",
                               12));
    WriteFile(dir_ + "/model-00002-of-00002.safetensors",
              SafetensorsBytes("{" + Entry("c", "\"F32\"", "[1]", "[0, 4]") + "}", 4));
  }
  void WriteIndex(const std::string& weight_map) {
    WriteFile(dir_ + "/model.safetensors.index.json",
              "{\"metadata\": {\"total_size\": 16}, \"weight_map\": " + weight_map + "}");
  }
  std::string dir_;
};

TEST_F(ShardedTest, OpensAllShards) {
  WriteIndex(
      "{\"a\": \"model-00001-of-00002.safetensors\", \"b\": \"model-00001-of-00002.safetensors\","
      " \"c\": \"model-00002-of-00002.safetensors\"}");
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir_);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  ASSERT_EQ(checkpoint->files().size(), 2u);
  ASSERT_EQ(checkpoint->tensors().size(), 3u);
  const TensorInfo* c = checkpoint->Find("c");
  ASSERT_NE(c, nullptr);
  EXPECT_THAT(checkpoint->files()[c->file_index], HasSubstr("model-00002-of-00002"));
  const absl::Span<const uint8_t> data = checkpoint->Data(*c);
  ASSERT_EQ(data.size(), 4u);
  EXPECT_EQ(data[0], 0);
  EXPECT_EQ(data[3], 3);
  const TensorInfo* b = checkpoint->Find("b");
  EXPECT_EQ(checkpoint->Data(*b)[0], 8);  // byte 8 of the first shard's data section
}

TEST_F(ShardedTest, MissingShard) {
  WriteIndex("{\"a\": \"model-00001-of-00002.safetensors\", \"z\": \"model-00003.safetensors\"}");
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir_);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("shard"));
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("model-00003.safetensors"));
}

TEST_F(ShardedTest, TensorMissingFromItsShard) {
  WriteIndex(
      "{\"a\": \"model-00001-of-00002.safetensors\", \"c\": \"model-00001-of-00002.safetensors\"}");
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir_);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      Msg(checkpoint.status()),
      HasSubstr("tensor c is listed in " + dir_ + "/model.safetensors.index.json for shard " +
                dir_ + "/model-00001-of-00002.safetensors but not found there"));
}

TEST_F(ShardedTest, DuplicateAcrossShards) {
  WriteFile(dir_ + "/model-00002-of-00002.safetensors",
            SafetensorsBytes("{" + Entry("a", "\"F32\"", "[1]", "[0, 4]") + "}", 4));
  WriteIndex(
      "{\"a\": \"model-00001-of-00002.safetensors\", \"b\": \"model-00002-of-00002.safetensors\"}");
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir_);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("tensor a appears twice"));
}

TEST_F(ShardedTest, IndexDuplicateSpelledWithEscapes) {
  WriteIndex(
      "{\"a\": \"model-00001-of-00002.safetensors\", \"\\u0061\": "
      "\"model-00002-of-00002.safetensors\"}");
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir_);
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(checkpoint.status()),
              HasSubstr("model.safetensors.index.json: malformed JSON: duplicate key \"a\""));
}

TEST_F(ShardedTest, BadIndex) {
  WriteIndex("[]");
  EXPECT_THAT(Msg(SafetensorsCheckpoint::Open(dir_).status()), HasSubstr("weight_map"));
  WriteIndex("{\"a\": \"../model-00001-of-00002.safetensors\"}");
  EXPECT_THAT(Msg(SafetensorsCheckpoint::Open(dir_).status()),
              HasSubstr("weight_map[\"a\"] must be the file name of a shard"));
  WriteIndex("{\"a\": 7}");
  EXPECT_THAT(Msg(SafetensorsCheckpoint::Open(dir_).status()), HasSubstr("weight_map[\"a\"]"));
  WriteFile(dir_ + "/model.safetensors.index.json", "{\"weight_map\": ");
  EXPECT_THAT(Msg(SafetensorsCheckpoint::Open(dir_).status()), HasSubstr("malformed JSON"));
  WriteFile(dir_ + "/model.safetensors.index.json", "{\"metadata\": {}}");
  EXPECT_THAT(Msg(SafetensorsCheckpoint::Open(dir_).status()),
              HasSubstr("weight_map must be a non-empty object"));
  WriteFile(dir_ + "/model.safetensors.index.json",
            "{\"metadata\": [1,], \"weight_map\": {\"a\": \"model-00001-of-00002.safetensors\"}}");
  EXPECT_THAT(Msg(SafetensorsCheckpoint::Open(dir_).status()), HasSubstr("malformed JSON"));
}

TEST(SafetensorsTest, ParseHeaderDirectly) {
  absl::StatusOr<std::vector<TensorInfo>> tensors = ParseSafetensorsHeader(
      "{\"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]},"
      " \"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}",
      /*data_section_offset=*/100, /*file_size=*/108, "x.safetensors", /*file_index=*/3);
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  ASSERT_EQ(tensors->size(), 2u);
  EXPECT_EQ((*tensors)[0].name, "a");  // sorted by offset
  EXPECT_EQ((*tensors)[0].data_offset, 100u);
  EXPECT_EQ((*tensors)[1].data_offset, 104u);
  EXPECT_EQ((*tensors)[1].file_index, 3);
  EXPECT_FALSE(ParseSafetensorsHeader("{}", 200, 100, "x", 0).ok());
}

// Random corruptions of a real file (byte flips in the header and length field, truncations)
// must give a status, never a crash; whatever opens must read back within bounds.
TEST(SafetensorsTest, CorruptedFilesNeverCrash) {
  std::ifstream in(ModelDir("tiny-a-bf16") + "/model.safetensors", std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string original = buffer.str();
  const size_t header_end = 8 + 17480;
  const std::string dir = FreshDir();
  std::mt19937 rng(7);
  const char kJsonChars[] = "{}[]\",:0123456789-e.\" FBI";
  int opened = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    std::string bytes = original;
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations; ++m) {
      const size_t where = rng() % header_end;
      bytes[where] =
          rng() % 2 ? kJsonChars[rng() % (sizeof(kJsonChars) - 1)] : static_cast<char>(rng());
    }
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    WriteFile(dir + "/model.safetensors", bytes);
    absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
    if (!checkpoint.ok()) {
      EXPECT_FALSE(checkpoint.status().message().empty());
      continue;
    }
    ++opened;
    std::vector<float> values;
    for (const TensorInfo& info : checkpoint->tensors()) {
      ASSERT_LE(info.data_offset + info.num_bytes, bytes.size());
      if (info.num_elements() > (uint64_t{1} << 24)) continue;
      values.resize(info.num_elements());
      (void)checkpoint->ReadAsF32(info, values.data());
    }
  }
  EXPECT_GT(opened, 0);  // Some flips land in harmless places (e.g. inside a name).
}

TEST(SafetensorsTest, MovedCheckpointKeepsData) {
  absl::StatusOr<SafetensorsCheckpoint> opened =
      SafetensorsCheckpoint::Open(ModelDir("tiny-a-f32"));
  ASSERT_TRUE(opened.ok());
  SafetensorsCheckpoint moved = *std::move(opened);
  const TensorInfo* norm = moved.Find(absl::StrCat(kPrefix, "norm.weight"));
  ASSERT_NE(norm, nullptr);
  std::vector<float> values(64);
  EXPECT_TRUE(moved.ReadAsF32(*norm, values.data()).ok());
}

}  // namespace
}  // namespace cortiq
