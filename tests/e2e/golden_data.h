// Loading of the golden cases in tests/data/golden/<case>/ (tokens.json, logits_ref.f32,
// logits.f32) and of compiled test artifacts.
#ifndef CORTIQ_TESTS_E2E_GOLDEN_DATA_H_
#define CORTIQ_TESTS_E2E_GOLDEN_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

namespace cortiq {

struct GoldenCase {
  std::string name;                // e.g. "tiny-a-f32-T40"
  std::string model;               // "tiny-a-f32" or "tiny-a-bf16"
  std::vector<int32_t> tokens;     // tokens.json; positions 0..T-1
  std::vector<float> logits_ref;   // [T, vocab]: float64 transformers-semantics reference
  std::vector<float> logits_llama; // [T, vocab]: llama.cpp CPU logits
};

// Reads tests/data/golden/`name`; aborts the test binary (gtest failure + empty case) when a
// file is missing or malformed.
GoldenCase LoadGoldenCase(const std::string& name);

// Path of the artifact compiled at build time from `model` ("tiny-a-f32", "tiny-a-bf16") with
// `mode` "opt" (default pipeline) or "no-opt".
std::string ArtifactPath(const std::string& model, const std::string& mode);

// The golden case names.
std::vector<std::string> GoldenCaseNames();

}  // namespace cortiq

#endif  // CORTIQ_TESTS_E2E_GOLDEN_DATA_H_
