// cortiq-tokenize: text ⇄ token ids with a model's own tokenizer, and the Gemma 4 chat format.
//
//     cortiq-tokenize SOURCE --text TEXT | --text-file F [--add-special] [--pieces]
//     cortiq-tokenize SOURCE --batch F.jsonl [--add-special]
//     cortiq-tokenize SOURCE --decode 2,9259,236764 [--skip-special] [--pieces]
//     cortiq-tokenize SOURCE --chat F.json [--thinking] [--add-generation-prompt] [--ids]
//     cortiq-tokenize SOURCE --info
//
// SOURCE is a tokenizer.json, a Hugging Face checkpoint directory, a GGUF file or a compiled
// artifact (its tokenizer section, used in place: see LoadTokenizer). Ids are printed
// comma-separated on one line; --decode prints the text byte for byte with nothing added; --batch
// reads one JSON string per line and prints one JSON array of ids per line. Errors go to stderr with exit code 1; -h/--help prints the usage and exits 0.
// llama-tokenize's spelling works too: `cortiq-tokenize -m SOURCE -p TEXT`, `-f FILE`, `--stdin`.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "formats/chat_messages.h"
#include "formats/json_util.h"
#include "formats/tokenizer_files.h"
#include "runtime/artifact.h"
#include "runtime/generation/model_text.h"
#include "runtime/text/gemma4_chat.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/tokenizer_summary.h"
#include "tools/common/flags.h"

namespace cortiq {
namespace {

struct Options {
  std::string source;
  std::string mode;   // "text", "text-file", "batch", "decode", "chat", "info"
  std::string value;  // its argument
  bool add_special = false;
  bool pieces = false;
  bool skip_special = false;
  bool thinking = false;
  bool add_generation_prompt = false;
  bool ids = false;
};

// Declares the flags on `flags`, parses argv into `o` (exits on -h/--help, --version and parse
// errors) and checks that one SOURCE and one mode are given.
absl::StatusOr<Options> ParseArgs(int argc, char** argv, Flags& flags) {
  Options o;
  std::string model, text, text_file, batch, decode, chat;
  bool info = false, from_stdin = false;
  flags.AddString("-m, --model", "SOURCE", &model,
                  "the tokenizer's source (as llama-tokenize -m); or give it as the first "
                  "argument");
  flags.AddGroup("modes (one of)");
  flags.AddString("-p, --text", "TEXT", &text,
                  "print the ids of TEXT, comma-separated on one line");
  flags.AddString("-f, --text-file", "FILE", &text_file,
                  "the same for the contents of FILE ('-' = stdin)");
  flags.AddBool("--stdin", &from_stdin, "the same for stdin (as --text-file -)");
  flags.AddString("--batch", "F.jsonl", &batch,
                  "each line of F.jsonl is a JSON string; print a JSON array of its ids per "
                  "line (one tokenizer load for all lines)");
  flags.AddString("--decode", "IDS", &decode,
                  "print the text of the comma-separated IDS, byte for byte");
  flags.AddBool("--info", &info,
                "print a summary of the tokenizer (vocabulary, components, special ids, "
                "generation defaults, chat template)");
  flags.AddString("--chat", "F.json", &chat,
                  "render the conversation in F.json ([{\"role\": .., \"content\": ..}]) in "
                  "the Gemma 4 chat format and print the prompt text");
  flags.AddGroup("options");
  flags.AddBool("--add-special", &o.add_special,
                "apply the post-processor (prepend <bos>) when encoding");
  flags.AddBool("--pieces", &o.pieces,
                "print 'id<TAB>piece' per token instead of the ids / text");
  flags.AddBool("--skip-special", &o.skip_special,
                "--decode: leave out special tokens (<bos>, <eos>, ...)");
  flags.AddBool("--thinking", &o.thinking, "--chat: thinking on (<|think|> in the system turn)");
  flags.AddBool("--add-generation-prompt", &o.add_generation_prompt,
                "--chat: end with the model turn opener <|turn>model\\n");
  flags.AddBool("--ids", &o.ids, "--chat: print the ids of the prompt instead of its text");
  flags.AddEpilog(
      "SOURCE: a tokenizer.json, a Hugging Face checkpoint directory (tokenizer.json with\n"
      "tokenizer_config.json, chat_template.jinja, generation_config.json), a GGUF file or a\n"
      "compiled MODEL.cortiq (the tokenizer it carries).\n"
      "\n"
      "examples:\n"
      "  cortiq-tokenize model.cortiq --text \"Hello world\" --pieces\n"
      "  cortiq-tokenize -m model.gguf -p \"Hello world\"\n"
      "  echo \"Hello world\" | cortiq-tokenize model.cortiq --text-file -\n"
      "  cortiq-tokenize tokenizer.json --decode 2,9259,236764");
  std::vector<std::string> positional = flags.ParseOrExit(argc, argv);
  if (!model.empty()) {
    if (!positional.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the source is given by -m/--model; unexpected argument ", positional.front()));
    }
    positional.push_back(model);
  }
  if (positional.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("more than one SOURCE: ", absl::StrJoin(positional, ", ")));
  }
  if (positional.empty()) return absl::InvalidArgumentError("missing SOURCE (see --help)");
  o.source = positional.front();
  if (from_stdin) {
    if (flags.IsSet("--text-file")) {
      return absl::InvalidArgumentError("--stdin and --text-file cannot be combined");
    }
    text_file = "-";
  }
  struct Mode {
    const char* name;
    bool given;
    const std::string* value;
  };
  const Mode modes[] = {{"text", flags.IsSet("--text"), &text},
                        {"text-file", flags.IsSet("--text-file") || from_stdin, &text_file},
                        {"batch", flags.IsSet("--batch"), &batch},
                        {"decode", flags.IsSet("--decode"), &decode},
                        {"chat", flags.IsSet("--chat"), &chat},
                        {"info", info, nullptr}};
  for (const Mode& mode : modes) {
    if (!mode.given) continue;
    if (!o.mode.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", o.mode, " and --", mode.name, " cannot be combined"));
    }
    o.mode = mode.name;
    if (mode.value != nullptr) o.value = *mode.value;
  }
  if (o.mode.empty()) {
    return absl::InvalidArgumentError(
        "missing mode: --text, --text-file, --batch, --decode, --chat or --info (see --help)");
  }
  return o;
}

// A tokenizer and, for a compiled artifact, the mapping its section bytes live in.
struct LoadedTokenizer {
  std::unique_ptr<Artifact> artifact;  // declared first: outlives `tokenizer`
  std::optional<text::Tokenizer> tokenizer;
};

// The tokenizer of `source`: a compiled artifact (by its magic) is used in place from its
// tokenizer section (runtime/generation/model_text.h); anything else goes through the readers
// (formats/tokenizer_files.h) and is serialized to the same section bytes.
absl::StatusOr<LoadedTokenizer> LoadTokenizer(const std::string& source) {
  LoadedTokenizer loaded;
  if (!IsDirectory(source)) {
    CORTIQ_ASSIGN_OR_RETURN(ReadOnlyFile file, ReadOnlyFile::Open(source));
    char magic[sizeof(kArtifactMagic)] = {0};
    if (file.size() >= sizeof(magic)) CORTIQ_RETURN_IF_ERROR(file.ReadAt(0, sizeof(magic), magic));
    // A file named .cortiq without the magic (empty, truncated, another format) gets the
    // artifact reader's error, not the JSON reader's "malformed JSON: tokenizer.json".
    if (std::memcmp(magic, kArtifactMagic, sizeof(magic)) == 0 ||
        absl::EndsWithIgnoreCase(source, ".cortiq")) {
      CORTIQ_ASSIGN_OR_RETURN(loaded.artifact, Artifact::Open(source));
      CORTIQ_ASSIGN_OR_RETURN(text::Tokenizer t, LoadArtifactTokenizer(*loaded.artifact));
      loaded.tokenizer.emplace(std::move(t));
      return loaded;
    }
  }
  CORTIQ_ASSIGN_OR_RETURN(const text::TokenizerSpec spec, ReadTokenizerSpec(source));
  CORTIQ_ASSIGN_OR_RETURN(text::Tokenizer t, text::Tokenizer::FromSpec(spec));
  loaded.tokenizer.emplace(std::move(t));
  return loaded;
}

std::string JoinIds(const std::vector<text::TokenId>& ids, const char* separator) {
  return absl::StrJoin(ids, separator);
}

// "id\tpiece" lines; control characters of the piece escaped so one token is one line.
absl::Status PrintPieces(const text::Tokenizer& tokenizer, const std::vector<text::TokenId>& ids) {
  for (const text::TokenId id : ids) {
    CORTIQ_ASSIGN_OR_RETURN(std::string_view piece, tokenizer.TokenString(id));
    std::string shown;
    for (const char c : piece) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (c == '\n') {
        shown += "\\n";
      } else if (c == '\t') {
        shown += "\\t";
      } else if (c == '\r') {
        shown += "\\r";
      } else if (c == '\\') {
        shown += "\\\\";
      } else if (u < 0x20 || u == 0x7F) {
        absl::StrAppend(&shown, "\\x", absl::Hex(u, absl::kZeroPad2));
      } else {
        shown.push_back(c);
      }
    }
    std::cout << id << '\t' << shown << '\n';
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<text::TokenId>> ParseIds(const std::string& text, uint32_t vocab) {
  std::vector<text::TokenId> ids;
  if (absl::StripAsciiWhitespace(text).empty()) return ids;
  size_t index = 0;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    // As cortiq-run --tokens: "1,,2" is a typo, not the ids 1 and 2.
    if (part.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--decode: entry ", index, " of '", text, "' is empty"));
    }
    ++index;
    int64_t id = 0;
    if (!absl::SimpleAtoi(part, &id)) {
      return absl::InvalidArgumentError(absl::StrCat("--decode: '", part, "' is not an integer"));
    }
    if (id < 0 || id >= vocab) {
      return absl::InvalidArgumentError(
          absl::StrCat("--decode: token id ", id, " is out of range [0, ", vocab, ")"));
    }
    ids.push_back(static_cast<text::TokenId>(id));
  }
  return ids;
}

absl::Status Run(const Options& o) {
  CORTIQ_ASSIGN_OR_RETURN(const LoadedTokenizer loaded, LoadTokenizer(o.source));
  const text::Tokenizer& tokenizer = *loaded.tokenizer;
  if (o.mode == "info") {
    std::cout << text::SummarizeTokenizer(tokenizer);
    return absl::OkStatus();
  }
  text::EncodeOptions encode;
  encode.add_special_tokens = o.add_special;
  if (o.mode == "text" || o.mode == "text-file") {
    std::string input = o.value;
    if (o.mode == "text-file" && o.value == "-") {
      input.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
      if (std::cin.bad()) return absl::InternalError("stdin: read failed");
    } else if (o.mode == "text-file") {
      CORTIQ_ASSIGN_OR_RETURN(input, ReadFileToString(o.value, uint64_t{1} << 30));
    }
    CORTIQ_ASSIGN_OR_RETURN(const std::vector<text::TokenId> ids, tokenizer.Encode(input, encode));
    if (o.pieces) return PrintPieces(tokenizer, ids);
    std::cout << JoinIds(ids, ",") << '\n';
    return absl::OkStatus();
  }
  if (o.mode == "batch") {
    CORTIQ_ASSIGN_OR_RETURN(const std::string lines, ReadFileToString(o.value, uint64_t{1} << 32));
    size_t line_number = 0;
    for (absl::string_view line : absl::StrSplit(lines, '\n')) {
      ++line_number;
      line = absl::StripTrailingAsciiWhitespace(line);
      if (line.empty()) {
        // Only the final newline may leave an empty last "line".
        if (line_number > 1 && lines.size() >= 1 && lines.back() == '\n' &&
            static_cast<size_t>(line.data() - lines.data()) == lines.size()) {
          break;
        }
        return absl::InvalidArgumentError(
            absl::StrCat(o.value, ":", line_number, ": an empty line is not a JSON string"));
      }
      absl::StatusOr<std::string> input = ParseJsonString(absl::StripLeadingAsciiWhitespace(line));
      if (!input.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(o.value, ":", line_number,
                                                       ": not a JSON string: ",
                                                       input.status().message()));
      }
      absl::StatusOr<std::vector<text::TokenId>> ids = tokenizer.Encode(*input, encode);
      if (!ids.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(o.value, ":", line_number, ": ", ids.status().message()));
      }
      std::cout << '[' << JoinIds(*ids, ",") << "]\n";
    }
    return absl::OkStatus();
  }
  if (o.mode == "decode") {
    CORTIQ_ASSIGN_OR_RETURN(const std::vector<text::TokenId> ids,
                            ParseIds(o.value, tokenizer.vocab_size()));
    if (o.pieces) return PrintPieces(tokenizer, ids);
    text::DecodeOptions decode;
    decode.skip_special_tokens = o.skip_special;
    CORTIQ_ASSIGN_OR_RETURN(const std::string out, tokenizer.Decode(ids, decode));
    std::fwrite(out.data(), 1, out.size(), stdout);
    return absl::OkStatus();
  }
  // chat
  CORTIQ_ASSIGN_OR_RETURN(const std::string json, ReadFileToString(o.value, uint64_t{1} << 30));
  CORTIQ_ASSIGN_OR_RETURN(const std::vector<text::ChatMessage> messages,
                          ParseChatMessages(json, o.value));
  const text::ChatTemplateSpec& shipped = tokenizer.config().chat_template;
  if (!shipped.text.empty() && !text::IsGemma4ChatTemplate(shipped.text)) {
    std::cerr << "cortiq-tokenize: warning: the chat template of " << o.source << " ("
              << shipped.source << ") is not the Gemma 4 format; rendering the built-in Gemma 4 "
              << "format\n";
  }
  text::ChatOptions chat;
  chat.add_generation_prompt = o.add_generation_prompt;
  chat.enable_thinking = o.thinking;
  if (tokenizer.config().bos_id) {
    CORTIQ_ASSIGN_OR_RETURN(std::string_view bos, tokenizer.TokenString(*tokenizer.config().bos_id));
    chat.bos_token = std::string(bos);
  }
  CORTIQ_ASSIGN_OR_RETURN(const std::string prompt, text::RenderGemma4Chat(messages, chat));
  if (!o.ids && !o.pieces) {
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    return absl::OkStatus();
  }
  // The prompt already holds <bos>: encode it as apply_chat_template(tokenize=True) does,
  // without the post-processor.
  CORTIQ_ASSIGN_OR_RETURN(const std::vector<text::TokenId> ids, tokenizer.Encode(prompt));
  if (o.pieces) return PrintPieces(tokenizer, ids);
  std::cout << JoinIds(ids, ",") << '\n';
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  Flags flags("cortiq-tokenize", "SOURCE MODE [options]  (or -m SOURCE)",
              "Text to token ids and back with a model's own tokenizer, and the Gemma 4 chat "
              "format.");
  absl::StatusOr<Options> options = ParseArgs(argc, argv, flags);
  if (!options.ok()) {
    std::cerr << "cortiq-tokenize: " << options.status().message() << '\n';
    return 1;
  }
  const absl::Status status = Run(*options);
  std::cout.flush();
  if (!status.ok()) {
    std::cerr << "cortiq-tokenize: " << status.message() << '\n';
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) { return cortiq::Main(argc, argv); }
