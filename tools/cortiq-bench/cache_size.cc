// The last-level cache size (see cache_size.h).
#include "tools/cortiq-bench/cache_size.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"

namespace cortiq {
namespace {

// The first line of a small /sys file, or "" if it cannot be read.
std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

}  // namespace

std::optional<uint64_t> ParseCacheSize(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  uint64_t multiplier = 1;
  if (!s.empty()) {
    switch (s.back()) {
      case 'K': multiplier = uint64_t{1} << 10; break;
      case 'M': multiplier = uint64_t{1} << 20; break;
      case 'G': multiplier = uint64_t{1} << 30; break;
      default: break;
    }
    if (multiplier != 1) s.remove_suffix(1);
  }
  if (s.empty()) return std::nullopt;
  for (const char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  uint64_t value = 0;
  if (!absl::SimpleAtoi(s, &value) || value > UINT64_MAX / multiplier) return std::nullopt;
  return value * multiplier;
}

uint64_t LastLevelCacheBytes() {
  int best_level = 0;
  uint64_t best_bytes = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level_text = ReadLine(dir + "level");
    if (level_text.empty()) break;
    if (absl::StripAsciiWhitespace(ReadLine(dir + "type")) == "Instruction") continue;
    int level = 0;
    const std::optional<uint64_t> bytes = ParseCacheSize(ReadLine(dir + "size"));
    if (!absl::SimpleAtoi(level_text, &level) || !bytes) continue;
    if (level > best_level || (level == best_level && *bytes > best_bytes)) {
      best_level = level;
      best_bytes = *bytes;
    }
  }
  if (best_bytes > 0) return best_bytes;
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long bytes = sysconf(name);
    if (bytes > 0) return static_cast<uint64_t>(bytes);
  }
  return 0;
}

}  // namespace cortiq
