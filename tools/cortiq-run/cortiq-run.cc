// cortiq-run: evaluates a prompt of token ids with a compiled MODEL.cortiq
// artifact and greedily decodes more tokens; can dump per-position logits and
// per-layer hidden states. Runtime only (no MLIR/LLVM).
//
//   cortiq-run MODEL.cortiq --tokens 2,17,300 [--n-predict N]
//              [--dump-logits FILE] [--dump-layers DIR] [--ctx-size N]
//              [--threads N] [--batch-size N] [--verify]
//
// Output (stdout): the generated ids on one line (comma-separated; empty for
// N = 0), then one line of timings. --verify checks every weight against the
// hashes written with it before anything runs (Artifact::VerifyWeights, on
// --threads threads): a damaged weight is an error naming it. Errors: "cortiq-run: <message>" on stderr,
// exit status 1; among them non-finite (NaN/Inf) logits at any position whose
// logits are computed, and dump paths that are not regular files, are the
// model itself or are one another (base/file_checks.h). Dumps are written to
// fresh temporaries and renamed into place only when the run succeeds
// (base/atomic_file.h): a failed run leaves no partial dump.
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/atomic_file.h"
#include "base/file_checks.h"
#include "runtime/artifact.h"
#include "runtime/sequence.h"
#include "runtime/session.h"
#include "base/status_macros.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error \
    "cortiq-run writes raw little-endian float32 dumps as host floats; port the dump code"
#endif

// Integer flags are read as strings so that bad values get this tool's error
// format.
ABSL_FLAG(std::string, tokens, "",
          "comma-separated prompt token ids, e.g. 2,17,300");
ABSL_FLAG(std::string, n_predict, "0",
          "number of tokens to generate greedily (--n-predict)");
ABSL_FLAG(std::string, dump_logits, "",
          "write the logits of every prompt position to this file: raw "
          "little-endian float32 "
          "[T, vocab], row t = logits after tokens 0..t (--dump-logits)");
ABSL_FLAG(
    std::string, dump_layers, "",
    "write DIR/<tap>.f32 for every tap of the plan (e.g. layer.3 = hidden "
    "state after "
    "layer 3): raw float32 [positions, hidden], one row per evaluated position "
    "(the "
    "prompt and every generated token but the last, which is never evaluated) "
    "(--dump-layers)");
ABSL_FLAG(std::string, ctx_size, "4096",
          "context size (clamped to the model's max_position_embeddings) "
          "(--ctx-size)");
ABSL_FLAG(std::string, threads, "1", "threads for the matrix products and attention");
ABSL_FLAG(bool, verify, false,
          "before running, check every weight against the XXH3-64 hashes written with it "
          "(artifact format 3.1); a mismatch is an error naming the weight");
ABSL_FLAG(std::string, batch_size, "0",
          "prompt tokens per batched evaluation (prefill); 0 = the artifact's compiled "
          "maximum (cortiq-compile --max-batch; larger values are clamped to it), 1 = token by "
          "token (--batch-size)");
ABSL_FLAG(std::string, kv_type, "f32",
          "element type of the KV caches: f32 (exact) or f16 (half the bytes; each cached key "
          "and value rounded to binary16)");

namespace cortiq {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point begin, Clock::time_point end) {
  return std::chrono::duration<double>(end - begin).count();
}

// Rewrites "--n-predict=3" to "--n_predict=3" (Abseil flag names cannot hold
// '-'), and checks that every flag is known and that value flags given as
// "--flag value" have a value.
absl::Status NormalizeArgs(std::vector<std::string>* args) {
  static const char* const kValueFlags[] = {"tokens",      "n_predict",
                                            "dump_logits", "dump_layers",
                                            "ctx_size",    "threads",
                                            "batch_size",  "kv_type"};
  static const char* const kBoolFlags[] = {"verify"};
  // Abseil's own flags (usage, flag files), passed through unchanged.
  static const char* const kAbseilFlags[] = {
      "help",       "helpfull",        "helpshort", "helppackage",
      "version",    "only_check_args", "flagfile",  "fromenv",
      "tryfromenv", "undefok"};
  for (size_t i = 1; i < args->size(); ++i) {
    std::string& arg = (*args)[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;  // positional
    const size_t dashes = arg[1] == '-' ? 2 : 1;
    const size_t eq = arg.find('=');
    std::string name = arg.substr(
        dashes, eq == std::string::npos ? std::string::npos : eq - dashes);
    for (char& c : name) c = c == '-' ? '_' : c;
    bool value_flag = false, known = false;
    for (const char* f : kValueFlags) value_flag |= name == f;
    for (const char* f : kAbseilFlags) known |= name == f;
    for (const char* f : kBoolFlags) known |= name == f || name == absl::StrCat("no", f);
    if (!value_flag && !known) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag ", arg, " (see --help)"));
    }
    if (value_flag && eq == std::string::npos && i + 1 >= args->size()) {
      return absl::InvalidArgumentError(absl::StrCat(arg, " needs a value"));
    }
    arg =
        absl::StrCat("--", name, eq == std::string::npos ? "" : arg.substr(eq));
    if (value_flag && eq == std::string::npos)
      ++i;  // skip the value, even if it starts with '-'
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ParseInt(const char* flag, const std::string& text,
                                 int64_t min, int64_t max) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": '", text, "' is not an integer"));
  }
  if (value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, " = ", value, " must be in [", min, ", ", max, "]"));
  }
  return value;
}

absl::StatusOr<std::vector<int32_t>> ParseTokens(const std::string& text) {
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(
        "--tokens is required (comma-separated token ids)");
  }
  std::vector<int32_t> tokens;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t id = 0;
    const absl::string_view s = absl::StripAsciiWhitespace(part);
    if (!absl::SimpleAtoi(s, &id) || id < 0 || id > INT32_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--tokens: '", s, "' is not a token id (a non-negative integer)"));
    }
    tokens.push_back(static_cast<int32_t>(id));
  }
  return tokens;
}

// Index of the largest logit; the lowest index on ties; NaN never wins.
int32_t Argmax(absl::Span<const float> logits) {
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best] ||
        (logits[best] != logits[best] && logits[i] == logits[i])) {
      best = static_cast<int32_t>(i);
    }
  }
  return best;
}

// A dump written row by row into a fresh temporary (base/atomic_file.h) and renamed onto its
// path by Close: a failed run (a full disk, a bad token, a numeric error) leaves no partial
// dump, and an existing file keeps its old content.
class DumpFile {
 public:
  static absl::StatusOr<std::unique_ptr<DumpFile>> Create(
      const std::string& path, const std::vector<std::string>& inputs) {
    CORTIQ_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path, inputs));
    return std::unique_ptr<DumpFile>(new DumpFile(std::move(file)));
  }
  absl::Status Write(absl::Span<const float> row) {
    return file_.Write(row.data(), row.size() * sizeof(float));
  }
  absl::Status Close() { return file_.Commit(); }

 private:
  explicit DumpFile(AtomicFile file) : file_(std::move(file)) {}
  AtomicFile file_;
};

absl::Status Run(const std::string& model_path) {
  CORTIQ_ASSIGN_OR_RETURN(const std::vector<int32_t> tokens,
                          ParseTokens(absl::GetFlag(FLAGS_tokens)));
  CORTIQ_ASSIGN_OR_RETURN(
      const int64_t n_predict,
      ParseInt("n-predict", absl::GetFlag(FLAGS_n_predict), 0, INT32_MAX));
  CORTIQ_ASSIGN_OR_RETURN(
      const int64_t ctx_size,
      ParseInt("ctx-size", absl::GetFlag(FLAGS_ctx_size), 1, INT64_MAX));
  CORTIQ_ASSIGN_OR_RETURN(
      const int64_t threads,
      ParseInt("threads", absl::GetFlag(FLAGS_threads), 1, 256));
  CORTIQ_ASSIGN_OR_RETURN(
      const int64_t batch_size,
      ParseInt("batch-size", absl::GetFlag(FLAGS_batch_size), 0, kMaxBatch));

  const Clock::time_point load_begin = Clock::now();
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Artifact> artifact,
                          Artifact::Open(model_path));
  const bool verify = absl::GetFlag(FLAGS_verify);
  const Clock::time_point verify_begin = Clock::now();
  if (verify) CORTIQ_RETURN_IF_ERROR(artifact->VerifyWeights(static_cast<int>(threads)));
  const double verify_seconds = Seconds(verify_begin, Clock::now());
  SessionOptions options;
  options.ctx_size = ctx_size;
  options.threads = static_cast<int>(threads);
  options.batch_size = batch_size;
  const std::optional<KvType> kv_type = KvTypeFromName(absl::GetFlag(FLAGS_kv_type));
  if (!kv_type) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--kv-type: '", absl::GetFlag(FLAGS_kv_type), "' is not f32 or f16"));
  }
  options.kv_type = *kv_type;
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Sequence> sequence,
                          Sequence::Create(*artifact, options));
  const double load_seconds = Seconds(load_begin, Clock::now());
  const Plan& plan = artifact->plan();

  // Check everything that can fail before spending time on the forward or creating a file.
  // Positions evaluated: the prompt, then every generated token except the last.
  const int64_t positions =
      static_cast<int64_t>(tokens.size()) + (n_predict > 0 ? n_predict - 1 : 0);
  if (positions > sequence->ctx_size()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("context full: ctx-size ", sequence->ctx_size(), ", but ",
                     tokens.size(), " prompt tokens and ", n_predict,
                     " generated ones need ", positions, " positions"));
  }
  if (absl::Status s = sequence->CheckTokens(tokens); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("--tokens: ", s.message(), " of ", model_path));
  }
  // Every dump is checked before it is written: never the model (it is mapped; replacing it is
  // refused like any input), never a special file, and never two dumps onto one file. Dumps
  // appear only once the run has succeeded (DumpFile).
  const std::vector<std::string> inputs = {model_path};
  std::unique_ptr<DumpFile> logits_file;
  const std::string logits_path = absl::GetFlag(FLAGS_dump_logits);
  const std::string layers_dir = absl::GetFlag(FLAGS_dump_layers);
  std::vector<std::string> outputs = {logits_path};
  if (!layers_dir.empty()) {
    // Tap names are restricted by ValidatePlan to [A-Za-z0-9._-], so they stay in the dir.
    for (const Tap& tap : plan.taps) outputs.push_back(absl::StrCat(layers_dir, "/", tap.name, ".f32"));
  }
  CORTIQ_RETURN_IF_ERROR(CheckDistinctOutputs(outputs));
  if (!logits_path.empty()) {
    CORTIQ_ASSIGN_OR_RETURN(logits_file, DumpFile::Create(logits_path, inputs));
  }
  std::vector<std::unique_ptr<DumpFile>> layer_files;
  if (!layers_dir.empty()) {
    if (mkdir(layers_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InvalidArgumentError(absl::StrCat(
          layers_dir, ": cannot create directory: ", std::strerror(errno)));
    }
    struct stat dir_stat;
    if (stat(layers_dir.c_str(), &dir_stat) != 0 || !S_ISDIR(dir_stat.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrCat(layers_dir, ": exists and is not a directory (--dump-layers)"));
    }
    for (size_t i = 1; i < outputs.size(); ++i) {
      CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<DumpFile> f, DumpFile::Create(outputs[i], inputs));
      layer_files.push_back(std::move(f));
    }
  }
  // Every evaluated position's taps (each row of every layer), and the prompt's logits when they
  // are dumped.
  if (!layer_files.empty()) sequence->set_every_tap(true);
  bool prompt = true;
  const auto dump = [&](const EvaluatedToken& t) -> absl::Status {
    if (prompt && logits_file != nullptr) CORTIQ_RETURN_IF_ERROR(logits_file->Write(t.logits()));
    for (size_t i = 0; i < layer_files.size(); ++i) {
      CORTIQ_RETURN_IF_ERROR(layer_files[i]->Write(t.tap(i)));
    }
    return absl::OkStatus();
  };

  // Prompt: in chunks of batch_size() tokens (Sequence::Eval), the logits of the last token only
  // unless every position's are dumped.
  const Clock::time_point prompt_begin = Clock::now();
  CORTIQ_RETURN_IF_ERROR(sequence->Eval(
      tokens, logits_file != nullptr ? BatchLogits::kAll : BatchLogits::kLast, dump));
  const double prompt_seconds = Seconds(prompt_begin, Clock::now());
  prompt = false;

  // Greedy generation.
  const Clock::time_point gen_begin = Clock::now();
  std::vector<int32_t> generated;
  generated.reserve(static_cast<size_t>(n_predict));
  for (int64_t i = 0; i < n_predict; ++i) {
    CORTIQ_ASSIGN_OR_RETURN(const absl::Span<const float> logits, sequence->logits());
    generated.push_back(Argmax(logits));
    if (i + 1 < n_predict) {
      CORTIQ_RETURN_IF_ERROR(
          sequence->Eval(absl::MakeConstSpan(&generated.back(), 1), BatchLogits::kLast, dump));
    }
  }
  const double gen_seconds = Seconds(gen_begin, Clock::now());

  if (logits_file != nullptr) CORTIQ_RETURN_IF_ERROR(logits_file->Close());
  for (auto& f : layer_files) CORTIQ_RETURN_IF_ERROR(f->Close());

  const auto rate = [](double n, double seconds) {
    return seconds > 0 && n > 0 ? absl::StrCat(n / seconds) : std::string("-");
  };
  if (!generated.empty()) std::printf("%s\n", absl::StrJoin(generated, ",").c_str());
  // The first generated token comes from the prompt's last logits; the rate counts the
  // n_predict - 1 evaluations that produced the others.
  // The load time includes the verification; it is also shown on its own.
  std::printf(
      "prompt: %zu tokens, %s tok/s; generation: %lld tokens, %s tok/s; load: "
      "%.1f ms%s\n",
      tokens.size(),
      rate(static_cast<double>(tokens.size()), prompt_seconds).c_str(),
      static_cast<long long>(n_predict),
      rate(static_cast<double>(n_predict > 1 ? n_predict - 1 : 0), gen_seconds).c_str(),
      load_seconds * 1e3,
      verify ? absl::StrFormat(" (weights verified: %.1f ms)", verify_seconds * 1e3).c_str()
             : "");
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "cortiq-run MODEL.cortiq --tokens 2,17,300 [--n-predict N] "
      "[--dump-logits FILE] "
      "[--dump-layers DIR] [--ctx-size N] [--threads N] [--batch-size N] [--verify]");
  std::vector<std::string> args(argv, argv + argc);
  if (absl::Status s = NormalizeArgs(&args); !s.ok()) {
    std::fprintf(stderr, "cortiq-run: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  const std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(cargs.size()), cargs.data());
  if (positional.size() != 2) {
    std::fprintf(
        stderr,
        "cortiq-run: expected exactly one MODEL.cortiq argument, got %zu\n",
        positional.size() - 1);
    return 1;
  }
  if (absl::Status s = Run(positional[1]); !s.ok()) {
    std::fprintf(stderr, "cortiq-run: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) { return cortiq::Main(argc, argv); }
