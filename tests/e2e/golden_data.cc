// Golden case loading for the end-to-end tests.
#include "tests/e2e/golden_data.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "gtest/gtest.h"

namespace cortiq {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<float> ReadFloats(const std::string& path) {
  std::string bytes = ReadAll(path);
  EXPECT_EQ(bytes.size() % 4, 0u) << path;
  std::vector<float> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), values.size() * 4);
  return values;
}

}  // namespace

GoldenCase LoadGoldenCase(const std::string& name) {
  const std::string dir = std::string(CORTIQ_TEST_DATA_DIR) + "/golden/" + name;
  GoldenCase c;
  c.name = name;
  c.model = name.substr(0, name.rfind("-T"));
  // tokens.json is a flat JSON array of non-negative integers.
  std::string text = ReadAll(dir + "/tokens.json");
  for (size_t i = 0; i < text.size();) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      size_t end = i;
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
      c.tokens.push_back(std::stoi(text.substr(i, end - i)));
      i = end;
    } else {
      ++i;
    }
  }
  c.logits_ref = ReadFloats(dir + "/logits_ref.f32");
  c.logits_llama = ReadFloats(dir + "/logits.f32");
  EXPECT_FALSE(c.tokens.empty()) << name;
  EXPECT_EQ(c.logits_ref.size() % c.tokens.size(), 0u) << name;
  EXPECT_EQ(c.logits_ref.size(), c.logits_llama.size()) << name;
  return c;
}

std::string ArtifactPath(const std::string& model, const std::string& mode) {
  return std::string(CORTIQ_ARTIFACT_DIR) + "/" + model + "." + mode + ".cortiq";
}

std::vector<std::string> GoldenCaseNames() {
  return {"tiny-a-f32-T6", "tiny-a-f32-T40", "tiny-a-bf16-T40"};
}

}  // namespace cortiq
