// cortiq-bench's last-level cache size (tools/cortiq-bench/cache_size.h): the /sys size syntax.
#include "tools/cortiq-bench/cache_size.h"

#include "gtest/gtest.h"

namespace cortiq {
namespace {

TEST(CacheSizeTest, ParsesTheSysSizes) {
  EXPECT_EQ(ParseCacheSize("48K"), uint64_t{49152});
  EXPECT_EQ(ParseCacheSize("307200K\n"), uint64_t{307200} << 10);
  EXPECT_EQ(ParseCacheSize("32M"), uint64_t{32} << 20);
  EXPECT_EQ(ParseCacheSize("1G"), uint64_t{1} << 30);
  EXPECT_EQ(ParseCacheSize("512"), uint64_t{512});
}

TEST(CacheSizeTest, RefusesWhatIsNotASize) {
  EXPECT_EQ(ParseCacheSize(""), std::nullopt);
  EXPECT_EQ(ParseCacheSize("K"), std::nullopt);
  EXPECT_EQ(ParseCacheSize("-1K"), std::nullopt);
  EXPECT_EQ(ParseCacheSize("12T"), std::nullopt);
  EXPECT_EQ(ParseCacheSize("4 K"), std::nullopt);
  EXPECT_EQ(ParseCacheSize("99999999999999999999K"), std::nullopt);
  EXPECT_EQ(ParseCacheSize("17179869184G"), std::nullopt);  // 2^34 GiB overflows 64 bits
}

}  // namespace
}  // namespace cortiq
