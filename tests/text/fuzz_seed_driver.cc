// Runs a libFuzzer entry point (tests/fuzz/*_fuzzer.cc) once over each file of the directories
// or files given: the seed corpora stay accepted by the targets without a fuzzing build.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void RunFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  std::printf("ran %s (%zu bytes)\n", path.c_str(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) return 1;
    if (!S_ISDIR(st.st_mode)) {
      RunFile(argv[i]);
      continue;
    }
    DIR* dir = opendir(argv[i]);
    if (dir == nullptr) return 1;
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') RunFile(std::string(argv[i]) + "/" + e->d_name);
    }
    closedir(dir);
  }
  return 0;
}
