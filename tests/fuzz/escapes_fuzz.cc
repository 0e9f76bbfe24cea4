// libFuzzer entry point for the escape sequences of the tools' text flags
// (tools/common/escapes.h ProcessEscapes: -p, --system, --stop). Any bytes: the result is
// never longer than the input, text without a backslash comes back unchanged, and the result
// equals a plain re-reading of llama.cpp's rules below (an independent loop, not the code under
// test). Seeds: corpus/escapes_fuzz/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tools/common/escapes.h"

namespace {

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// llama.cpp's string_process_escapes, with \x taking exactly two hex digits.
std::string Expected(const std::string& in) {
  std::string out;
  size_t i = 0;
  while (i < in.size()) {
    if (in[i] == '\\' && i + 1 < in.size()) {
      const char c = in[i + 1];
      const char* from = "nrt'\"\\";
      const char* to = "\n\r\t'\"\\";
      bool done = false;
      for (int k = 0; from[k] != 0; ++k) {
        if (c == from[k]) {
          out += to[k];
          i += 2;
          done = true;
          break;
        }
      }
      if (done) continue;
      if (c == 'x' && i + 3 < in.size() && Hex(in[i + 2]) >= 0 && Hex(in[i + 3]) >= 0) {
        out += static_cast<char>(Hex(in[i + 2]) * 16 + Hex(in[i + 3]));
        i += 4;
        continue;
      }
    }
    out += in[i];
    ++i;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  const std::string out = cortiq::ProcessEscapes(in);
  if (out.size() > in.size()) std::abort();
  if (in.find('\\') == std::string::npos && out != in) std::abort();
  if (out != Expected(in)) std::abort();
  return 0;
}
