// cortiq-run: runs a compiled MODEL.cortiq on a prompt and streams the continuation, as
// llama.cpp's llama-cli/llama-simple do. Runtime only (no MLIR/LLVM).
//
//   cortiq-run MODEL.cortiq -p "text" [-n N] [--chat] [--system TEXT] [--thinking] [sampling]
//   cortiq-run MODEL.cortiq -f prompt.txt ...
//   cortiq-run MODEL.cortiq --tokens 2,17,300 [-n N] [--dump-logits FILE] [--dump-layers DIR]
//
// Text (-p/-f): the prompt is encoded with the model's tokenizer (the artifact's tokenizer
// section; <bos> first), or rendered as a user turn in the Gemma 4 chat format with --chat,
// --system or --thinking; the continuation is streamed to stdout as it is sampled (whole UTF-8
// characters only, special tokens left out unless --special) until an end-of-generation token,
// -n tokens, a --stop string (not printed), a full context (said on stderr) or Ctrl-C. Sampling
// uses the model's generation-config defaults (Gemma 4: temperature 1, top_k 64, top_p 0.95)
// unless flags say otherwise. Timings go to stderr at the end, as llama.cpp prints them.
//
// Ids (--tokens): the prompt is given as ids and the sampled ids are printed on one line
// (comma-separated; greedy unless sampling flags are given); the dumps of --dump-logits /
// --dump-layers work in both modes.
//
// Errors: "cortiq-run: <message>" on stderr, exit status 1; among them non-finite (NaN/Inf)
// logits, a prompt longer than the context, and dump paths that are not regular files, are the
// model itself or are one another (base/file_checks.h). Dumps are written to fresh temporaries
// and renamed into place only when the run succeeds (base/atomic_file.h). Ctrl-C (SIGINT) stops
// the prompt or the generation and exits with status 130, as llama.cpp's tools do.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
#include "base/file_util.h"
#include "base/status_macros.h"
#include "runtime/artifact.h"
#include "runtime/generation/generator.h"
#include "runtime/generation/model_text.h"
#include "runtime/sampling/sampler.h"
#include "runtime/sampling/stop_condition.h"
#include "runtime/sequence.h"
#include "runtime/session.h"
#include "runtime/text/unicode.h"
#include "tools/common/escapes.h"
#include "tools/common/flags.h"
#include "tools/common/interrupt.h"
#include "tools/common/thought_display.h"
#include "tools/common/perf_report.h"
#include "tools/common/printable_piece.h"
#include "tools/common/sampling_flags.h"
#include "tools/common/session_flags.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error \
    "cortiq-run writes raw little-endian float32 dumps as host floats; port the dump code"
#endif

namespace cortiq {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point begin, Clock::time_point end) {
  return std::chrono::duration<double>(end - begin).count();
}

struct RunFlags {
  SessionFlags session;
  SamplingFlags sampling;
  std::string prompt;
  std::string file;
  std::string tokens;
  int64_t n_predict = -1;
  bool conversation = false;  // llama-cli's -cnv: refused, naming cortiq-chat
  bool chat = false;
  std::string system;
  bool thinking = false;
  bool special = false;
  bool verbose_prompt = false;
  std::string dump_logits;
  std::string dump_layers;
  bool verify = false;
  EscapeFlags escapes;
};

// The most prompt text per context position cortiq-run reads from a file (-f): far more than any
// vocabulary maps to one token (Gemma 4's pieces are at most a few dozen bytes, about 4 on average
// in English), so a longer file cannot fit the context whatever it holds.
constexpr uint64_t kPromptBytesPerPosition = 256;

// InvalidArgument "<source>: not valid UTF-8 at byte N" unless `text` is well-formed UTF-8.
absl::Status CheckUtf8(const std::string& source, absl::string_view text) {
  const size_t bad = text::FindInvalidUtf8(std::string_view(text.data(), text.size()));
  if (bad == std::string_view::npos) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": the text is not valid UTF-8 at byte ", bad));
}

absl::StatusOr<std::vector<int32_t>> ParseTokens(const std::string& text) {
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError("--tokens is empty (comma-separated token ids)");
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

// A dump written row by row into a fresh temporary (base/atomic_file.h) and renamed onto its
// path by Close: a failed run (a full disk, a bad token, a numeric error) leaves no partial
// dump, and an existing file keeps its old content.
class DumpFile {
 public:
  static absl::StatusOr<std::unique_ptr<DumpFile>> Create(
      const std::string& path, const std::vector<std::string>& inputs) {
    CORTIQ_RETURN_IF_ERROR(CheckOutputPath(path, inputs));  // the model itself: named as such
    CORTIQ_RETURN_IF_ERROR(CheckNotAModel(path, "a dump of f32 rows"));
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

// Writes `text` to stdout at once (the stream is the product: a failed write is an error).
absl::Status WriteOut(absl::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
      std::fflush(stdout) != 0) {
    return absl::InternalError(absl::StrCat("stdout: write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status Run(const Flags& flags, const RunFlags& f, const std::string& model_path) {
  const int sources = !f.prompt.empty() + !f.file.empty() + !f.tokens.empty();
  if (sources == 0) {
    return absl::InvalidArgumentError(
        "no prompt (or an empty one): give -p TEXT, -f FILE or --tokens IDS");
  }
  if (sources > 1) {
    return absl::InvalidArgumentError("give one prompt: -p, -f or --tokens, not several");
  }
  const bool ids_mode = !f.tokens.empty();
  const bool chat = f.chat || !f.system.empty() || f.thinking;
  if (ids_mode && chat) {
    return absl::InvalidArgumentError("--chat, --system and --thinking take a text prompt (-p, -f)");
  }

  const Clock::time_point load_begin = Clock::now();
  CORTIQ_ASSIGN_OR_RETURN(const SessionOptions session_options, ToSessionOptions(f.session));
  CORTIQ_ASSIGN_OR_RETURN(const ArtifactLoad load, ArtifactLoadOf(f.session));
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Artifact> artifact, Artifact::Open(model_path, load));
  NoteContextClamp("cortiq-run", f.session, artifact->plan());
  NoteSlowPrefillActivations("cortiq-run", session_options);
  NotePrefillActivationsWithoutEffect("cortiq-run", session_options, artifact->plan());
  const Clock::time_point verify_begin = Clock::now();
  if (f.verify) CORTIQ_RETURN_IF_ERROR(artifact->VerifyWeights(session_options.threads));
  const double verify_seconds = Seconds(verify_begin, Clock::now());
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Sequence> sequence, Sequence::Create(*artifact, session_options));
  // The tokenizer: required for text; for ids only when stop strings need text.
  std::optional<text::Tokenizer> tokenizer;
  if (!ids_mode || !f.sampling.stop.empty() || !artifact->tokenizer_section().empty()) {
    absl::StatusOr<text::Tokenizer> loaded = LoadArtifactTokenizer(*artifact);
    if (loaded.ok()) {
      tokenizer.emplace(*std::move(loaded));
    } else if (!ids_mode || !f.sampling.stop.empty() ||
               loaded.status().code() != absl::StatusCode::kFailedPrecondition) {
      return absl::Status(loaded.status().code(),
                          absl::StrCat(loaded.status().message(),
                                       ids_mode ? "" : " (--tokens IDS runs it on ids)"));
    }
  }
  const double load_seconds = Seconds(load_begin, Clock::now());
  const Plan& plan = artifact->plan();

  // The prompt's ids.
  std::vector<int32_t> prompt;
  if (ids_mode) {
    CORTIQ_ASSIGN_OR_RETURN(prompt, ParseTokens(f.tokens));
  } else {
    std::string input = f.prompt;
    if (!f.file.empty()) {
      // A prompt must fit the context: more than kPromptBytesPerPosition bytes per position
      // cannot (see there), and reading and encoding it all before saying so would take
      // seconds and gigabytes per 100 MB.
      const uint64_t limit = std::max<uint64_t>(
          uint64_t{1} << 20, static_cast<uint64_t>(sequence->ctx_size()) * kPromptBytesPerPosition);
      // "-" is stdin (as llama.cpp's -f - and cortiq-tokenize's --text-file -); ReadTextInput
      // reads pipes and FIFOs.
      absl::StatusOr<std::string> read =
          ReadTextInput(f.file == "-" ? std::string("/dev/stdin") : f.file, limit);
      if (absl::IsOutOfRange(read.status())) {
        return absl::InvalidArgumentError(absl::StrCat(
            read.status().message(), ": more text than a prompt in a context of ",
            sequence->ctx_size(), " positions can hold (at most ", kPromptBytesPerPosition,
            " bytes per position; -c/--ctx-size)"));
      }
      CORTIQ_ASSIGN_OR_RETURN(input, std::move(read));
    }
    // Invalid UTF-8 is reported against what the user gave (after its escapes: a \xHH can make
    // it), before any chat rendering moves it.
    const char* escaped = f.escapes.no_escape ? "" : " (after escapes; --no-escape)";
    const std::string source = f.file.empty() ? absl::StrCat("-p", escaped) : f.file;
    CORTIQ_RETURN_IF_ERROR(CheckUtf8(source, input));
    CORTIQ_RETURN_IF_ERROR(CheckUtf8(absl::StrCat("--system", escaped), f.system));
    if (chat) {
      const text::ChatTemplateSpec& shipped = tokenizer->config().chat_template;
      if (!shipped.text.empty() && !text::IsGemma4ChatTemplate(shipped.text)) {
        std::fprintf(stderr,
                     "cortiq-run: warning: the model's chat template (%s) is not the Gemma 4 "
                     "format; the prompt is rendered in the built-in Gemma 4 format\n",
                     shipped.source.c_str());
      }
      std::vector<text::ChatMessage> messages;
      if (!f.system.empty()) messages.push_back({"system", text::ChatMessage::ContentKind::kString, f.system});
      messages.push_back({"user", text::ChatMessage::ContentKind::kString, input});
      text::ChatOptions options;
      options.add_generation_prompt = true;
      options.enable_thinking = f.thinking;
      CORTIQ_ASSIGN_OR_RETURN(input, RenderChatPrompt(*tokenizer, messages, options));
    }
    CORTIQ_ASSIGN_OR_RETURN(prompt, EncodePrompt(*tokenizer, input));
    if (prompt.empty()) return absl::InvalidArgumentError("the prompt encodes to no tokens");
  }
  // Check everything that can fail before spending time on the forward or creating a file.
  if (static_cast<int64_t>(prompt.size()) > sequence->ctx_size()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "context full: the prompt has ", prompt.size(), " tokens, the context holds ",
        sequence->ctx_size(), " (-c/--ctx-size; the model supports ",
        plan.model.max_position_embeddings, ")"));
  }
  if (absl::Status s = sequence->CheckTokens(prompt); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat(ids_mode ? "--tokens: " : "prompt: ", s.message(), " of ",
                                     model_path));
  }
  if (f.verbose_prompt) {
    std::fprintf(stderr, "prompt: %zu tokens\n", prompt.size());
    for (const int32_t id : prompt) {
      std::string piece = "?";
      if (tokenizer) {
        absl::StatusOr<std::string_view> p = tokenizer->TokenString(id);
        if (p.ok()) piece = PrintablePiece(*p);
      }
      std::fprintf(stderr, "%6d -> '%s'\n", id, piece.c_str());
    }
  }

  // Sampling: the model's defaults (greedy for ids), then the flags.
  sampling::SamplingOptions defaults =
      tokenizer && !ids_mode ? ModelSamplingOptions(*tokenizer) : sampling::DefaultSamplingOptions();
  if (ids_mode) defaults.temperature = 0.0f;
  CORTIQ_ASSIGN_OR_RETURN(sampling::SamplingOptions options,
                          ResolveSampling(flags, f.sampling, defaults));
  if (tokenizer) {
    for (const sampling::LogitBias& ban : UntokenizableIdBans(plan.model.vocab_size, *tokenizer)) {
      options.logit_bias.push_back(ban);
    }
  }
  CORTIQ_ASSIGN_OR_RETURN(sampling::Sampler sampler,
                          sampling::Sampler::Create(options, static_cast<int32_t>(plan.model.vocab_size)));
  for (const int32_t id : prompt) CORTIQ_RETURN_IF_ERROR(sampler.Accept(id));
  std::vector<int32_t> end_ids;
  if (tokenizer) end_ids = chat ? ChatEndOfTurnIds(*tokenizer) : EndOfGenerationIds(*tokenizer);
  CORTIQ_ASSIGN_OR_RETURN(sampling::StopCondition stop,
                          sampling::StopCondition::Create(end_ids, f.sampling.stop));

  // Every dump is checked before it is written: never the model (it is mapped; replacing it is
  // refused like any input), never a special file, and never two dumps onto one file. Dumps
  // appear only once the run has succeeded (DumpFile).
  const std::vector<std::string> inputs = {model_path};
  std::unique_ptr<DumpFile> logits_file;
  std::vector<std::string> outputs = {f.dump_logits};
  if (!f.dump_layers.empty()) {
    // Tap names are restricted by ValidatePlan to [A-Za-z0-9._-], so they stay in the dir.
    for (const Tap& tap : plan.taps) outputs.push_back(absl::StrCat(f.dump_layers, "/", tap.name, ".f32"));
  }
  CORTIQ_RETURN_IF_ERROR(CheckDistinctOutputs(outputs));
  if (!f.dump_logits.empty()) {
    CORTIQ_ASSIGN_OR_RETURN(logits_file, DumpFile::Create(f.dump_logits, inputs));
  }
  std::vector<std::unique_ptr<DumpFile>> layer_files;
  if (!f.dump_layers.empty()) {
    if (mkdir(f.dump_layers.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InvalidArgumentError(absl::StrCat(
          f.dump_layers, ": cannot create directory: ", std::strerror(errno)));
    }
    struct stat dir_stat;
    if (stat(f.dump_layers.c_str(), &dir_stat) != 0 || !S_ISDIR(dir_stat.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrCat(f.dump_layers, ": exists and is not a directory (--dump-layers)"));
    }
    for (size_t i = 1; i < outputs.size(); ++i) {
      CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<DumpFile> d, DumpFile::Create(outputs[i], inputs));
      layer_files.push_back(std::move(d));
    }
  }
  // Every evaluated position's taps (each row of every layer), and the prompt's logits when they
  // are dumped.
  if (!layer_files.empty()) sequence->set_every_tap(true);
  bool in_prompt = true;
  const auto dump = [&](const EvaluatedToken& t) -> absl::Status {
    if (in_prompt && logits_file != nullptr) CORTIQ_RETURN_IF_ERROR(logits_file->Write(t.logits()));
    for (size_t i = 0; i < layer_files.size(); ++i) {
      CORTIQ_RETURN_IF_ERROR(layer_files[i]->Write(t.tap(i)));
    }
    return absl::OkStatus();
  };
  const bool dumping = logits_file != nullptr || !layer_files.empty();

  InstallInterruptHandler();
  // Prompt: in chunks of batch_size() tokens (Sequence::Eval), the logits of the last token only
  // unless every position's are dumped; progress on a terminal for long prompts.
  const Clock::time_point prompt_begin = Clock::now();
  {
    PromptProgress progress(static_cast<int64_t>(prompt.size()), sequence->batch_size(),
                            &InterruptFlag());
    const auto observe = [&](const EvaluatedToken& t) -> absl::Status {
      CORTIQ_RETURN_IF_ERROR(progress(t));
      return dumping ? dump(t) : absl::OkStatus();
    };
    absl::Status s = sequence->Eval(
        prompt, logits_file != nullptr ? BatchLogits::kAll : BatchLogits::kLast, observe);
    if (absl::IsCancelled(s)) return absl::CancelledError("interrupted during the prompt");
    CORTIQ_RETURN_IF_ERROR(s);
  }
  const double prompt_seconds = Seconds(prompt_begin, Clock::now());
  in_prompt = false;

  GenerateOptions generate;
  generate.max_tokens = f.n_predict;
  generate.special = f.special;
  generate.ignore_eos = f.sampling.ignore_eos;
  // A chat reply's thought channel (Gemma 4 with --thinking): tools/common/thought_display.h. A
  // raw prompt's continuation stays raw text, as the server's completions.
  ThoughtDisplay thoughts;
  if (chat) {
    generate.reasoning = [&thoughts](absl::string_view piece) { return thoughts.Thought(piece); };
  }
  const TokenObserver observer = dump;
  const auto sink = [&](absl::string_view piece) {
    return ids_mode ? absl::OkStatus() : thoughts.Answer(piece);
  };
  absl::StatusOr<GenerationResult> generated =
      Generate(*sequence, tokenizer ? &*tokenizer : nullptr, sampler, stop, generate, sink,
               &InterruptFlag(), dumping ? &observer : nullptr);
  // The terminal's normal rendition back whatever ended the reply (an error mid-thought too).
  CORTIQ_RETURN_IF_ERROR(thoughts.EndReply());
  CORTIQ_ASSIGN_OR_RETURN(const GenerationResult result, std::move(generated));

  if (logits_file != nullptr) CORTIQ_RETURN_IF_ERROR(logits_file->Close());
  for (auto& d : layer_files) CORTIQ_RETURN_IF_ERROR(d->Close());

  if (ids_mode) {
    if (!result.tokens.empty()) {
      CORTIQ_RETURN_IF_ERROR(WriteOut(absl::StrCat(absl::StrJoin(result.tokens, ","), "\n")));
    }
  } else if (isatty(STDOUT_FILENO) == 1 && !result.text.empty() && result.text.back() != '\n') {
    CORTIQ_RETURN_IF_ERROR(WriteOut("\n"));
  }
  if (result.reason == FinishReason::kContextFull) {
    std::fprintf(stderr,
                 "cortiq-run: context full (%lld positions): stopped after %zu generated tokens "
                 "(-c/--ctx-size gives more room; the model supports %lld)\n",
                 static_cast<long long>(sequence->ctx_size()), result.tokens.size(),
                 static_cast<long long>(plan.model.max_position_embeddings));
  } else if (result.reason == FinishReason::kInterrupted) {
    std::fprintf(stderr, "cortiq-run: interrupted after %zu generated tokens\n",
                 result.tokens.size());
  }
  PerfCounters perf;
  perf.load_seconds = load_seconds;
  if (f.verify) perf.verify_seconds = verify_seconds;
  perf.prompt_tokens = static_cast<int64_t>(prompt.size());
  perf.prompt_seconds = prompt_seconds;
  perf.generated = static_cast<int64_t>(result.tokens.size());
  perf.evaluated = result.evaluated;
  perf.eval_seconds = result.eval_seconds;
  perf.first_token_seconds = prompt_seconds + result.first_token_seconds;
  perf.total_seconds = prompt_seconds + result.total_seconds;
  std::fprintf(stderr, "\n%sstop: %s\n", FormatPerf(perf).c_str(),
               FinishReasonName(result.reason));
  // Ctrl-C ends the run with status 130, as llama.cpp's tools (and shells) report SIGINT; what
  // happened is said above.
  if (result.reason == FinishReason::kInterrupted) return absl::CancelledError();
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  RunFlags f;
  Flags flags("cortiq-run", "MODEL.cortiq (-p TEXT | -f FILE | --tokens IDS) [options]",
              "Runs a compiled model on a prompt and streams the continuation to stdout; "
              "timings go to stderr.");
  AddSessionFlags(flags, &f.session);
  flags.AddString("-p, --prompt", "TEXT", &f.prompt,
                  "the prompt text (\\n and the other escapes of -e processed; --no-escape)");
  flags.AddString("-f, --file", "FILE", &f.file, "read the prompt text from FILE (- for stdin)");
  flags.AddString("--tokens", "IDS", &f.tokens,
                  "the prompt as comma-separated token ids, e.g. 2,17,300; the sampled ids are "
                  "printed on one line (greedy unless sampling flags are given)");
  flags.AddInt("-n, --n-predict", "N", &f.n_predict, -1, INT32_MAX,
               "tokens to generate; -1 = until an end-of-generation token or a full context "
               "(default: -1)");
  flags.AddBool("--chat", &f.chat,
                "render the prompt as a user turn in the model's chat format (Gemma 4), "
                "followed by the model's turn");
  flags.AddString("--system", "TEXT", &f.system, "a system message first (implies --chat)");
  flags.AddBool("-cnv, --conversation", &f.conversation,
                "llama-cli's conversation mode: use cortiq-chat (one turn here: --chat)");
  flags.AddBool("--thinking", &f.thinking,
                "thinking on: <|think|> in the system turn (implies --chat)");
  flags.AddBool("--special", &f.special, "print special tokens (<|turn>, ...)");
  flags.AddBool("--verbose-prompt", &f.verbose_prompt, "print the prompt's ids and pieces on stderr");
  flags.AddBool("--verify", &f.verify,
                "before running, check every weight against the XXH3-64 hashes written with it "
                "(artifact format 3.1), on --threads threads; a mismatch is an error naming the "
                "weight");
  AddSamplingFlags(flags, &f.sampling);
  AddEscapeFlags(flags, &f.escapes, "-p, --system and --stop");
  flags.AddGroup("dumps");
  flags.AddString("--dump-logits", "FILE", &f.dump_logits,
                  "write the logits of every prompt position: raw little-endian float32 "
                  "[T, vocab], row t = logits after tokens 0..t");
  flags.AddString("--dump-layers", "DIR", &f.dump_layers,
                  "write DIR/<tap>.f32 for every tap of the plan (layer.N = the hidden state after "
                  "layer N): raw float32 [positions, hidden], one row per evaluated position (the "
                  "prompt and every generated token but the last)");
  flags.AddEpilog(
      "examples:\n"
      "  cortiq-run model.cortiq -p \"The capital of France is\" -n 32\n"
      "  cortiq-run model.cortiq --chat -p \"Write a haiku about the sea\" --temp 0.7\n"
      "  cortiq-run model.cortiq --tokens 2,17,300 -n 8");
  std::vector<std::string> positional = flags.ParseOrExit(argc, argv);
  NoteIgnoredFlags("cortiq-run", flags);
  if (f.conversation) {
    std::fprintf(stderr,
                 "cortiq-run: -cnv: for a conversation run cortiq-chat MODEL.cortiq (as llama-cli "
                 "-cnv); cortiq-run --chat answers one turn\n");
    return 2;
  }
  // -p, --system and --stop as llama.cpp reads them ('\n' a newline); -f files as they are.
  std::vector<std::string*> texts = {&f.prompt, &f.system};
  for (std::string& stop : f.sampling.stop) texts.push_back(&stop);
  ApplyEscapes(f.escapes, texts);
  absl::StatusOr<std::string> model = TakeModelPath(f.session, &positional);
  absl::Status status = model.status();
  if (status.ok()) status = Run(flags, f, *model);
  if (!status.ok()) {
    if (!status.message().empty()) {
      std::fprintf(stderr, "cortiq-run: %s\n", std::string(status.message()).c_str());
    }
    return absl::IsCancelled(status) ? 130 : 1;  // Cancelled: Ctrl-C (128 + SIGINT)
  }
  return 0;
}

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) { return cortiq::Main(argc, argv); }
