// Tests every reference quantizer and dequantizer of ops/quantize*.h against
// llama.cpp itself: tests/data/llama_quantize/ holds rows of f32 weights (the
// crafted corner cases and random rows of tests/ops/make_llama_quantize_blocks.py),
// the blocks `llama-quantize --pure` wrote for them in every format, and the
// FNV-1a hashes of llama.cpp's dequantization of those blocks. Quantizing the
// source must give the same bytes; dequantizing llama.cpp's blocks the same
// f32 bits.

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/quantize.h"
#include "ops/quantize_iq4.h"
#include "ops/quantize_k.h"
#include "ops/quantize_legacy.h"

namespace cortiq {
namespace ops {
namespace {

#ifndef CORTIQ_TEST_DATA_DIR
#error "CORTIQ_TEST_DATA_DIR must name tests/data"
#endif

std::string DataPath(const std::string& name) {
  return std::string(CORTIQ_TEST_DATA_DIR) + "/llama_quantize/" + name;
}

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

std::vector<float> Source() {
  const std::vector<uint8_t> bytes = ReadFile(DataPath("source.f32"));
  std::vector<float> x(bytes.size() / sizeof(float));
  memcpy(x.data(), bytes.data(), x.size() * sizeof(float));
  return x;
}

// dequantized.txt: "TYPE HASH COUNT" per line.
std::map<std::string, std::pair<uint64_t, size_t>> Hashes() {
  std::ifstream in(DataPath("dequantized.txt"));
  std::map<std::string, std::pair<uint64_t, size_t>> out;
  std::string type, hash;
  size_t count;
  while (in >> type >> hash >> count) {
    out[type] = {std::stoull(hash, nullptr, 16), count};
  }
  return out;
}

uint64_t Fnv1a64(const void* data, size_t bytes) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 0x100000001B3ull;
  }
  return h;
}

struct Format {
  const char* name;  // GGUF type name, as llama-quantize spells it
  size_t block_weights;
  size_t block_bytes;
  void (*quantize)(const float*, size_t, void*);
  void (*dequantize)(const void*, size_t, float*);
};

const Format kFormats[] = {
    {"F16", 1, 2, &QuantizeRowF16, &DequantizeRowF16},
    {"Q8_0", 32, kQ8_0BlockBytes, &QuantizeRowQ8_0, &DequantizeRowQ8_0},
    {"Q4_0", 32, kQ4_0BlockBytes, &QuantizeRowQ4_0, &DequantizeRowQ4_0},
    {"Q4_1", 32, kQ4_1BlockBytes, &QuantizeRowQ4_1, &DequantizeRowQ4_1},
    {"Q5_0", 32, kQ5_0BlockBytes, &QuantizeRowQ5_0, &DequantizeRowQ5_0},
    {"Q5_1", 32, kQ5_1BlockBytes, &QuantizeRowQ5_1, &DequantizeRowQ5_1},
    {"Q2_K", 256, kQ2_KBlockBytes, &QuantizeRowQ2_K, &DequantizeRowQ2_K},
    {"Q3_K", 256, kQ3_KBlockBytes, &QuantizeRowQ3_K, &DequantizeRowQ3_K},
    {"Q4_K", 256, kQ4_KBlockBytes, &QuantizeRowQ4_K, &DequantizeRowQ4_K},
    {"Q5_K", 256, kQ5_KBlockBytes, &QuantizeRowQ5_K, &DequantizeRowQ5_K},
    {"Q6_K", 256, kQ6_KBlockBytes, &QuantizeRowQ6_K, &DequantizeRowQ6_K},
    {"IQ4_NL", 32, kIQ4_NLBlockBytes, &QuantizeRowIQ4_NL, &DequantizeRowIQ4_NL},
    {"IQ4_XS", 256, kIQ4_XSBlockBytes, &QuantizeRowIQ4_XS, &DequantizeRowIQ4_XS},
};

class LlamaQuantizeTest : public ::testing::TestWithParam<Format> {};

TEST_P(LlamaQuantizeTest, QuantizerWritesLlamaQuantizesBlocks) {
  const Format& f = GetParam();
  const std::vector<float> x = Source();
  ASSERT_EQ(0u, x.size() % 256);
  const std::vector<uint8_t> expected = ReadFile(DataPath(std::string(f.name) + ".bin"));
  const size_t blocks = x.size() / f.block_weights;
  ASSERT_EQ(blocks * f.block_bytes, expected.size()) << f.name;
  std::vector<uint8_t> got(expected.size(), 0xAB);
  f.quantize(x.data(), x.size(), got.data());
  size_t mismatches = 0;
  for (size_t b = 0; b < blocks; ++b) {
    if (memcmp(&got[b * f.block_bytes], &expected[b * f.block_bytes], f.block_bytes) != 0) {
      if (++mismatches <= 5) {
        size_t i = 0;
        while (got[b * f.block_bytes + i] == expected[b * f.block_bytes + i]) ++i;
        ADD_FAILURE() << f.name << ": block " << b << " (weights from "
                      << b * f.block_weights << ") differs first at byte " << i
                      << ": got " << int(got[b * f.block_bytes + i]) << ", llama-quantize "
                      << int(expected[b * f.block_bytes + i]);
      }
    }
  }
  EXPECT_EQ(0u, mismatches) << f.name << ": blocks differing from llama-quantize's";
}

TEST_P(LlamaQuantizeTest, DequantizerMatchesLlamaCpp) {
  const Format& f = GetParam();
  const auto hashes = Hashes();
  ASSERT_EQ(1u, hashes.count(f.name)) << "no hash for " << f.name;
  const std::vector<uint8_t> blocks = ReadFile(DataPath(std::string(f.name) + ".bin"));
  const size_t n = blocks.size() / f.block_bytes * f.block_weights;
  ASSERT_EQ(hashes.at(f.name).second, n);
  std::vector<float> y(n);
  f.dequantize(blocks.data(), n, y.data());
  char hex[17];
  snprintf(hex, sizeof(hex), "%016llx",
           static_cast<unsigned long long>(Fnv1a64(y.data(), n * sizeof(float))));
  char want[17];
  snprintf(want, sizeof(want), "%016llx",
           static_cast<unsigned long long>(hashes.at(f.name).first));
  EXPECT_STREQ(want, hex) << f.name << ": dequantized values differ from llama.cpp's";
}

INSTANTIATE_TEST_SUITE_P(Formats, LlamaQuantizeTest, ::testing::ValuesIn(kFormats),
                         [](const ::testing::TestParamInfo<Format>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace ops
}  // namespace cortiq
