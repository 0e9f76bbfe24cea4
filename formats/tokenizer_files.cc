// Checkpoint tokenizer files (see tokenizer_files.h).
#include "formats/tokenizer_files.h"

#include <cstring>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "formats/gguf.h"
#include "formats/gguf_tokenizer.h"
#include "formats/json_util.h"
#include "formats/tokenizer_json.h"

namespace cortiq {
namespace {

using llvm::json::Object;
using llvm::json::Value;
using text::TokenId;

// Side files are small: 64 MiB (a tokenizer_config.json with 6415 added tokens is ~1 MB).
constexpr uint64_t kMaxSideFileBytes = uint64_t{64} << 20;

// The id of token string `token` in `spec` (added tokens first, then the vocabulary).
std::optional<TokenId> FindToken(const text::TokenizerSpec& spec, const std::string& token) {
  for (const text::AddedTokenSpec& t : spec.added_tokens) {
    if (t.content == token) return t.id;
  }
  for (size_t i = 0; i < spec.tokens.size(); ++i) {
    if (spec.tokens[i].in_model && spec.tokens[i].piece == token) return static_cast<TokenId>(i);
  }
  return std::nullopt;
}

}  // namespace

absl::Status ApplyTokenizerConfig(absl::string_view config_json, absl::string_view file_name,
                                  text::TokenizerSpec* spec) {
  // Only a few members are read; added_tokens_decoder (thousands of objects for Gemma) is skipped
  // without being parsed into a tree.
  Object members;
  CORTIQ_RETURN_IF_ERROR(ForEachJsonMember(
      config_json, file_name, "tokenizer_config.json", 1 << 20,
      [&](const JsonMember& m) -> absl::Status {
        static const char* const kRead[] = {"bos_token",     "eos_token",     "pad_token",
                                            "add_bos_token", "add_eos_token", "chat_template"};
        for (const char* key : kRead) {
          if (m.key == key) {
            CORTIQ_ASSIGN_OR_RETURN(Value v, ParseJson(m.value, file_name));
            members[m.key] = std::move(v);
          }
        }
        return absl::OkStatus();
      }));
  const Object* o = &members;
  const auto error = [&](absl::string_view field, auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", field, ": ", parts...));
  };
  // A token given as a string or as an AddedToken object {"content": ...}.
  const auto token_id = [&](const char* field) -> absl::StatusOr<std::optional<TokenId>> {
    const Value* v = o->get(field);
    if (v == nullptr || v->kind() == Value::Null) return std::optional<TokenId>();
    std::string token;
    if (v->getAsString()) {
      token = v->getAsString()->str();
    } else if (const Object* t = v->getAsObject();
               t != nullptr && t->get("content") && t->get("content")->getAsString()) {
      token = t->get("content")->getAsString()->str();
    } else {
      return error(field, "must be a string or {\"content\": ...}");
    }
    const std::optional<TokenId> id = FindToken(*spec, token);
    if (!id) return error(field, "\"", token, "\" is not a token of the tokenizer");
    return id;
  };
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<TokenId> bos, token_id("bos_token"));
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<TokenId> eos, token_id("eos_token"));
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<TokenId> pad, token_id("pad_token"));
  if (bos) spec->bos_id = bos;
  if (eos) spec->eos_id = eos;
  if (pad) spec->pad_id = pad;
  const auto flag = [&](const char* field) -> absl::StatusOr<std::optional<bool>> {
    const Value* v = o->get(field);
    if (v == nullptr || v->kind() == Value::Null) return std::optional<bool>();
    if (!v->getAsBoolean()) return error(field, "must be a boolean");
    return std::optional<bool>(*v->getAsBoolean());
  };
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<bool> add_bos, flag("add_bos_token"));
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<bool> add_eos, flag("add_eos_token"));
  if (add_bos || add_eos) {
    // transformers' GemmaTokenizerFast.update_post_processor: bos? $A eos?
    const bool with_bos = add_bos.value_or(false) && spec->bos_id;
    const bool with_eos = add_eos.value_or(false) && spec->eos_id;
    spec->post_processor.single.clear();
    if (with_bos || with_eos) {
      if (with_bos) spec->post_processor.single.push_back({false, {*spec->bos_id}});
      spec->post_processor.single.push_back({true, {}});
      if (with_eos) spec->post_processor.single.push_back({false, {*spec->eos_id}});
    }
  }
  if (const Value* t = o->get("chat_template")) {
    if (t->getAsString()) {
      spec->chat_template = {t->getAsString()->str(), "tokenizer_config.json"};
    } else if (const llvm::json::Array* list = t->getAsArray()) {
      for (const Value& entry : *list) {
        const Object* e = entry.getAsObject();
        if (e && e->getString("name") && *e->getString("name") == "default" &&
            e->getString("template")) {
          spec->chat_template = {e->getString("template")->str(), "tokenizer_config.json"};
        }
      }
    } else if (t->kind() != Value::Null) {
      return error("chat_template", "must be a string or a list of {name, template}");
    }
  }
  if (spec->generation.eos_token_ids.empty() && spec->eos_id) {
    spec->generation.eos_token_ids.push_back(*spec->eos_id);
  }
  return absl::OkStatus();
}

absl::Status ApplyGenerationConfig(absl::string_view config_json, absl::string_view file_name,
                                   text::TokenizerSpec* spec) {
  CORTIQ_ASSIGN_OR_RETURN(const Value root, ParseJson(config_json, file_name));
  const Object* o = root.getAsObject();
  const auto error = [&](absl::string_view field, auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", field, ": ", parts...));
  };
  if (o == nullptr) return error("(root)", "must be an object");
  const auto id_in_range = [&](const Value& v, TokenId* id) {
    int64_t n = 0;
    if (!JsonToInt64(v, &n) || n < 0 || static_cast<uint64_t>(n) >= spec->tokens.size()) {
      return false;
    }
    *id = static_cast<TokenId>(n);
    return true;
  };
  if (const Value* eos = o->get("eos_token_id"); eos && eos->kind() != Value::Null) {
    std::vector<TokenId> ids;
    TokenId id = 0;
    if (const llvm::json::Array* list = eos->getAsArray()) {
      for (const Value& v : *list) {
        if (!id_in_range(v, &id)) {
          return error("eos_token_id", "an entry is not a token id in [0, ", spec->tokens.size(),
                       ")");
        }
        ids.push_back(id);
      }
    } else if (id_in_range(*eos, &id)) {
      ids.push_back(id);
    } else {
      return error("eos_token_id", "must be a token id or a list of them");
    }
    spec->generation.eos_token_ids = std::move(ids);
  }
  const auto number = [&](const char* field) -> absl::StatusOr<std::optional<double>> {
    const Value* v = o->get(field);
    if (v == nullptr || v->kind() == Value::Null) return std::optional<double>();
    if (!v->getAsNumber()) return error(field, "must be a number, got ", JsonKindName(*v));
    return std::optional<double>(*v->getAsNumber());
  };
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<double> temperature, number("temperature"));
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<double> top_p, number("top_p"));
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<double> top_k, number("top_k"));
  if (temperature) {
    if (!(*temperature >= 0)) return error("temperature", "must be >= 0");
    spec->generation.temperature = static_cast<float>(*temperature);
  }
  if (top_p) {
    if (!(*top_p >= 0 && *top_p <= 1)) return error("top_p", "must be in [0, 1]");
    spec->generation.top_p = static_cast<float>(*top_p);
  }
  if (top_k) {
    if (!(*top_k >= 0 && *top_k <= 1e9) || *top_k != static_cast<int64_t>(*top_k)) {
      return error("top_k", "must be a non-negative integer");
    }
    spec->generation.top_k = static_cast<int32_t>(*top_k);
  }
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<double> min_p, number("min_p"));
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<double> typical_p, number("typical_p"));
  CORTIQ_ASSIGN_OR_RETURN(const std::optional<double> repetition_penalty,
                          number("repetition_penalty"));
  if (min_p) {
    if (!(*min_p >= 0 && *min_p <= 1)) return error("min_p", "must be in [0, 1]");
    spec->generation.min_p = static_cast<float>(*min_p);
  }
  if (typical_p) {
    if (!(*typical_p > 0 && *typical_p <= 1)) return error("typical_p", "must be in (0, 1]");
    spec->generation.typical_p = static_cast<float>(*typical_p);
  }
  if (repetition_penalty) {
    if (!(*repetition_penalty > 0 && *repetition_penalty < 1e9)) {
      return error("repetition_penalty", "must be > 0");
    }
    spec->generation.repetition_penalty = static_cast<float>(*repetition_penalty);
  }
  if (const Value* v = o->get("do_sample"); v && v->kind() != Value::Null) {
    if (!v->getAsBoolean()) return error("do_sample", "must be a boolean");
    spec->generation.do_sample = *v->getAsBoolean();
  }
  return absl::OkStatus();
}

absl::StatusOr<text::TokenizerSpec> ReadCheckpointTokenizer(const std::string& dir) {
  const std::string tokenizer_json = JoinPath(dir, "tokenizer.json");
  if (!IsRegularFile(tokenizer_json)) {
    return absl::NotFoundError(absl::StrCat(dir, ": no tokenizer.json in the checkpoint directory"));
  }
  CORTIQ_ASSIGN_OR_RETURN(text::TokenizerSpec spec, ReadTokenizerJson(tokenizer_json));
  const std::string generation = JoinPath(dir, "generation_config.json");
  if (IsRegularFile(generation)) {
    CORTIQ_ASSIGN_OR_RETURN(const std::string json, ReadFileToString(generation, kMaxSideFileBytes));
    CORTIQ_RETURN_IF_ERROR(ApplyGenerationConfig(json, generation, &spec));
  }
  const std::string config = JoinPath(dir, "tokenizer_config.json");
  if (IsRegularFile(config)) {
    CORTIQ_ASSIGN_OR_RETURN(const std::string json, ReadFileToString(config, kMaxSideFileBytes));
    CORTIQ_RETURN_IF_ERROR(ApplyTokenizerConfig(json, config, &spec));
  }
  const std::string jinja = JoinPath(dir, "chat_template.jinja");
  if (IsRegularFile(jinja)) {
    CORTIQ_ASSIGN_OR_RETURN(std::string text, ReadFileToString(jinja, kMaxSideFileBytes));
    spec.chat_template = {std::move(text), "chat_template.jinja"};
  }
  return spec;
}

absl::StatusOr<text::TokenizerSpec> ReadTokenizerSpec(const std::string& path) {
  if (IsDirectory(path)) return ReadCheckpointTokenizer(path);
  CORTIQ_ASSIGN_OR_RETURN(ReadOnlyFile file, ReadOnlyFile::Open(path));
  char magic[4] = {0};
  if (file.size() >= 4) CORTIQ_RETURN_IF_ERROR(file.ReadAt(0, 4, magic));
  if (std::memcmp(magic, "GGUF", 4) == 0) {
    CORTIQ_ASSIGN_OR_RETURN(const GgufFile gguf, GgufFile::Open(path, /*map_data=*/false));
    return ReadGgufTokenizer(gguf);
  }
  return ReadTokenizerJson(path);
}

absl::StatusOr<std::optional<text::TokenizerSpec>> ReadShippedTokenizer(
    const std::string& checkpoint) {
  if (IsDirectory(checkpoint)) {
    if (!IsRegularFile(JoinPath(checkpoint, "tokenizer.json"))) return std::nullopt;
    CORTIQ_ASSIGN_OR_RETURN(text::TokenizerSpec spec, ReadCheckpointTokenizer(checkpoint));
    return std::optional<text::TokenizerSpec>(std::move(spec));
  }
  CORTIQ_ASSIGN_OR_RETURN(ReadOnlyFile file, ReadOnlyFile::Open(checkpoint));
  char magic[4] = {0};
  if (file.size() >= 4) CORTIQ_RETURN_IF_ERROR(file.ReadAt(0, 4, magic));
  if (std::memcmp(magic, "GGUF", 4) != 0) return std::nullopt;
  CORTIQ_ASSIGN_OR_RETURN(const GgufFile gguf, GgufFile::Open(checkpoint, /*map_data=*/false));
  if (gguf.FindValue("tokenizer.ggml.model") == nullptr) return std::nullopt;
  CORTIQ_ASSIGN_OR_RETURN(text::TokenizerSpec spec, ReadGgufTokenizer(gguf));
  return std::optional<text::TokenizerSpec>(std::move(spec));
}

}  // namespace cortiq
