// Fuzz target: config.json text → ParseGemma4TextConfig (JSON parse, both config forms, every
// field's type and range, ValidateGemma4TextConfig), then every per-layer quantity derived from
// an accepted config. Invariants: an error names the file; an accepted config validates again
// and its derived methods (which abort on broken invariants) hold for every layer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/model_config.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cortiq;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Gemma4TextConfig> config = ParseGemma4TextConfig(text, "fuzz/config.json");
  fuzz::CheckNamesFile(config.status(), "fuzz/config.json");
  if (!config.ok()) return 0;
  CORTIQ_FUZZ_CHECK(ValidateGemma4TextConfig(*config, "again").ok(), "accepted twice");
  for (int64_t layer = 0; layer < config->num_hidden_layers; ++layer) {
    const int64_t source = config->kv_source_layer(layer);
    CORTIQ_FUZZ_CHECK(source >= 0 && source <= layer, "kv source of layer ", layer);
    CORTIQ_FUZZ_CHECK(!config->is_kv_shared(source), "the kv source of ", layer, " is shared");
    CORTIQ_FUZZ_CHECK(config->layer_types[source] == config->layer_types[layer], "source type");
    const int64_t pairs = config->rotated_pairs(layer);
    CORTIQ_FUZZ_CHECK(pairs >= 1 && 2 * pairs <= config->layer_head_dim(layer),
                      "rotated pairs ", pairs, " of layer ", layer);
    CORTIQ_FUZZ_CHECK(config->layer_intermediate_size(layer) > 0, "mlp width");
    (void)config->rope(layer);
  }
  return 0;
}
