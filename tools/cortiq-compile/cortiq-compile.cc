// cortiq-compile: checkpoint directory → AOT artifact (import, passes, lowering, weights).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "formats/checkpoint_reader.h"
#include "compiler/import/importer.h"
#include "compiler/lower/plan_lowering.h"
#include "compiler/lower/weight_materializer.h"
#include "passes/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"
#include "runtime/artifact.h"
#include "runtime/text/gemma4_chat.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/tokenizer_section.h"
#include "formats/tokenizer_files.h"
#include "base/atomic_file.h"
#include "base/file_checks.h"
#include "base/file_util.h"
#include "tools/common/flags.h"

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "cortiq-compile: %s\n", message.c_str());
  return 1;
}

// The command line (main declares the flags).
struct CompileFlags {
  std::string output;
  std::string weights;
  std::string tables;
  bool no_opt = false;
  bool keep_q4_0_layout = false;
  bool keep_q8_0_layout = false;
  bool keep_q4_k_layout = false;
  bool keep_q5_k_layout = false;
  int64_t max_batch = 512;
  std::string pass_pipeline;
  std::string dump_ir;
  bool no_tokenizer = false;
  bool strict_config = false;
};

// True if the first bytes of `path` are a cortiq artifact's magic.
bool IsArtifact(const std::string& path) {
  absl::StatusOr<cortiq::ReadOnlyFile> file = cortiq::ReadOnlyFile::Open(path);
  char magic[sizeof(cortiq::kArtifactMagic)] = {0};
  return file.ok() && file->size() >= sizeof(magic) && file->ReadAt(0, sizeof(magic), magic).ok() &&
         std::memcmp(magic, cortiq::kArtifactMagic, sizeof(magic)) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  cortiq::registerCortiqPasses();
  cortiq::registerCortiqPipelines();
  CompileFlags f;
  cortiq::Flags flags(
      "cortiq-compile", "CHECKPOINT_DIR|MODEL.gguf -o MODEL.cortiq [options]",
      "Compiles a Gemma-4 E-series checkpoint (a Hugging Face directory of config.json + "
      "safetensors, or a GGUF file of arch gemma4) into a cortiq artifact, which cortiq-run, "
      "cortiq-chat, cortiq-bench and the C API load.");
  flags.AddString("-o, --output", "MODEL.cortiq", &f.output,
                  "the artifact to write (required). It is a cortiq artifact, not a GGUF or "
                  "safetensors file: a name ending in .gguf or .safetensors is refused");
  flags.AddString(
      "--weights", "FORMAT|MIX", &f.weights,
      "weight storage format of the matrices: f32, bf16, f16, or a llama.cpp block format "
      "(q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs; under q4_0 "
      "the embedding/LM-head and PLE tables are q8_0; q4_0 on rows of whole 512-weight groups "
      "is stored as q4_0x16, q8_0 as q8_0x16, q4_k as q4_kx16 and q5_k as q5_kx16, cortiq's "
      "regroupings of the same blocks, which can also be named), "
      "quantized by llama.cpp's reference "
      "quantizers; or a llama-quantize mix (q3_k_m, q4_k_s, q4_k_m, q5_k_s, q5_k_m: per-tensor "
      "types as llama-quantize picks them). Default: each tensor's checkpoint format (GGUF "
      "blocks kept as they are; f16 stays f16). Norm gains and scalars are always f32.");
  flags.AddString("--tables", "FORMAT", &f.tables,
                  "storage format of the embedding / LM-head and PLE tables (any --weights "
                  "format); default: q8_0 under --weights q4_0, else as --weights");
  flags.AddBool("--keep-q4_0-layout", &f.keep_q4_0_layout,
                "store Q4_0 matrices in GGUF's block layout; by default those whose rows are whole "
                "groups of 16 blocks are stored as q4_0x16, the same blocks regrouped for a faster "
                "decode");
  flags.AddBool("--keep-q8_0-layout", &f.keep_q8_0_layout,
                "store Q8_0 matrices in GGUF's block layout; by default those whose rows are whole "
                "groups of 16 blocks are stored as q8_0x16, the same blocks regrouped for a faster "
                "decode");
  flags.AddBool("--keep-q4_k-layout", &f.keep_q4_k_layout,
                "store Q4_K matrices in GGUF's block layout; by default those whose rows are whole "
                "pairs of super-blocks are stored as q4_kx16, the same super-blocks regrouped "
                "(scales unpacked, 3% larger) for a faster decode on x86 with AVX2 or AVX-512 "
                "VNNI (elsewhere, e.g. ARM, plain q4_k decodes faster: keep it)");
  flags.AddBool("--keep-q5_k-layout", &f.keep_q5_k_layout,
                "store Q5_K matrices in GGUF's block layout; by default those whose rows are whole "
                "pairs of super-blocks are stored as q5_kx16, the same super-blocks regrouped "
                "(scales unpacked, 2% larger) for a faster decode on x86 with AVX2 or AVX-512 "
                "VNNI (elsewhere plain q5_k decodes faster: keep it)");
  flags.AddInt("--max-batch", "N", &f.max_batch, 1, cortiq::kMaxBatch,
               "largest prefill batch the artifact supports (tokens per batched evaluation; "
               "sessions hold this many rows of activations, lowered so that they take at most "
               "1 GiB); 1 = token by token only (default: 512)");
  flags.AddBool("--no-tokenizer", &f.no_tokenizer,
                "leave the checkpoint's tokenizer out of the artifact (it then takes token ids "
                "only)");
  flags.AddBool("--strict-config", &f.strict_config,
                "refuse a checkpoint whose config leaves out a field that changes the "
                "computation (sliding_window, num_kv_shared_layers, final_logit_softcapping, "
                "head_dim, GGUF shared_kv_layers, ...) instead of warning and using the Hugging "
                "Face (GGUF: llama.cpp) value");
  flags.AddGroup("compiler");
  flags.AddBool("--no-opt", &f.no_opt, "run no optimization pass before lowering");
  flags.AddString("--pass-pipeline", "PIPELINE", &f.pass_pipeline,
                  "run this pass pipeline instead of the default one, e.g. "
                  "'fuse-linear,plan-buffers' or 'cortiq-default' (passes run on the module; a "
                  "'builtin.module(...)' wrapper is accepted too)");
  flags.AddString("--dump-ir", "FILE", &f.dump_ir, "also write the IR that is lowered to FILE");
  flags.AddEpilog(
      "examples:\n"
      "  cortiq-compile ~/models/gemma-4-E2B-it -o e2b.cortiq --weights q4_k_m\n"
      "  cortiq-compile gemma-4-E2B-it-Q4_K_M.gguf -o e2b.cortiq");
  std::vector<std::string> args = flags.ParseOrExit(argc, argv);
  if (args.empty()) return Fail("no checkpoint: give CHECKPOINT_DIR or MODEL.gguf (see --help)");
  if (args.size() != 1) {
    return Fail(absl::StrCat("expected one CHECKPOINT_DIR or MODEL.gguf, got ", args.size(),
                             " arguments (see --help)"));
  }
  const std::string checkpoint_dir = args[0];
  const std::string output = f.output;
  if (output.empty()) return Fail("-o MODEL.cortiq is required");
  if (IsArtifact(checkpoint_dir)) {
    return Fail(absl::StrCat(checkpoint_dir,
                             ": is a cortiq artifact, already compiled: run it with cortiq-run "
                             "or cortiq-chat (cortiq-compile takes a checkpoint directory or a "
                             "GGUF file)"));
  }
  // Storage formats: the assign-storage-formats pass applies the policy (passes/Passes.td).
  // Case-insensitive, as llama-quantize's type names (Q4_K_M, Q8_0) are written in capitals.
  std::string weights = absl::AsciiStrToLower(f.weights);
  const std::string tables = absl::AsciiStrToLower(f.tables);
  std::string mix;
  if (weights == "q3_k_m" || weights == "q4_k_s" || weights == "q4_k_m" || weights == "q5_k_s" ||
      weights == "q5_k_m") {
    mix = weights;
    weights.clear();
  }
  std::optional<cortiq::StorageFormat> weights_format, tables_format;
  auto parse_format = [](const char* flag, const std::string& value, const std::string& given,
                         std::optional<cortiq::StorageFormat>& format) {
    if (value.empty()) return true;
    if (auto parsed = cortiq::symbolizeStorageFormat(value)) {
      format = *parsed;
      return true;
    }
    Fail(absl::StrCat(flag, " must be ", cortiq::listStorageFormats(),
                      std::string(flag) == "--weights"
                          ? "; or a llama-quantize mix: q3_k_m, q4_k_s, q4_k_m, q5_k_s, q5_k_m"
                          : "",
                      " (in any case), not '", given, "'"));
    return false;
  };
  if (!parse_format("--weights", weights, f.weights, weights_format) ||
      !parse_format("--tables", tables, f.tables, tables_format)) {
    return 1;
  }
  if (f.keep_q4_0_layout && (weights_format == cortiq::StorageFormat::Q4_0x16 ||
                             tables_format == cortiq::StorageFormat::Q4_0x16)) {
    return Fail("--keep-q4_0-layout contradicts --weights/--tables q4_0x16: give one of them");
  }
  if (f.keep_q8_0_layout && (weights_format == cortiq::StorageFormat::Q8_0x16 ||
                             tables_format == cortiq::StorageFormat::Q8_0x16)) {
    return Fail("--keep-q8_0-layout contradicts --weights/--tables q8_0x16: give one of them");
  }
  if (f.keep_q4_k_layout && (weights_format == cortiq::StorageFormat::Q4_Kx16 ||
                             tables_format == cortiq::StorageFormat::Q4_Kx16)) {
    return Fail("--keep-q4_k-layout contradicts --weights/--tables q4_kx16: give one of them");
  }
  if (f.keep_q5_k_layout && (weights_format == cortiq::StorageFormat::Q5_Kx16 ||
                             tables_format == cortiq::StorageFormat::Q5_Kx16)) {
    return Fail("--keep-q5_k-layout contradicts --weights/--tables q5_kx16: give one of them");
  }
  // The flags configure the assign-storage-formats that runs first; one in the pipeline would
  // run again with its own options and silently undo them.
  if (absl::StrContains(f.pass_pipeline, "assign-storage-formats") &&
      (!f.weights.empty() || !f.tables.empty() || f.keep_q4_0_layout || f.keep_q8_0_layout ||
       f.keep_q4_k_layout || f.keep_q5_k_layout)) {
    return Fail(
        "--pass-pipeline runs assign-storage-formats, which would override --weights, --tables "
        "and --keep-*-layout: give them as that pass's options (e.g. "
        "assign-storage-formats{weights=q4_k q4_kx16=false}) or leave the pass out");
  }
  cortiq::LoweringOptions options;
  options.max_batch = f.max_batch;

  // Never write over what is being read (e.g. -o ckpt/model.safetensors), nor one output over
  // the other (--dump-ir onto -o).
  const std::vector<std::string> inputs = cortiq::FilesOfInput(checkpoint_dir);
  const std::string dump_ir = f.dump_ir;
  for (const std::string& out : {output, dump_ir}) {
    if (out.empty()) continue;
    absl::Status status = cortiq::CheckOutputPath(out, inputs);
    if (!status.ok()) return Fail(std::string(status.message()));
  }
  if (!dump_ir.empty()) {
    absl::Status status = cortiq::CheckNotAModel(dump_ir, "the IR (--dump-ir)");
    if (!status.ok()) return Fail(std::string(status.message()));
  }
  if (absl::Status status = cortiq::CheckDistinctOutputs({output, dump_ir}); !status.ok()) {
    return Fail(std::string(status.message()));
  }
  // The artifact is no GGUF or safetensors file: named like one, llama.cpp (or a later
  // cortiq-compile, which picks the reader by extension) would be handed the wrong format.
  for (const char* extension : {".gguf", ".safetensors"}) {
    if (absl::EndsWith(absl::AsciiStrToLower(output), extension)) {
      return Fail(absl::StrCat("-o ", output, ": the output is a cortiq artifact, not a ",
                               extension + 1, " file; name it MODEL.cortiq"));
    }
  }

  // Defaults of absent fields that change the math are the formats' semantics: applied, but
  // said (and refused under --strict-config). Only the headers are read here.
  {
    auto header = cortiq::OpenCheckpoint(checkpoint_dir, /*map_data=*/false);
    if (!header.ok()) return Fail(std::string(header.status().message()));
    const std::vector<cortiq::DefaultedField>& defaulted = (*header)->config().defaulted;
    if (f.strict_config && !defaulted.empty()) {
      std::string fields;
      for (const cortiq::DefaultedField& d : defaulted) {
        absl::StrAppend(&fields, fields.empty() ? "" : ", ", d.field, " (default ", d.value, ")");
      }
      return Fail(absl::StrCat("--strict-config: ", defaulted.front().file,
                               " leaves out fields that change the computation: ", fields));
    }
    for (const cortiq::DefaultedField& d : defaulted) {
      std::fprintf(stderr, "cortiq-compile: warning: %s: %s is absent; using %s\n",
                   d.file.c_str(), d.field.c_str(), d.value.c_str());
    }
  }

  // The tokenizer, the stop ids, the sampling defaults and the chat template travel inside the
  // artifact as its tokenizer section (runtime/text/tokenizer_section.h), read here once.
  std::vector<uint8_t> tokenizer_section;
  size_t tokenizer_vocab = 0;  // ids the shipped tokenizer has
  std::string tokenizer_note = "no tokenizer";
  if (!f.no_tokenizer) {
    absl::StatusOr<std::optional<cortiq::text::TokenizerSpec>> spec =
        cortiq::ReadShippedTokenizer(checkpoint_dir);
    if (!spec.ok()) {
      return Fail(absl::StrCat(spec.status().message(),
                               " (--no-tokenizer compiles the model without its tokenizer)"));
    }
    if (!spec->has_value()) {
      std::fprintf(stderr,
                   "cortiq-compile: warning: %s ships no tokenizer (tokenizer.json or GGUF "
                   "tokenizer.ggml.*): the artifact takes token ids only\n",
                   checkpoint_dir.c_str());
    } else {
      absl::StatusOr<std::vector<uint8_t>> bytes =
          cortiq::text::SerializeTokenizerSection(**spec);
      if (!bytes.ok()) return Fail(std::string(bytes.status().message()));
      // Built once as cortiq-run will build it (its pre-tokenizer regexes compiled): a tokenizer
      // that cannot be built is refused here, not written into an artifact whose every text run
      // would fail.
      absl::StatusOr<cortiq::text::Tokenizer> built = cortiq::text::Tokenizer::FromSection(*bytes);
      if (!built.ok()) {
        return Fail(absl::StrCat(built.status().message(),
                                 " (--no-tokenizer compiles the model without its tokenizer)"));
      }
      tokenizer_vocab = built->vocab_size();
      tokenizer_section = *std::move(bytes);
      const cortiq::text::ChatTemplateSpec& chat = (*spec)->chat_template;
      tokenizer_note = absl::StrCat(
          "tokenizer of ", (*spec)->tokens.size(), " tokens, ",
          chat.text.empty() ? "no chat template (the built-in Gemma 4 format applies)"
          : cortiq::text::IsGemma4ChatTemplate(chat.text)
              ? "the Gemma 4 chat template"
              : "a chat template that is not the Gemma 4 format");
    }
  }

  mlir::MLIRContext context;
  auto module = cortiq::ImportCheckpoint(context, checkpoint_dir, /*config_only=*/false);
  if (!module.ok()) return Fail(std::string(module.status().message()));

  std::string pipeline = f.pass_pipeline;
  const bool explicit_pipeline = !pipeline.empty();
  // The pass manager is already anchored on the module: MLIR 15 would read an outer
  // 'builtin.module(...)' as a nested module that does not exist and run nothing.
  if (absl::StartsWith(pipeline, "builtin.module(") && absl::EndsWith(pipeline, ")")) {
    pipeline = pipeline.substr(15, pipeline.size() - 16);
  }
  mlir::PassManager pm(&context);
  // First, so that the other passes know which weights are rounded or quantized later.
  pm.addPass(cortiq::createAssignStorageFormatsPass(weights_format, tables_format, mix,
                                                    !f.keep_q4_0_layout, !f.keep_q8_0_layout,
                                                    !f.keep_q4_k_layout, !f.keep_q5_k_layout));
  if (explicit_pipeline) {
    if (!pipeline.empty() && mlir::failed(mlir::parsePassPipeline(pipeline, pm, llvm::errs()))) {
      return Fail(absl::StrCat("cannot parse --pass-pipeline '", pipeline, "'"));
    }
  } else if (!f.no_opt) {
    cortiq::buildDefaultPipeline(pm);
  }
  if (mlir::failed(pm.run(**module))) return Fail("the pass pipeline failed");
  if (!dump_ir.empty()) {
    // Written whole to a fresh temporary and renamed into place (no partial file on a full disk).
    std::string text;
    llvm::raw_string_ostream os(text);
    (*module)->print(os);
    os.flush();
    absl::StatusOr<cortiq::AtomicFile> file = cortiq::AtomicFile::Create(dump_ir, inputs);
    absl::Status status = file.status();
    if (status.ok()) status = file->Write(text.data(), text.size());
    if (status.ok()) status = file->Commit();
    if (!status.ok()) return Fail(std::string(status.message()));
  }

  auto plan = cortiq::LowerToPlan(**module, options);
  if (!plan.ok()) return Fail(std::string(plan.status().message()));
  // A session holds max_batch rows of every activation: keep that arena within 1 GiB (E4B with
  // the default passes: 1.5 MB per row, so 512 fits; without buffer planning, 16 MB per row).
  constexpr uint64_t kMaxBatchArenaBytes = uint64_t{1} << 30;
  if (plan->arena_bytes > 0 &&
      plan->arena_bytes * static_cast<uint64_t>(plan->max_batch) > kMaxBatchArenaBytes) {
    const int64_t fitting =
        std::max<int64_t>(1, static_cast<int64_t>(kMaxBatchArenaBytes / plan->arena_bytes));
    std::fprintf(stderr,
                 "cortiq-compile: note: max batch lowered from %lld to %lld: %lld rows of the "
                 "%llu-byte activation arena would exceed 1 GiB\n",
                 static_cast<long long>(plan->max_batch), static_cast<long long>(fitting),
                 static_cast<long long>(plan->max_batch),
                 static_cast<unsigned long long>(plan->arena_bytes));
    plan->max_batch = fitting;
  }

  auto checkpoint = cortiq::OpenCheckpoint(checkpoint_dir, /*map_data=*/true);
  if (!checkpoint.ok()) return Fail(std::string(checkpoint.status().message()));
  const std::vector<cortiq::WeightEntry> entries = plan->weights;
  cortiq::WeightMaterializer materializer(**module, **checkpoint);
  // Ids the tokenizer has but the model has no logit for can be encoded but never evaluated.
  if (static_cast<int64_t>(tokenizer_vocab) > plan->model.vocab_size) {
    std::fprintf(stderr,
                 "cortiq-compile: warning: the tokenizer has %zu tokens, the model %lld logits: "
                 "ids from %lld up cannot be evaluated\n",
                 tokenizer_vocab, static_cast<long long>(plan->model.vocab_size),
                 static_cast<long long>(plan->model.vocab_size));
  }
  std::vector<cortiq::ArtifactSectionData> sections;
  if (!tokenizer_section.empty()) {
    sections.push_back({cortiq::kTokenizerSectionName, tokenizer_section});
  }
  // An earlier artifact there is replaced (WriteArtifact refuses any other file): said below,
  // so that a mistyped -o naming another model is noticed.
  struct stat existing;
  const bool replacing = stat(output.c_str(), &existing) == 0 && S_ISREG(existing.st_mode) &&
                         existing.st_size > 0;
  absl::Status status = cortiq::WriteArtifact(
      output, std::move(*plan),
      [&](size_t index, uint8_t* dst) {
        return materializer.Write(entries[index].name, entries[index].format, dst);
      },
      sections);
  if (!status.ok()) return Fail(std::string(status.message()));
  // What --weights asked for, and what the matrices were stored as (a row that is not whole
  // blocks falls back; q4_0 on whole 512-weight groups is stored q4_0x16).
  std::string stored;
  for (const cortiq::WeightEntry& e : entries) {
    if (e.shape.size() != 2) continue;
    const std::string name = cortiq::WeightFormatName(e.format);
    if (!absl::StrContains(absl::StrCat(",", stored, ","), absl::StrCat(",", name, ","))) {
      absl::StrAppend(&stored, stored.empty() ? "" : ",", name);
    }
  }
  const std::string requested = !mix.empty() ? absl::StrCat(mix, " mix") : weights;
  // With --tables alone the matrices keep their dtypes but the tables do not: say what was
  // stored then too (a table whose rows are not whole blocks of the format falls back).
  const std::string formats =
      !requested.empty() ? absl::StrCat(requested, "; matrices stored as ", stored)
      : !f.tables.empty() ? absl::StrCat("checkpoint dtypes, --tables ", f.tables,
                                         "; matrices stored as ", stored)
                          : "checkpoint dtypes";
  std::printf("cortiq-compile: wrote %s%s (%zu weights, %s; %s)\n", output.c_str(),
              replacing ? ", replacing the artifact that was there" : "", entries.size(),
              formats.c_str(), tokenizer_note.c_str());
  return 0;
}
