// The model and session flags (see session_flags.h).
#include "tools/common/session_flags.h"

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/cpu_info.h"
#include "base/status_macros.h"
#include "ops/matmul_bf16_activations.h"
#include "ops/matmul_q8_activations.h"
#include "runtime/kv_cache.h"
#include "runtime/plan.h"

namespace cortiq {

void AddSessionFlags(Flags& flags, SessionFlags* values) {
  values->threads = PhysicalCoreCount();
  flags.AddString("-m, --model", "FILE",
                  &values->model, "the compiled model (MODEL.cortiq); or give it as the first argument");
  flags.AddInt("-c, --ctx-size", "N", &values->ctx_size, 0, INT64_MAX,
               "context size in positions, clamped to the model's max_position_embeddings; 0 = "
               "that maximum, as llama.cpp's -c 0 (default: 4096)");
  flags.AddInt("-t, --threads", "N", &values->threads, 1, 256,
               absl::StrCat("threads for the matrix products and attention (default: the ",
                            values->threads, " physical cores)"));
  flags.AddInt("-b, --batch-size", "N", &values->batch_size, 0, kMaxBatch,
               "prompt tokens per batched evaluation; 0 = the compiled maximum "
               "(cortiq-compile --max-batch), 1 = token by token (default: 0). Batches of 3 or "
               "more give the same logits whatever the size; 1, and 2 for a prompt of an odd "
               "length, evaluate tokens alone, whose last bits differ");
  flags.AddString("--kv-type", "f32|f16", &values->kv_type,
                  "element type of the KV caches: f32 (exact) or f16 (half the bytes; each cached "
                  "key and value rounded to binary16) (default: f32)");
  flags.AddString("--prefill-activations", "f32|q8_0|bf16", &values->prefill_activations,
                  "activations of the prompt's matrix products: f32 (exact) or, opt-in, lower "
                  "precision, q8_0 (quantized to Q8_0 blocks for Q8_0 and Q4_0 weights in either "
                  "layout, as llama.cpp does) or bf16 (rounded to bf16 for BF16 "
                  "weights); faster only on CPUs with AMX or AVX-512 VNNI (q8_0) / AVX-512 BF16 "
                  "(bf16), slower than f32 elsewhere (said on stderr); see bench/README.md "
                  "(default: f32)");
  flags.AddBool("--no-mmap", &values->no_mmap,
                "read the whole model into memory instead of mapping it (as llama.cpp's "
                "--no-mmap); by default the file is mapped and only the matrices multiplied "
                "every token are read into memory (the lookup tables stay mapped), since "
                "decoding streams private memory faster than page-cache pages (see "
                "bench/README.md)");
  flags.AddBool("--mmap-only", &values->mmap_only,
                "map the model and read nothing at open: the least memory and the fastest "
                "open, but decoding streams page-cache pages (slower on the hosts measured)");
  flags.AddGroup("llama.cpp's flags, accepted without effect (said on stderr)");
  flags.AddInt("-ngl, --n-gpu-layers, --gpu-layers", "N", &values->n_gpu_layers, -1, INT32_MAX,
               "layers on the GPU: cortiq runs on the CPU");
  flags.AddString("-fa, --flash-attn", "on|off|auto", &values->flash_attn,
                  "attention is always computed in blocks with an online softmax");
  flags.AddBool("--jinja", &values->jinja,
                "the model's chat format (Gemma 4's, built in) is always used");
}

void NoteIgnoredFlags(absl::string_view tool, const Flags& flags) {
  const std::pair<const char*, const char*> ignored[] = {
      {"--n-gpu-layers", "-ngl has no effect: cortiq runs on the CPU"},
      {"--flash-attn", "-fa has no effect: attention is always computed in blocks with an "
                       "online softmax"},
      {"--jinja", "--jinja has no effect: the model's chat format is always used"}};
  for (const auto& [name, note] : ignored) {
    if (flags.IsSet(name)) std::fprintf(stderr, "%s: %s\n", std::string(tool).c_str(), note);
  }
}

void NoteSlowPrefillActivations(absl::string_view tool, const SessionOptions& options) {
  const char* needs = nullptr;
  if (options.prefill_activations == PrefillActivations::kQ8_0 &&
      ops::DispatchedQ8ActivationsPath() == ops::Q8ActivationsPath::kPortable) {
    needs = "AMX-INT8 or AVX-512 VNNI";
  } else if (options.prefill_activations == PrefillActivations::kBF16 &&
             ops::DispatchedBF16ActivationsPath() == ops::BF16ActivationsPath::kPortable) {
    needs = "AMX-BF16 or AVX-512 BF16";
  }
  if (needs == nullptr) return;
  std::fprintf(stderr,
               "%s: --prefill-activations %s has no fast kernel on this CPU (it needs %s): the "
               "prompt runs on the portable kernel, slower than the exact f32 default\n",
               std::string(tool).c_str(), PrefillActivationsName(options.prefill_activations),
               needs);
}

void NotePrefillActivationsWithoutEffect(absl::string_view tool, const SessionOptions& options,
                                         const Plan& plan) {
  if (options.prefill_activations == PrefillActivations::kF32) return;
  const bool q8 = options.prefill_activations == PrefillActivations::kQ8_0;
  for (const Step& step : plan.steps) {
    if ((step.kind != StepKind::kLinear && step.kind != StepKind::kLmHead) || step.weight < 0 ||
        static_cast<size_t>(step.weight) >= plan.weights.size()) {
      continue;
    }
    if (PrefillActivationsApply(options.prefill_activations,
                                plan.weights[static_cast<size_t>(step.weight)].format)) {
      return;
    }
  }
  std::fprintf(stderr,
               "%s: --prefill-activations %s has no effect: this model has no %s matrix (the "
               "prompt's products stay exact)\n",
               std::string(tool).c_str(), PrefillActivationsName(options.prefill_activations),
               q8 ? "Q8_0 or Q4_0" : "BF16");
}

absl::StatusOr<ArtifactLoad> ArtifactLoadOf(const SessionFlags& values) {
  if (values.no_mmap && values.mmap_only) {
    return absl::InvalidArgumentError("--no-mmap and --mmap-only: give one of them");
  }
  return values.no_mmap     ? ArtifactLoad::kRead
         : values.mmap_only ? ArtifactLoad::kMap
                            : ArtifactLoad::kReadMatrices;
}

absl::StatusOr<std::string> TakeModelPath(const SessionFlags& values,
                                          std::vector<std::string>* positional) {
  if (!values.model.empty()) {
    if (!positional->empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the model is given by -m/--model; unexpected argument ", positional->front()));
    }
    return values.model;
  }
  if (positional->empty()) {
    return absl::InvalidArgumentError("no model: give MODEL.cortiq (or -m MODEL.cortiq)");
  }
  if (positional->size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("expected one MODEL.cortiq argument, got ",
                                                   positional->size(), ": ",
                                                   absl::StrJoin(*positional, " ")));
  }
  std::string model = positional->front();
  positional->clear();
  return model;
}

void NoteContextClamp(absl::string_view tool, const SessionFlags& values, const Plan& plan) {
  const int64_t max = plan.model.max_position_embeddings;
  if (max > 0 && values.ctx_size > max) {
    // Worded for a -c left at its default as well as one given.
    std::fprintf(stderr,
                 "%s: a context of %lld positions (-c, default %lld) is more than the model's "
                 "max_position_embeddings (%lld): the context is clamped to %lld positions\n",
                 std::string(tool).c_str(), static_cast<long long>(values.ctx_size),
                 static_cast<long long>(SessionFlags().ctx_size), static_cast<long long>(max),
                 static_cast<long long>(max));
  }
  if (values.batch_size > plan.max_batch) {
    std::fprintf(stderr,
                 "%s: -b %lld is more than the artifact's compiled maximum batch (%lld, "
                 "cortiq-compile --max-batch): prompt batches of %lld tokens\n",
                 std::string(tool).c_str(), static_cast<long long>(values.batch_size),
                 static_cast<long long>(plan.max_batch), static_cast<long long>(plan.max_batch));
  }
}

absl::StatusOr<SessionOptions> ToSessionOptions(const SessionFlags& values) {
  SessionOptions options;
  const std::optional<KvType> kv_type = KvTypeFromName(values.kv_type);
  if (!kv_type) {
    return absl::InvalidArgumentError(
        absl::StrCat("--kv-type: '", values.kv_type, "' is not f32 or f16"));
  }
  options.kv_type = *kv_type;
  const std::optional<PrefillActivations> activations =
      PrefillActivationsFromName(values.prefill_activations);
  if (!activations) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--prefill-activations: '", values.prefill_activations, "' is not f32, q8_0 or bf16"));
  }
  options.prefill_activations = *activations;
  // 0: the model's maximum (the session clamps to max_position_embeddings).
  options.ctx_size = values.ctx_size == 0 ? INT64_MAX : values.ctx_size;
  options.threads = static_cast<int>(values.threads);
  options.batch_size = values.batch_size;
  return options;
}

}  // namespace cortiq
