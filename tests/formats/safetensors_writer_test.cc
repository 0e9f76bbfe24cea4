// Tests of formats/safetensors_writer: files written in one go and in chunks read back
// byte for byte by SafetensorsCheckpoint, f32 conversion on write, misuse errors, and sharded
// output with its index.
#include "formats/safetensors_writer.h"

#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/safetensors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

// The status message as std::string (absl::string_view prints as a char array in gtest).
std::string Msg(const absl::Status& status) { return std::string(status.message()); }

std::string FreshDir() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = absl::StrCat(::testing::TempDir(), "/cortiq_writer_",
                                       info->test_suite_name(), "_", info->name());
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

std::vector<uint8_t> Pattern(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(seed + 7 * i);
  return bytes;
}

TEST(SafetensorsWriterTest, RoundTrip) {
  const std::string dir = FreshDir();
  const std::vector<TensorSpec> specs = {
      {"model.embed.weight", DType::kBF16, {8, 4}},
      {"model.norm.weight", DType::kF32, {4}},
      {"model.empty", DType::kF32, {0, 3}},
      {"model.half", DType::kF16, {3}},
      {"model.scalar", DType::kF32, {}},
  };
  absl::StatusOr<SafetensorsWriter> writer =
      SafetensorsWriter::Create(dir + "/model.safetensors", specs);
  ASSERT_TRUE(writer.ok()) << writer.status();
  std::vector<std::vector<uint8_t>> payloads;
  for (size_t i = 0; i < specs.size(); ++i) {
    payloads.push_back(Pattern(TensorSpecNumBytes(specs[i]), static_cast<uint8_t>(i * 40)));
    ASSERT_TRUE(writer->WriteTensor(specs[i].name, payloads.back()).ok()) << specs[i].name;
  }
  EXPECT_EQ(writer->current(), nullptr);
  ASSERT_TRUE(writer->Finish().ok());
  const uint64_t file_size = writer->file_size();

  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  ASSERT_EQ(checkpoint->tensors().size(), specs.size());
  uint64_t data_start = ~uint64_t{0};
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorInfo* info = checkpoint->Find(specs[i].name);
    ASSERT_NE(info, nullptr) << specs[i].name;
    EXPECT_EQ(info->dtype, specs[i].dtype);
    EXPECT_EQ(info->shape, specs[i].shape);
    const absl::Span<const uint8_t> data = checkpoint->Data(*info);
    EXPECT_EQ(std::vector<uint8_t>(data.begin(), data.end()), payloads[i]) << specs[i].name;
    data_start = std::min(data_start, info->data_offset);
  }
  EXPECT_EQ(data_start % 8, 0u);  // header padded to an 8-byte boundary
  struct stat st;
  ASSERT_EQ(::stat((dir + "/model.safetensors").c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), file_size);

  // The header is plain JSON with the metadata first, as the reference writer produces.
  std::ifstream in(dir + "/model.safetensors", std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str().substr(8, 40), HasSubstr("{\"__metadata__\":{\"format\":\"pt\"}"));
}

TEST(SafetensorsWriterTest, ChunkedAppendAndF32Conversion) {
  const std::string dir = FreshDir();
  const std::vector<TensorSpec> specs = {
      {"big", DType::kF32, {1000, 3}},
      {"as_bf16", DType::kBF16, {5}},
      {"as_f16", DType::kF16, {5}},
      {"as_f32", DType::kF32, {5}},
  };
  absl::StatusOr<SafetensorsWriter> writer =
      SafetensorsWriter::Create(dir + "/model.safetensors", specs, /*metadata=*/{});
  ASSERT_TRUE(writer.ok()) << writer.status();
  const std::vector<uint8_t> big = Pattern(12000, 1);
  // Uneven chunks, one larger than nothing but smaller than the tensor.
  size_t done = 0;
  for (size_t chunk : {1u, 999u, 5000u, 6000u}) {
    ASSERT_EQ(writer->current()->name, "big");
    ASSERT_TRUE(writer->Append(absl::MakeConstSpan(big).subspan(done, chunk)).ok());
    done += chunk;
  }
  ASSERT_EQ(writer->current()->name, "as_bf16");
  const float values[] = {1.0f, 1.00390625f, -3.5f, 1e-3f, 65519.0f};
  // All 15 values in one call: AppendF32 moves from tensor to tensor converting each.
  std::vector<float> all;
  for (int t = 0; t < 3; ++t) all.insert(all.end(), values, values + 5);
  ASSERT_TRUE(writer->AppendF32(all).ok());
  EXPECT_EQ(writer->current(), nullptr);
  ASSERT_TRUE(writer->Finish().ok());

  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  const absl::Span<const uint8_t> big_data = checkpoint->Data(*checkpoint->Find("big"));
  EXPECT_EQ(std::vector<uint8_t>(big_data.begin(), big_data.end()), big);
  uint16_t bf16[5];
  ASSERT_TRUE(checkpoint->ReadAsBF16(*checkpoint->Find("as_bf16"), bf16).ok());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bf16[i], F32ToBf16(values[i])) << i;
  float widened[5];
  ASSERT_TRUE(checkpoint->ReadAsF32(*checkpoint->Find("as_f16"), widened).ok());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(widened[i], F16ToF32(F32ToF16(values[i]))) << i;
  ASSERT_TRUE(checkpoint->ReadAsF32(*checkpoint->Find("as_f32"), widened).ok());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(widened[i], values[i]) << i;
}

TEST(SafetensorsWriterTest, RejectsBadSpecs) {
  const std::string path = FreshDir() + "/model.safetensors";
  auto create = [&](std::vector<TensorSpec> specs) {
    return SafetensorsWriter::Create(path, std::move(specs)).status();
  };
  EXPECT_THAT(Msg(create({{"a", DType::kF32, {1}}, {"a", DType::kF32, {2}}})),
              HasSubstr("tensor a is listed twice"));
  EXPECT_THAT(Msg(create({{"a", DType::kF32, {-1}}})), HasSubstr("tensor a: dimensions"));
  EXPECT_THAT(Msg(create({{"a", DType::kF32, {int64_t{1} << 40, int64_t{1} << 40}}})),
              HasSubstr("tensor a: dimensions"));
  EXPECT_THAT(Msg(create({{"a", DType::kUnsupported, {1}}})), HasSubstr("tensor a: dtype"));
  EXPECT_THAT(Msg(create({{"__metadata__", DType::kF32, {1}}})), HasSubstr("reserved"));
  EXPECT_THAT(Msg(create({{"", DType::kF32, {1}}})), HasSubstr("reserved or empty"));
  EXPECT_EQ(SafetensorsWriter::Create("/nonexistent/dir/x.safetensors", {}).status().code(),
            absl::StatusCode::kInternal);
}

TEST(SafetensorsWriterTest, RejectsMisuse) {
  const std::string path = FreshDir() + "/model.safetensors";
  absl::StatusOr<SafetensorsWriter> writer =
      SafetensorsWriter::Create(path, {{"first", DType::kF32, {2}}, {"second", DType::kBF16, {2}}});
  ASSERT_TRUE(writer.ok());
  const std::vector<uint8_t> eight = Pattern(8, 0);
  EXPECT_THAT(Msg(writer->WriteTensor("second", Pattern(4, 0))),
              HasSubstr("tensor second written out of order; expected first"));
  EXPECT_THAT(Msg(writer->WriteTensor("third", eight)), HasSubstr("not in the header"));
  EXPECT_THAT(Msg(writer->WriteTensor("first", Pattern(4, 0))),
              HasSubstr("tensor first: got 4 bytes, its shape needs 8"));
  EXPECT_THAT(Msg(writer->Append(Pattern(9, 0))),
              HasSubstr("tensor first: 9 bytes appended but only 8 remain"));
  ASSERT_TRUE(writer->Append(Pattern(3, 0)).ok());
  EXPECT_THAT(Msg(writer->WriteTensor("first", eight)), HasSubstr("partially written"));
  const absl::Status unfinished = writer->Finish();
  EXPECT_EQ(unfinished.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(unfinished), HasSubstr("tensor first is missing 5 of its 8 bytes"));
  ASSERT_TRUE(writer->Append(Pattern(5, 0)).ok());
  ASSERT_TRUE(writer->WriteTensor("second", Pattern(4, 0)).ok());
  EXPECT_THAT(Msg(writer->Append(Pattern(1, 0))), HasSubstr("after the data of all tensors"));
  EXPECT_TRUE(writer->Finish().ok());
}

TEST(SafetensorsWriterTest, UnfinishedFileIsRejectedByTheReader) {
  const std::string dir = FreshDir();
  {
    absl::StatusOr<SafetensorsWriter> writer =
        SafetensorsWriter::Create(dir + "/model.safetensors", {{"w", DType::kF32, {16}}});
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->Append(Pattern(10, 0)).ok());
  }  // Destroyed without Finish().
  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  EXPECT_THAT(Msg(checkpoint.status()), HasSubstr("tensor w: data_offsets [0, 64] pass the end"));
}

TEST(SafetensorsWriterTest, ShardsAndIndex) {
  const std::string dir = FreshDir();
  std::vector<TensorSpec> specs;
  for (int i = 0; i < 7; ++i) specs.push_back({absl::StrCat("t", i), DType::kF32, {10}});  // 40 B
  specs.push_back({"huge", DType::kBF16, {100}});  // 200 B: more than the limit, its own shard
  const std::vector<SafetensorsShard> shards = PlanSafetensorsShards(specs, 100);
  ASSERT_EQ(shards.size(), 5u);  // [t0 t1] [t2 t3] [t4 t5] [t6] [huge]
  EXPECT_EQ(shards[0].file_name, "model-00001-of-00005.safetensors");
  EXPECT_EQ(shards[4].file_name, "model-00005-of-00005.safetensors");
  EXPECT_EQ(shards[3].tensors.size(), 1u);
  EXPECT_EQ(shards[4].tensors[0].name, "huge");

  for (const SafetensorsShard& shard : shards) {
    absl::StatusOr<SafetensorsWriter> writer =
        SafetensorsWriter::Create(dir + "/" + shard.file_name, shard.tensors);
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (const TensorSpec& spec : shard.tensors) {
      ASSERT_TRUE(
          writer->WriteTensor(spec.name, Pattern(TensorSpecNumBytes(spec), spec.name[1])).ok());
    }
    ASSERT_TRUE(writer->Finish().ok());
  }
  ASSERT_TRUE(WriteSafetensorsIndex(dir + "/model.safetensors.index.json", shards).ok());
  std::ifstream in(dir + "/model.safetensors.index.json");
  std::stringstream index_text;
  index_text << in.rdbuf();
  EXPECT_THAT(index_text.str(), HasSubstr("\"total_size\": 480"));

  absl::StatusOr<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::Open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->files().size(), 5u);
  ASSERT_EQ(checkpoint->tensors().size(), 8u);
  for (const TensorSpec& spec : specs) {
    const TensorInfo* info = checkpoint->Find(spec.name);
    ASSERT_NE(info, nullptr) << spec.name;
    const absl::Span<const uint8_t> data = checkpoint->Data(*info);
    EXPECT_EQ(std::vector<uint8_t>(data.begin(), data.end()),
              Pattern(TensorSpecNumBytes(spec), spec.name[1]));
  }
  EXPECT_THAT(checkpoint->files()[checkpoint->Find("huge")->file_index],
              HasSubstr("model-00005-of-00005"));

  std::vector<SafetensorsShard> duplicated = {{"a.safetensors", {{"x", DType::kF32, {1}}}},
                                              {"b.safetensors", {{"x", DType::kF32, {1}}}}};
  EXPECT_THAT(Msg(WriteSafetensorsIndex(dir + "/dup.json", duplicated)),
              HasSubstr("tensor x is in two shards"));
}

}  // namespace
}  // namespace cortiq
