// cortiq-dump: inspects a compiled MODEL.cortiq artifact without running it: header, plan steps
// with their cost, buffer plan and liveness, weights, KV caches and KV sharing, per-token totals.
// Runtime only (no MLIR/LLVM).
//
//   cortiq-dump MODEL.cortiq [--json] [--dot FILE] [--ctx-size N] [--verify [--threads N]]
//
// Output (stdout): text tables, or with --json one JSON object; --dot also writes a Graphviz
// digraph of the step graph to FILE (`--dot -`: to stdout, instead of the tables; refused if FILE
// is the model or not a regular file; written to a fresh temporary and renamed into place,
// base/atomic_file.h, so a failed write leaves no partial file and an existing FILE keeps its
// content); --verify first checks every weight against its hashes (Artifact::VerifyWeights; a
// damaged weight is an error naming it). Errors: "cortiq-dump: <message>" on stderr, exit status 1.
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/artifact.h"
#include "base/atomic_file.h"
#include "runtime/generation/model_text.h"
#include "base/file_checks.h"
#include "base/status_macros.h"
#include "tools/common/flags.h"
#include "tools/cortiq-dump/dump_output.h"
#include "tools/cortiq-dump/plan_analysis.h"

namespace cortiq {
namespace {

struct DumpFlags {
  bool json = false;
  std::string dot;
  bool verify = false;
  int64_t threads = 1;
  int64_t ctx_size = 4096;
};

absl::Status Run(const DumpFlags& f, const std::string& model_path) {
  // Checked here rather than by the parser, for these messages.
  int64_t ctx_size = f.ctx_size;
  if (ctx_size < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ctx-size: '", ctx_size, "' is not a size (0 = the model's maximum)"));
  }
  const int64_t threads = f.threads;
  if (threads < 1 || threads > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("--threads: '", threads, "' is not an integer in [1, 256]"));
  }
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Artifact> artifact, Artifact::Open(model_path));
  const Plan& plan = artifact->plan();
  double verify_seconds = -1;
  if (f.verify) {
    const auto begin = std::chrono::steady_clock::now();
    CORTIQ_RETURN_IF_ERROR(artifact->VerifyWeights(static_cast<int>(threads)));
    verify_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }
  // 0: the model's maximum, as the other tools' -c 0.
  if (plan.model.max_position_embeddings > 0 &&
      (ctx_size == 0 || ctx_size > plan.model.max_position_embeddings)) {
    ctx_size = plan.model.max_position_embeddings;
  }
  if (ctx_size == 0) ctx_size = 4096;  // a plan without a maximum
  const dump::Analysis analysis = dump::Analyze(plan, ctx_size);
  dump::DumpInput input;
  input.path = model_path;
  input.header = artifact->header();
  input.file_size = artifact->file_size();
  input.plan = &plan;
  input.analysis = &analysis;
  input.verify_seconds = verify_seconds;
  input.sections = artifact->sections();
  std::optional<text::Tokenizer> tokenizer;
  if (!artifact->tokenizer_section().empty()) {
    absl::StatusOr<text::Tokenizer> loaded = LoadArtifactTokenizer(*artifact);
    if (loaded.ok()) {
      tokenizer.emplace(*std::move(loaded));
      input.tokenizer = &*tokenizer;
    } else {
      input.tokenizer_error = std::string(loaded.status().message());
    }
  }

  const std::string& dot_path = f.dot;
  if (dot_path == "-") {
    const std::string text = dump::RenderDot(input);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
        std::fflush(stdout) != 0) {
      return absl::InternalError(absl::StrCat("stdout: write failed: ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  if (!dot_path.empty()) {
    // The model is mapped: overwriting it would destroy it (and could crash this run); AtomicFile
    // refuses it (CheckOutputPath) and special files; another model named by mistake is refused
    // too.
    CORTIQ_RETURN_IF_ERROR(CheckOutputPath(dot_path, {model_path}));
    CORTIQ_RETURN_IF_ERROR(CheckNotAModel(dot_path, "the plan's graph (--dot)"));
    CORTIQ_ASSIGN_OR_RETURN(AtomicFile dot, AtomicFile::Create(dot_path, {model_path}));
    const std::string text = dump::RenderDot(input);
    CORTIQ_RETURN_IF_ERROR(dot.Write(text.data(), text.size()));
    CORTIQ_RETURN_IF_ERROR(dot.Commit());
  }
  const std::string text =
      f.json ? dump::RenderJson(input) : dump::RenderText(input);
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    return absl::InternalError(absl::StrCat("stdout: write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  DumpFlags f;
  Flags flags("cortiq-dump", "MODEL.cortiq [--json] [--dot FILE] [--ctx-size N] [--verify]",
              "Prints a compiled artifact's header, plan steps with their cost, buffer plan and "
              "liveness, weights, KV caches and per-token totals, without running it.");
  flags.AddBool("--json", &f.json, "print one JSON object instead of text tables");
  flags.AddString("--dot", "FILE", &f.dot,
                  "also write a Graphviz digraph of the step graph to FILE ('-' = stdout, "
                  "instead of the tables)");
  flags.AddInt("-c, --ctx-size", "N", &f.ctx_size, INT64_MIN, INT64_MAX,
               "context size: rows of the full KV caches; attention costs are those of "
               "position N - 1 (clamped to the model's max_position_embeddings, like cortiq-run; "
               "0 = that maximum) (default: 4096)");
  flags.AddBool("--verify", &f.verify,
                "check every weight against the XXH3-64 hashes written with it (artifact format "
                "3.1) before dumping; a mismatch is an error naming the weight");
  flags.AddInt("-t, --threads", "N", &f.threads, INT64_MIN, INT64_MAX,
               "threads for --verify (default: 1)");
  const std::vector<std::string> positional = flags.ParseOrExit(argc, argv);
  if (positional.size() != 1) {
    std::fprintf(stderr, "cortiq-dump: expected exactly one MODEL.cortiq argument, got %zu\n",
                 positional.size());
    return 1;
  }
  if (absl::Status s = Run(f, positional[0]); !s.ok()) {
    std::fprintf(stderr, "cortiq-dump: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) { return cortiq::Main(argc, argv); }
