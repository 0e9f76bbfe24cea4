// XorWords and XorWordsIntoL2 (tools/cortiq-bench/read_stream.h), the bandwidth probe's read
// loops, against the one-word-at-a-time reference: every length around the vector and unroll
// boundaries, and every misalignment, so the probe really reads every word it is timed for.
#include "tools/cortiq-bench/read_stream.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cortiq {
namespace {

TEST(ReadStreamTest, EqualsReferenceForEveryLengthAndOffset) {
  std::vector<uint64_t> data(4096 + 16);
  uint64_t state = 0x243F6A8885A308D3ull;
  for (uint64_t& w : data) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    w = state;
  }
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t words = 0; words <= 300; ++words) {
      ASSERT_EQ(XorWords(data.data() + offset, words),
                XorWordsReference(data.data() + offset, words))
          << "offset " << offset << " words " << words;
      ASSERT_EQ(XorWordsIntoL2(data.data() + offset, words),
                XorWordsReference(data.data() + offset, words))
          << "offset " << offset << " words " << words;
    }
    ASSERT_EQ(XorWords(data.data() + offset, 4096), XorWordsReference(data.data() + offset, 4096));
  }
}

TEST(ReadStreamTest, ChangingAnyWordChangesTheResult) {
  // A loop that skipped words would miss the flipped bit in one of them.
  std::vector<uint64_t> data(1000, 0);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = 1;
    EXPECT_EQ(XorWords(data.data(), data.size()), 1u) << "word " << i;
    EXPECT_EQ(XorWordsIntoL2(data.data(), data.size()), 1u) << "word " << i;
    data[i] = 0;
  }
}

TEST(ReadStreamTest, NamesATarget) { EXPECT_FALSE(std::string(XorWordsTarget()).empty()); }

}  // namespace
}  // namespace cortiq
