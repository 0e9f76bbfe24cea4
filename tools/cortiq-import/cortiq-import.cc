// cortiq-import: prints the `cortiq` IR of a Gemma-4 E-series checkpoint directory (config.json
// + safetensors headers; no weights are read), or of a config alone with --config-only.
#include <cstdio>
#include <string>
#include <vector>

#include "base/file_checks.h"
#include "compiler/import/importer.h"
#include "tools/common/flags.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Support/FileUtilities.h"

int main(int argc, char** argv) {
  bool config_only = false;
  std::string output_path = "-";
  cortiq::Flags flags("cortiq-import", "CHECKPOINT_DIR|MODEL.gguf|CONFIG.json [options]",
                      "Prints the cortiq dialect IR of one decode step of a Gemma-4 E-series text "
                      "decoder (no weights are read).");
  flags.AddBool("--config-only", &config_only,
                "build the graph from config.json alone, with the tensor shapes the config "
                "implies (bf16), without reading any safetensors header");
  flags.AddString("-o, --output", "FILE", &output_path, "output file for the IR ('-' = stdout)");
  std::vector<std::string> args = flags.ParseOrExit(argc, argv);
  if (args.size() != 1) {
    std::fprintf(stderr, "cortiq-import: expected one CHECKPOINT_DIR, got %zu (see --help)\n",
                 args.size());
    return 2;
  }
  if (output_path != "-") {
    // Never write the IR over what is read (-o MODEL.gguf, -o DIR/model.safetensors), nor over
    // another model a mistyped path names.
    absl::Status status = cortiq::CheckOutputPath(output_path, cortiq::FilesOfInput(args[0]));
    if (status.ok()) status = cortiq::CheckNotAModel(output_path, "the IR");
    if (!status.ok()) {
      std::fprintf(stderr, "cortiq-import: %s\n", std::string(status.message()).c_str());
      return 1;
    }
  }
  mlir::MLIRContext context;
  auto module = cortiq::ImportCheckpoint(context, args[0], config_only);
  if (!module.ok()) {
    std::fprintf(stderr, "cortiq-import: %s\n", std::string(module.status().message()).c_str());
    return 1;
  }
  std::string error;
  auto output = mlir::openOutputFile(output_path, &error);
  if (!output) {
    std::fprintf(stderr, "cortiq-import: %s\n", error.c_str());
    return 1;
  }
  (*module)->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
