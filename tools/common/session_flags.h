// The flags of every tool that runs a model, spelled as llama.cpp does: -m/--model (or the first
// positional argument), -c/--ctx-size, -t/--threads (default: the physical cores), -b/--batch-size.
#ifndef CORTIQ_TOOLS_COMMON_SESSION_FLAGS_H_
#define CORTIQ_TOOLS_COMMON_SESSION_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/artifact.h"
#include "runtime/plan.h"
#include "runtime/session.h"
#include "tools/common/flags.h"

namespace cortiq {

struct SessionFlags {
  std::string model;
  int64_t ctx_size = 4096;
  int64_t threads = 1;  // AddSessionFlags sets PhysicalCoreCount()
  int64_t batch_size = 0;
  std::string kv_type = "f32";  // KvTypeName: f32 | f16
  // f32 | q8_0 | bf16 (SessionOptions::prefill_activations)
  std::string prefill_activations = "f32";
  bool no_mmap = false;          // --no-mmap: ArtifactLoad::kRead
  bool mmap_only = false;        // --mmap-only: ArtifactLoad::kMap
  // llama.cpp flags accepted so that its command lines run, without effect (NoteIgnoredFlags).
  int64_t n_gpu_layers = 0;  // -ngl
  std::string flash_attn;    // -fa on|off|auto
  bool jinja = false;        // --jinja
};

// Declares -m/--model, -c/--ctx-size, -t/--threads, -b/--batch-size, --kv-type, --no-mmap and
// --mmap-only on `flags`.
void AddSessionFlags(Flags& flags, SessionFlags* values);

// Says on stderr which of llama.cpp's flags that cortiq accepts without effect were given
// ("TOOL: -ngl has no effect: cortiq runs on the CPU"): -ngl/--n-gpu-layers, -fa/--flash-attn
// (attention is always computed in softmax blocks), --jinja (the model's chat format is always
// used).
void NoteIgnoredFlags(absl::string_view tool, const Flags& flags);

// The model path: -m/--model, else the only positional argument (which `positional` loses).
// Errors (InvalidArgument): none given, or both / several given.
absl::StatusOr<std::string> TakeModelPath(const SessionFlags& values,
                                          std::vector<std::string>* positional);

// Says on stderr ("TOOL: a context of N positions (-c, default 4096) is more than the model's
// max_position_embeddings (M): the context is clamped to M positions") when -c/--ctx-size
// exceeds what `plan`'s model supports, and likewise when -b/--batch-size exceeds the
// artifact's compiled maximum batch; the session clamps both (Session::Create).
void NoteContextClamp(absl::string_view tool, const SessionFlags& values, const Plan& plan);

// Says on stderr ("TOOL: --prefill-activations q8_0 has no fast kernel on this CPU ...") when the
// opt-in prefill activations of `options` would run on the portable kernel (no AMX / AVX-512
// VNNI for q8_0, no AMX / AVX-512 BF16 for bf16), which is slower than the exact default.
void NoteSlowPrefillActivations(absl::string_view tool, const SessionOptions& options);

// Says on stderr ("TOOL: --prefill-activations q8_0 has no effect: this model has no Q8_0 or
// Q4_0 matrix ...") when the opt-in prompt activations of `options` apply to none of `plan`'s
// multiplied matrices (q8_0: Q8_0 / Q4_0 in either layout; bf16: BF16).
void NotePrefillActivationsWithoutEffect(absl::string_view tool, const SessionOptions& options,
                                         const Plan& plan);

// How to open the model: ArtifactLoad::kRead with --no-mmap, kMap with --mmap-only, else
// kReadMatrices. Errors (InvalidArgument): both flags given.
absl::StatusOr<ArtifactLoad> ArtifactLoadOf(const SessionFlags& values);

// The session options of the flags. Errors (InvalidArgument, naming the flag): a --kv-type other
// than f32/f16, a --prefill-activations other than f32/q8_0/bf16.
absl::StatusOr<SessionOptions> ToSessionOptions(const SessionFlags& values);

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_COMMON_SESSION_FLAGS_H_
