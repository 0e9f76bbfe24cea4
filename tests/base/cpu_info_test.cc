// PhysicalCoreCount (base/cpu_info.h) against this machine's topology, read independently: the
// distinct "physical id"/"core id" pairs of /proc/cpuinfo, when it lists them and the process may
// use every CPU.
#include "base/cpu_info.h"

#include <sched.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "gtest/gtest.h"

namespace cortiq {
namespace {

TEST(CpuInfoTest, PhysicalCoresMatchProcCpuinfo) {
  const int cores = PhysicalCoreCount();
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, static_cast<int>(std::thread::hardware_concurrency()));
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  if (CPU_COUNT(&set) != static_cast<int>(std::thread::hardware_concurrency())) {
    GTEST_SKIP() << "the process may not use every CPU; /proc/cpuinfo lists them all";
  }
  std::ifstream in("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> pairs;
  std::string line, physical;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "physical id") physical = value;
    if (key == "core id") pairs.emplace(physical, value);
  }
  if (pairs.empty()) GTEST_SKIP() << "/proc/cpuinfo has no core ids";
  EXPECT_EQ(cores, static_cast<int>(pairs.size()));
}

}  // namespace
}  // namespace cortiq
