// cortiq-import: prints the `cortiq` IR of a Gemma-4 E-series checkpoint directory (config.json
// + safetensors headers; no weights are read), or of a config alone with --config-only.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "tools/common/command_line.h"
#include "compiler/import/importer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Support/FileUtilities.h"

ABSL_FLAG(bool, config_only, false,
          "build the graph from config.json alone, with the tensor shapes the config implies "
          "(bf16), without reading any safetensors header");
ABSL_FLAG(std::string, o, "-", "output file for the IR ('-' = stdout)");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "cortiq-import CHECKPOINT_DIR [--config-only] [--o FILE]\n"
      "Prints the cortiq dialect IR of one decode step of a Gemma-4 E-series text decoder.");
  std::vector<std::string> args = cortiq::ParseToolCommandLine(argc, argv);
  if (args.size() != 2) {
    std::fprintf(stderr, "usage: cortiq-import CHECKPOINT_DIR [--config-only] [--o FILE]\n");
    return 2;
  }
  mlir::MLIRContext context;
  auto module = cortiq::ImportCheckpoint(context, args[1], absl::GetFlag(FLAGS_config_only));
  if (!module.ok()) {
    std::fprintf(stderr, "cortiq-import: %s\n", std::string(module.status().message()).c_str());
    return 1;
  }
  std::string error;
  auto output = mlir::openOutputFile(absl::GetFlag(FLAGS_o), &error);
  if (!output) {
    std::fprintf(stderr, "cortiq-import: %s\n", error.c_str());
    return 1;
  }
  (*module)->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
