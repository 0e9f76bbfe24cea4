// Tests of formats/tensor_spec: byte sizes of specs.
#include "formats/tensor_spec.h"

#include "gtest/gtest.h"

namespace cortiq {
namespace {

TEST(TensorSpecTest, NumBytes) {
  EXPECT_EQ(TensorSpecNumBytes({"w", DType::kBF16, {262144, 1536}}), 262144u * 1536u * 2u);
  EXPECT_EQ(TensorSpecNumBytes({"s", DType::kF32, {}}), 4u);  // scalar
  EXPECT_EQ(TensorSpecNumBytes({"e", DType::kF16, {0, 7}}), 0u);
  EXPECT_EQ(TensorSpecNumBytes({"u", DType::kUnsupported, {3}}), 0u);
  const TensorSpec spec;
  EXPECT_EQ(spec.dtype, DType::kF32);
}

}  // namespace
}  // namespace cortiq
