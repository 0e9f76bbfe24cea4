// PhysicalCoreCount (see cpu_info.h).
#include "base/cpu_info.h"

#include <sched.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace cortiq {
namespace {

// The integer in `path`, or -1.
long ReadNumber(const std::string& path) {
  std::ifstream in(path);
  long value = -1;
  if (!(in >> value)) return -1;
  return value;
}

}  // namespace

int PhysicalCoreCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int usable = 0;
  const bool have_mask = sched_getaffinity(0, sizeof(set), &set) == 0;
  std::set<std::pair<long, long>> cores;
  bool topology = true;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (have_mask ? !CPU_ISSET(cpu, &set) : cpu >= static_cast<int>(std::thread::hardware_concurrency())) {
      continue;
    }
    ++usable;
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    const long package = ReadNumber(dir + "physical_package_id");
    const long core = ReadNumber(dir + "core_id");
    if (package < 0 || core < 0) {
      topology = false;
      continue;
    }
    cores.emplace(package, core);
  }
  const int count = topology && !cores.empty() ? static_cast<int>(cores.size()) : usable;
  return count > 0 ? count : 1;
}

}  // namespace cortiq
