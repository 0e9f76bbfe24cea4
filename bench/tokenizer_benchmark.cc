// cortiq-tokenizer-benchmark: the tokenizer on the real 262,144-token Gemma 3 vocabulary (the
// Gemma 4 BPE family; tests/data/tokenizer/gemma3, decompressed by the build): encoding English
// text on one core (MB/s of UTF-8 input), decoding, and loading the tokenizer from its section
// bytes (what opening an artifact costs: validation, checksum, regex compilation).
//
//   build/bin/cortiq-tokenizer-benchmark [--text FILE]   (default: the repository's *.md prose)
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/file_util.h"
#include "benchmark/benchmark.h"
#include "formats/tokenizer_files.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/tokenizer_section.h"

namespace cortiq {
namespace {

std::string g_text_file;

const std::vector<uint8_t>& SectionBytes() {
  static const std::vector<uint8_t>* bytes = [] {
    absl::StatusOr<text::TokenizerSpec> spec = ReadCheckpointTokenizer(CORTIQ_GEMMA3_TOKENIZER_DIR);
    if (!spec.ok()) {
      fprintf(stderr, "%s\n", std::string(spec.status().message()).c_str());
      std::exit(1);
    }
    auto* b = new std::vector<uint8_t>(*text::SerializeTokenizerSection(*spec));
    return b;
  }();
  return *bytes;
}

const text::Tokenizer& Gemma3() {
  static const text::Tokenizer* t = new text::Tokenizer(*text::Tokenizer::FromSection(SectionBytes()));
  return *t;
}

// English prose: the repository's documentation (~40 KB), or --text FILE.
const std::string& EnglishText() {
  static const std::string* text = [] {
    auto* s = new std::string;
    if (!g_text_file.empty()) {
      *s = *ReadFileToString(g_text_file, 1 << 30);
      return s;
    }
    for (const char* name : {"README.md", "ARCHITECTURE.md", "bench/README.md", "tests/data/README.md"}) {
      absl::StatusOr<std::string> part =
          ReadFileToString(std::string(CORTIQ_SOURCE_DIR) + "/" + name, 1 << 24);
      if (part.ok()) *s += *part + "\n";
    }
    return s;
  }();
  return *text;
}

void BM_SectionLoad(benchmark::State& state) {
  const std::vector<uint8_t>& bytes = SectionBytes();
  for (auto _ : state) {
    absl::StatusOr<text::Tokenizer> t = text::Tokenizer::FromSection(bytes);
    benchmark::DoNotOptimize(t);
    if (!t.ok()) state.SkipWithError("load failed");
  }
  state.counters["section_MB"] = bytes.size() / 1e6;
}
BENCHMARK(BM_SectionLoad)->Unit(benchmark::kMillisecond);

void BM_EncodeEnglish(benchmark::State& state) {
  const text::Tokenizer& t = Gemma3();
  const std::string& text = EnglishText();
  size_t tokens = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<text::TokenId>> ids = t.Encode(text);
    tokens = ids->size();
    benchmark::DoNotOptimize(ids);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["input_KB"] = text.size() / 1e3;
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_EncodeEnglish)->Unit(benchmark::kMillisecond);

// As BM_EncodeEnglish with the encoder's per-thread caches empty (runtime/text/bpe.cc keeps the
// pieces of recently seen chunks and merges per thread): each call runs on a new thread, so every
// word is merged from scratch, as text never seen before is. The thread's start and join
// (~0.05 ms) are inside the timed region, so this slightly understates the rate.
void BM_EncodeEnglishColdCache(benchmark::State& state) {
  const text::Tokenizer& t = Gemma3();
  const std::string& text = EnglishText();
  for (auto _ : state) {
    std::thread thread([&] { benchmark::DoNotOptimize(t.Encode(text)); });
    thread.join();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_EncodeEnglishColdCache)->Unit(benchmark::kMillisecond)->UseRealTime();

// One paragraph at a time, as a server sees prompts.
void BM_EncodeEnglishParagraphs(benchmark::State& state) {
  const text::Tokenizer& t = Gemma3();
  const std::string& text = EnglishText();
  std::vector<std::string> paragraphs;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find("\n\n", start);
    if (end == std::string::npos) end = text.size();
    paragraphs.push_back(text.substr(start, end + 2 - start));
    start = end + 2;
  }
  for (auto _ : state) {
    for (const std::string& p : paragraphs) benchmark::DoNotOptimize(t.Encode(p));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["paragraphs"] = static_cast<double>(paragraphs.size());
}
BENCHMARK(BM_EncodeEnglishParagraphs)->Unit(benchmark::kMillisecond);

void BM_DecodeEnglish(benchmark::State& state) {
  const text::Tokenizer& t = Gemma3();
  const std::vector<text::TokenId> ids = *t.Encode(EnglishText());
  for (auto _ : state) benchmark::DoNotOptimize(t.Decode(ids));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * EnglishText().size()));
}
BENCHMARK(BM_DecodeEnglish)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--text") == 0 && i + 1 < argc) {
      cortiq::g_text_file = argv[++i];
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
