// tokenizer.json → TokenizerSpec (see tokenizer_json.h).
#include "formats/tokenizer_json.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "formats/json_util.h"
#include "runtime/text/tokenizer_section.h"

namespace cortiq {
namespace {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;
using text::TokenId;

class Reader {
 public:
  explicit Reader(absl::string_view file) : file_(file) {}

  template <typename... Parts>
  absl::Status Error(absl::string_view field, const Parts&... parts) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ": ", field, ": ", parts...));
  }

  absl::StatusOr<std::string> String(const Object& o, absl::string_view field,
                                     absl::string_view where) const {
    const Value* v = o.get(llvm::StringRef(field.data(), field.size()));
    if (v == nullptr) return Error(absl::StrCat(where, ".", field), "missing");
    const llvm::Optional<llvm::StringRef> s = v->getAsString();
    if (!s) return Error(absl::StrCat(where, ".", field), "must be a string, got ", JsonKindName(*v));
    return s->str();
  }

  // An optional boolean (absent or null: `fallback`).
  absl::StatusOr<bool> Bool(const Object& o, absl::string_view field, absl::string_view where,
                            bool fallback) const {
    const Value* v = o.get(llvm::StringRef(field.data(), field.size()));
    if (v == nullptr || v->kind() == Value::Null) return fallback;
    const llvm::Optional<bool> b = v->getAsBoolean();
    if (!b) return Error(absl::StrCat(where, ".", field), "must be a boolean, got ", JsonKindName(*v));
    return *b;
  }

  absl::StatusOr<int64_t> Int(const Object& o, absl::string_view field,
                              absl::string_view where) const {
    const Value* v = o.get(llvm::StringRef(field.data(), field.size()));
    int64_t n = 0;
    if (v == nullptr) return Error(absl::StrCat(where, ".", field), "missing");
    if (!JsonToInt64(*v, &n)) {
      return Error(absl::StrCat(where, ".", field), "must be an integer, got ", JsonKindName(*v));
    }
    return n;
  }

  absl::StatusOr<std::string> Type(const Object& o, absl::string_view where) const {
    return String(o, "type", where);
  }

  absl::StatusOr<text::TextPattern> Pattern(const Object& o, absl::string_view where) const {
    const std::string field = absl::StrCat(where, ".pattern");
    const Value* v = o.get("pattern");
    if (v == nullptr) return Error(field, "missing");
    const Object* p = v->getAsObject();
    if (p == nullptr || p->size() != 1) {
      return Error(field, "must be {\"String\": ...} or {\"Regex\": ...}");
    }
    text::TextPattern pattern;
    if (const Value* s = p->get("String")) {
      pattern.kind = text::TextPattern::Kind::kString;
      if (!s->getAsString()) return Error(field, "String must be a string");
      pattern.text = s->getAsString()->str();
    } else if (const Value* r = p->get("Regex")) {
      pattern.kind = text::TextPattern::Kind::kRegex;
      if (!r->getAsString()) return Error(field, "Regex must be a string");
      pattern.text = r->getAsString()->str();
    } else {
      return Error(field, "must be {\"String\": ...} or {\"Regex\": ...}");
    }
    return pattern;
  }

  absl::StatusOr<text::NormalizerSpec> Normalizer(const Value& v, const std::string& where) const {
    const Object* o = v.getAsObject();
    if (o == nullptr) return Error(where, "must be an object, got ", JsonKindName(v));
    CORTIQ_ASSIGN_OR_RETURN(const std::string type, Type(*o, where));
    text::NormalizerSpec n;
    if (type == "Sequence") {
      n.type = text::NormalizerType::kSequence;
      const Value* list = o->get("normalizers");
      const Array* a = list ? list->getAsArray() : nullptr;
      if (a == nullptr) return Error(where + ".normalizers", "must be an array");
      for (size_t i = 0; i < a->size(); ++i) {
        CORTIQ_ASSIGN_OR_RETURN(text::NormalizerSpec child,
                                Normalizer((*a)[i], absl::StrCat(where, ".normalizers[", i, "]")));
        n.children.push_back(std::move(child));
      }
    } else if (type == "Replace") {
      n.type = text::NormalizerType::kReplace;
      CORTIQ_ASSIGN_OR_RETURN(n.pattern, Pattern(*o, where));
      CORTIQ_ASSIGN_OR_RETURN(n.content, String(*o, "content", where));
    } else if (type == "Prepend") {
      n.type = text::NormalizerType::kPrepend;
      CORTIQ_ASSIGN_OR_RETURN(n.content, String(*o, "prepend", where));
    } else if (type == "NFC") {
      n.type = text::NormalizerType::kNFC;
    } else if (type == "NFKC") {
      n.type = text::NormalizerType::kNFKC;
    } else if (type == "NFD") {
      n.type = text::NormalizerType::kNFD;
    } else if (type == "NFKD") {
      n.type = text::NormalizerType::kNFKD;
    } else {
      return Error(where, "type \"", type,
                   "\" is not supported (supported: Sequence, Replace, Prepend, NFC, NFKC, NFD, "
                   "NFKD)");
    }
    return n;
  }

  absl::StatusOr<text::PreTokenizerSpec> PreTokenizer(const Value& v,
                                                      const std::string& where) const {
    const Object* o = v.getAsObject();
    if (o == nullptr) return Error(where, "must be an object, got ", JsonKindName(v));
    CORTIQ_ASSIGN_OR_RETURN(const std::string type, Type(*o, where));
    text::PreTokenizerSpec p;
    if (type == "Sequence") {
      p.type = text::PreTokenizerType::kSequence;
      const Value* list = o->get("pretokenizers");
      const Array* a = list ? list->getAsArray() : nullptr;
      if (a == nullptr) return Error(where + ".pretokenizers", "must be an array");
      for (size_t i = 0; i < a->size(); ++i) {
        CORTIQ_ASSIGN_OR_RETURN(
            text::PreTokenizerSpec child,
            PreTokenizer((*a)[i], absl::StrCat(where, ".pretokenizers[", i, "]")));
        p.children.push_back(std::move(child));
      }
    } else if (type == "Split") {
      p.type = text::PreTokenizerType::kSplit;
      CORTIQ_ASSIGN_OR_RETURN(p.pattern, Pattern(*o, where));
      CORTIQ_ASSIGN_OR_RETURN(const std::string behavior, String(*o, "behavior", where));
      if (behavior == "Removed") {
        p.behavior = text::SplitBehavior::kRemoved;
      } else if (behavior == "Isolated") {
        p.behavior = text::SplitBehavior::kIsolated;
      } else if (behavior == "MergedWithPrevious") {
        p.behavior = text::SplitBehavior::kMergedWithPrevious;
      } else if (behavior == "MergedWithNext") {
        p.behavior = text::SplitBehavior::kMergedWithNext;
      } else if (behavior == "Contiguous") {
        p.behavior = text::SplitBehavior::kContiguous;
      } else {
        return Error(where + ".behavior", "\"", behavior,
                     "\" is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, "
                     "Contiguous");
      }
      CORTIQ_ASSIGN_OR_RETURN(p.invert, Bool(*o, "invert", where, false));
    } else if (type == "Metaspace") {
      p.type = text::PreTokenizerType::kMetaspace;
      CORTIQ_ASSIGN_OR_RETURN(p.replacement, String(*o, "replacement", where));
      CORTIQ_ASSIGN_OR_RETURN(p.split, Bool(*o, "split", where, true));
      if (o->get("prepend_scheme") != nullptr) {
        CORTIQ_ASSIGN_OR_RETURN(const std::string scheme, String(*o, "prepend_scheme", where));
        if (scheme == "always") {
          p.prepend_scheme = text::PrependScheme::kAlways;
        } else if (scheme == "first") {
          p.prepend_scheme = text::PrependScheme::kFirst;
        } else if (scheme == "never") {
          p.prepend_scheme = text::PrependScheme::kNever;
        } else {
          return Error(where + ".prepend_scheme", "\"", scheme,
                       "\" is not one of always, first, never");
        }
      } else {
        // Files before tokenizers 0.19 say add_prefix_space instead.
        CORTIQ_ASSIGN_OR_RETURN(const bool add, Bool(*o, "add_prefix_space", where, true));
        p.prepend_scheme = add ? text::PrependScheme::kAlways : text::PrependScheme::kNever;
      }
    } else {
      return Error(where, "type \"", type,
                   "\" is not supported (supported: Sequence, Split, Metaspace)");
    }
    return p;
  }

  absl::StatusOr<text::DecoderSpec> Decoder(const Value& v, const std::string& where) const {
    const Object* o = v.getAsObject();
    if (o == nullptr) return Error(where, "must be an object, got ", JsonKindName(v));
    CORTIQ_ASSIGN_OR_RETURN(const std::string type, Type(*o, where));
    text::DecoderSpec d;
    if (type == "Sequence") {
      d.type = text::DecoderType::kSequence;
      const Value* list = o->get("decoders");
      const Array* a = list ? list->getAsArray() : nullptr;
      if (a == nullptr) return Error(where + ".decoders", "must be an array");
      for (size_t i = 0; i < a->size(); ++i) {
        CORTIQ_ASSIGN_OR_RETURN(text::DecoderSpec child,
                                Decoder((*a)[i], absl::StrCat(where, ".decoders[", i, "]")));
        d.children.push_back(std::move(child));
      }
    } else if (type == "Replace") {
      d.type = text::DecoderType::kReplace;
      CORTIQ_ASSIGN_OR_RETURN(d.pattern, Pattern(*o, where));
      CORTIQ_ASSIGN_OR_RETURN(d.content, String(*o, "content", where));
    } else if (type == "ByteFallback") {
      d.type = text::DecoderType::kByteFallback;
    } else if (type == "Fuse") {
      d.type = text::DecoderType::kFuse;
    } else if (type == "Strip") {
      d.type = text::DecoderType::kStrip;
      CORTIQ_ASSIGN_OR_RETURN(d.content, String(*o, "content", where));
      CORTIQ_ASSIGN_OR_RETURN(const int64_t start, Int(*o, "start", where));
      CORTIQ_ASSIGN_OR_RETURN(const int64_t stop, Int(*o, "stop", where));
      if (start < 0 || stop < 0 || start > (1 << 20) || stop > (1 << 20)) {
        return Error(where, "start/stop out of range");
      }
      d.start = static_cast<uint32_t>(start);
      d.stop = static_cast<uint32_t>(stop);
    } else {
      return Error(where, "type \"", type,
                   "\" is not supported (supported: Sequence, Replace, ByteFallback, Fuse, Strip)");
    }
    return d;
  }

 private:
  std::string file_;
};

// The merge pair spelled "a b" (exactly one space, as tokenizers' convert_merges_to_hashmap
// requires) or ["a", "b"].
absl::Status ParseMerge(const Reader& r, const JsonElement& e, std::string* a, std::string* b) {
  const std::string field = absl::StrCat("model.merges[", e.index, "]");
  const absl::string_view v = e.value;
  if (!v.empty() && v.front() == '"') {
    absl::StatusOr<std::string> s = ParseJsonString(v);
    if (!s.ok()) return r.Error(field, s.status().message());
    const size_t space = s->find(' ');
    if (space == std::string::npos || s->find(' ', space + 1) != std::string::npos) {
      return r.Error(field, "\"", *s, "\" is not two pieces separated by one space");
    }
    *a = s->substr(0, space);
    *b = s->substr(space + 1);
    return absl::OkStatus();
  }
  if (!v.empty() && v.front() == '[') {
    // ["a", "b"]: two string literals.
    std::vector<std::string> parts;
    size_t i = 1;
    while (true) {
      while (i < v.size() && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r')) ++i;
      if (i < v.size() && v[i] == ']' && parts.empty()) break;
      if (i >= v.size() || v[i] != '"') return r.Error(field, "must be two strings");
      const size_t start = i;
      for (++i; i < v.size() && v[i] != '"'; ++i) {
        if (v[i] == '\\') ++i;
      }
      if (i >= v.size()) return r.Error(field, "unterminated string");
      ++i;
      absl::StatusOr<std::string> s = ParseJsonString(v.substr(start, i - start));
      if (!s.ok()) return r.Error(field, s.status().message());
      parts.push_back(*std::move(s));
      while (i < v.size() && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r')) ++i;
      if (i < v.size() && v[i] == ',') {
        ++i;
        continue;
      }
      if (i < v.size() && v[i] == ']' && i + 1 == v.size()) break;
      return r.Error(field, "malformed pair");
    }
    if (parts.size() != 2) return r.Error(field, "must be two strings, got ", parts.size());
    *a = std::move(parts[0]);
    *b = std::move(parts[1]);
    return absl::OkStatus();
  }
  return r.Error(field, "must be a string \"a b\" or a pair [\"a\", \"b\"]");
}

// A non-negative JSON integer literal below kMaxTokenizerVocab.
bool ParseVocabId(absl::string_view v, int64_t* id) {
  if (v.empty() || v.size() > 10) return false;
  int64_t n = 0;
  for (const char c : v) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  if (v.size() > 1 && v[0] == '0') return false;
  *id = n;
  return n < text::kMaxTokenizerVocab;
}

}  // namespace

absl::StatusOr<text::TokenizerSpec> ParseTokenizerJson(absl::string_view json,
                                                       absl::string_view file_name) {
  const Reader r(file_name);
  text::TokenizerSpec spec;
  spec.source = std::string(file_name);
  absl::string_view model_text, added_text;
  Value normalizer = nullptr, pre_tokenizer = nullptr, post_processor = nullptr, decoder = nullptr;
  bool has_model = false;
  CORTIQ_RETURN_IF_ERROR(ForEachJsonMember(
      json, file_name, "tokenizer.json", 64, [&](const JsonMember& m) -> absl::Status {
        if (m.key == "model") {
          model_text = m.value;
          has_model = true;
          return absl::OkStatus();
        }
        if (m.key == "added_tokens") {
          added_text = m.value;
          return absl::OkStatus();
        }
        Value* target = nullptr;
        if (m.key == "normalizer") target = &normalizer;
        if (m.key == "pre_tokenizer") target = &pre_tokenizer;
        if (m.key == "post_processor") target = &post_processor;
        if (m.key == "decoder") target = &decoder;
        if (m.key == "truncation" || m.key == "padding") {
          if (m.value != "null") {
            return r.Error(m.key, "must be null: truncation and padding are not supported");
          }
          return absl::OkStatus();
        }
        if (target == nullptr) return absl::OkStatus();  // "version" and unknown keys
        CORTIQ_ASSIGN_OR_RETURN(*target, ParseJson(m.value, file_name));
        return absl::OkStatus();
      }));
  if (!has_model) return r.Error("model", "missing");

  // The model: small members through llvm::json, vocab and merges walked.
  absl::string_view vocab_text, merges_text;
  Object model_small;
  CORTIQ_RETURN_IF_ERROR(ForEachJsonMember(
      model_text, file_name, "model", 64, [&](const JsonMember& m) -> absl::Status {
        if (m.key == "vocab") {
          vocab_text = m.value;
        } else if (m.key == "merges") {
          merges_text = m.value;
        } else {
          CORTIQ_ASSIGN_OR_RETURN(Value v, ParseJson(m.value, file_name));
          model_small[m.key] = std::move(v);
        }
        return absl::OkStatus();
      }));
  if (const Value* type = model_small.get("type")) {
    if (!type->getAsString() || *type->getAsString() != "BPE") {
      return r.Error("model.type",
                     type->getAsString() ? absl::StrCat("\"", type->getAsString()->str(), "\"")
                                         : std::string(JsonKindName(*type)),
                     " is not supported (supported: BPE)");
    }
  } else if (merges_text.empty()) {
    return r.Error("model", "has no type and no merges (only BPE models are supported)");
  }
  if (const Value* dropout = model_small.get("dropout")) {
    const llvm::Optional<double> d = dropout->getAsNumber();
    if (dropout->kind() != Value::Null && !(d && *d == 0.0)) {
      return r.Error("model.dropout", "must be null or 0 (BPE dropout is not supported)");
    }
  }
  CORTIQ_ASSIGN_OR_RETURN(spec.model.fuse_unk, r.Bool(model_small, "fuse_unk", "model", false));
  CORTIQ_ASSIGN_OR_RETURN(spec.model.byte_fallback,
                          r.Bool(model_small, "byte_fallback", "model", false));
  CORTIQ_ASSIGN_OR_RETURN(spec.model.ignore_merges,
                          r.Bool(model_small, "ignore_merges", "model", false));
  const auto optional_string = [&](const char* field, std::string* out) -> absl::Status {
    const Value* v = model_small.get(field);
    if (v == nullptr || v->kind() == Value::Null) return absl::OkStatus();
    if (!v->getAsString()) return r.Error(absl::StrCat("model.", field), "must be a string or null");
    *out = v->getAsString()->str();
    return absl::OkStatus();
  };
  std::string unk_token;
  CORTIQ_RETURN_IF_ERROR(optional_string("unk_token", &unk_token));
  CORTIQ_RETURN_IF_ERROR(
      optional_string("continuing_subword_prefix", &spec.model.continuing_subword_prefix));
  CORTIQ_RETURN_IF_ERROR(optional_string("end_of_word_suffix", &spec.model.end_of_word_suffix));

  // Vocabulary.
  if (vocab_text.empty()) return r.Error("model.vocab", "missing");
  absl::flat_hash_map<std::string, TokenId> vocab;
  std::vector<std::pair<TokenId, std::string>> entries;
  CORTIQ_RETURN_IF_ERROR(ForEachJsonMember(
      vocab_text, file_name, "model.vocab", text::kMaxTokenizerVocab,
      [&](const JsonMember& m) -> absl::Status {
        int64_t id = 0;
        if (!ParseVocabId(m.value, &id)) {
          return r.Error("model.vocab", "the id of \"", m.key, "\" (", m.value,
                         ") is not an integer in [0, ", text::kMaxTokenizerVocab, ")");
        }
        vocab.emplace(m.key, static_cast<TokenId>(id));
        entries.emplace_back(static_cast<TokenId>(id), m.key);
        return absl::OkStatus();
      }));
  TokenId max_id = -1;
  for (const auto& [id, piece] : entries) max_id = std::max(max_id, id);

  // Added tokens.
  std::vector<text::AddedTokenSpec> added;
  if (!added_text.empty() && added_text != "null") {
    // Thousands of small objects (Gemma: 6415): one ParseJson each, not one tree for all.
    CORTIQ_RETURN_IF_ERROR(ForEachJsonElement(
        added_text, file_name, "added_tokens", text::kMaxTokenizerVocab,
        [&](const JsonElement& e) -> absl::Status {
          const std::string where = absl::StrCat("added_tokens[", e.index, "]");
          CORTIQ_ASSIGN_OR_RETURN(const Value v, ParseJson(e.value, file_name));
          const Object* o = v.getAsObject();
          if (o == nullptr) return r.Error(where, "must be an object");
          text::AddedTokenSpec t;
          CORTIQ_ASSIGN_OR_RETURN(const int64_t id, r.Int(*o, "id", where));
          if (id < 0 || id >= text::kMaxTokenizerVocab) {
            return r.Error(where + ".id", id, " is out of range [0, ", text::kMaxTokenizerVocab,
                           ")");
          }
          t.id = static_cast<TokenId>(id);
          CORTIQ_ASSIGN_OR_RETURN(t.content, r.String(*o, "content", where));
          if (t.content.empty()) return r.Error(where + ".content", "is empty");
          CORTIQ_ASSIGN_OR_RETURN(t.special, r.Bool(*o, "special", where, false));
          CORTIQ_ASSIGN_OR_RETURN(t.single_word, r.Bool(*o, "single_word", where, false));
          CORTIQ_ASSIGN_OR_RETURN(t.lstrip, r.Bool(*o, "lstrip", where, false));
          CORTIQ_ASSIGN_OR_RETURN(t.rstrip, r.Bool(*o, "rstrip", where, false));
          CORTIQ_ASSIGN_OR_RETURN(t.normalized, r.Bool(*o, "normalized", where, !t.special));
          max_id = std::max(max_id, t.id);
          added.push_back(std::move(t));
          return absl::OkStatus();
        }));
  }
  // Two added tokens of one id would encode to it from two texts and decode it as either:
  // HF's AddedVocabulary keeps whichever came last, so refuse the file rather than guess.
  {
    absl::flat_hash_map<TokenId, size_t> first_with_id;
    for (size_t i = 0; i < added.size(); ++i) {
      const auto [it, inserted] = first_with_id.emplace(added[i].id, i);
      if (!inserted && added[it->second].content != added[i].content) {
        return r.Error(absl::StrCat("added_tokens[", i, "].id"), added[i].id,
                       " is also the id of added_tokens[", it->second, "] \"",
                       added[it->second].content, "\" (this one is \"", added[i].content,
                       "\")");
      }
    }
  }
  if (max_id < 0) return r.Error("model.vocab", "is empty");
  // Ids index a table: a few pieces with huge ids would make a small file allocate gigabytes.
  // Real vocabularies are dense (Gemma: 262,144 pieces for ids 0..262,143, one added id above).
  const size_t named = entries.size() + added.size();
  if (static_cast<size_t>(max_id) >= 2 * named + 1024) {
    return r.Error("model.vocab", "the largest id ", max_id, " is far beyond the ", named,
                   " tokens named (ids must be nearly dense)");
  }
  spec.tokens.resize(static_cast<size_t>(max_id) + 1);
  for (auto& [id, piece] : entries) {
    text::TokenEntry& e = spec.tokens[id];
    if (e.in_model) {
      return r.Error("model.vocab", "id ", id, " is given to both \"", e.piece, "\" and \"", piece,
                     "\"");
    }
    e.in_model = true;
    e.piece = std::move(piece);
  }
  entries.clear();
  for (const text::AddedTokenSpec& t : added) {
    if (!spec.tokens[t.id].in_model && spec.tokens[t.id].piece.empty()) {
      spec.tokens[t.id].piece = t.content;
    }
  }
  spec.added_tokens = std::move(added);
  if (!unk_token.empty()) {
    const auto it = vocab.find(unk_token);
    if (it == vocab.end()) {
      return r.Error("model.unk_token", "\"", unk_token, "\" is not in the vocabulary");
    }
    spec.model.unk_id = it->second;
  }

  // Merges. tokenizers collects them into a map, so a repeated pair keeps its last rank.
  if (!merges_text.empty() && merges_text != "null") {
    const size_t prefix_len = spec.model.continuing_subword_prefix.size();
    absl::flat_hash_map<std::pair<TokenId, TokenId>, size_t> pair_index;
    std::string a, b;
    CORTIQ_RETURN_IF_ERROR(ForEachJsonElement(
        merges_text, file_name, "model.merges", text::kMaxTokenizerMerges,
        [&](const JsonElement& e) -> absl::Status {
          CORTIQ_RETURN_IF_ERROR(ParseMerge(r, e, &a, &b));
          const std::string field = absl::StrCat("model.merges[", e.index, "]");
          const auto ia = vocab.find(a);
          if (ia == vocab.end()) return r.Error(field, "unknown piece \"", a, "\"");
          const auto ib = vocab.find(b);
          if (ib == vocab.end()) return r.Error(field, "unknown piece \"", b, "\"");
          if (b.size() < prefix_len) {
            return r.Error(field, "\"", b, "\" is shorter than continuing_subword_prefix");
          }
          const std::string merged = a + b.substr(prefix_len);
          const auto im = vocab.find(merged);
          if (im == vocab.end()) {
            return r.Error(field, "the merged piece \"", merged, "\" is not in the vocabulary");
          }
          const text::BpeMerge merge{ia->second, ib->second, im->second,
                                     static_cast<uint32_t>(e.index)};
          const auto [it, inserted] = pair_index.emplace(std::make_pair(merge.left, merge.right),
                                                         spec.model.merges.size());
          if (inserted) {
            spec.model.merges.push_back(merge);
          } else {
            spec.model.merges[it->second] = merge;
          }
          return absl::OkStatus();
        }));
  }

  // Components.
  if (normalizer.kind() != Value::Null) {
    CORTIQ_ASSIGN_OR_RETURN(spec.normalizer, r.Normalizer(normalizer, "normalizer"));
  }
  if (pre_tokenizer.kind() != Value::Null) {
    CORTIQ_ASSIGN_OR_RETURN(spec.pre_tokenizer, r.PreTokenizer(pre_tokenizer, "pre_tokenizer"));
  }
  if (decoder.kind() != Value::Null) {
    CORTIQ_ASSIGN_OR_RETURN(spec.decoder, r.Decoder(decoder, "decoder"));
  }
  if (post_processor.kind() != Value::Null) {
    const Object* o = post_processor.getAsObject();
    if (o == nullptr) return r.Error("post_processor", "must be an object");
    CORTIQ_ASSIGN_OR_RETURN(const std::string type, r.Type(*o, "post_processor"));
    if (type != "TemplateProcessing") {
      return r.Error("post_processor", "type \"", type,
                     "\" is not supported (supported: TemplateProcessing)");
    }
    // special_tokens: name → ids.
    absl::flat_hash_map<std::string, std::vector<TokenId>> specials;
    if (const Value* sv = o->get("special_tokens")) {
      const Object* so = sv->getAsObject();
      if (so == nullptr) return r.Error("post_processor.special_tokens", "must be an object");
      for (const auto& [name, value] : *so) {
        const std::string where = absl::StrCat("post_processor.special_tokens.", name.str());
        const Object* to = value.getAsObject();
        const Value* ids = to ? to->get("ids") : nullptr;
        const Array* ia = ids ? ids->getAsArray() : nullptr;
        if (ia == nullptr) return r.Error(where, "must have an ids array");
        std::vector<TokenId> list;
        for (const Value& idv : *ia) {
          int64_t id = 0;
          if (!JsonToInt64(idv, &id) || id < 0 || id >= static_cast<int64_t>(spec.tokens.size())) {
            return r.Error(where + ".ids", "an id is not a token id in range");
          }
          list.push_back(static_cast<TokenId>(id));
        }
        specials[name.str()] = std::move(list);
      }
    }
    const Value* single = o->get("single");
    const Array* sa = single ? single->getAsArray() : nullptr;
    if (sa == nullptr) return r.Error("post_processor.single", "must be an array");
    for (size_t i = 0; i < sa->size(); ++i) {
      const std::string where = absl::StrCat("post_processor.single[", i, "]");
      const Object* item = (*sa)[i].getAsObject();
      if (item == nullptr || item->size() != 1) {
        return r.Error(where, "must be {\"SpecialToken\": ...} or {\"Sequence\": ...}");
      }
      text::TemplateItem t;
      if (const Value* seq = item->get("Sequence")) {
        (void)seq;
        t.is_sequence = true;
      } else if (const Value* st = item->get("SpecialToken")) {
        const Object* so = st->getAsObject();
        if (so == nullptr) return r.Error(where, "SpecialToken must be an object");
        CORTIQ_ASSIGN_OR_RETURN(const std::string id, r.String(*so, "id", where + ".SpecialToken"));
        const auto it = specials.find(id);
        if (it == specials.end()) {
          return r.Error(where, "special token \"", id, "\" is not in special_tokens");
        }
        t.ids = it->second;
      } else {
        return r.Error(where, "must be {\"SpecialToken\": ...} or {\"Sequence\": ...}");
      }
      spec.post_processor.single.push_back(std::move(t));
    }
    // The first special token of the template is the sequence start (Gemma: <bos>).
    for (const text::TemplateItem& t : spec.post_processor.single) {
      if (t.is_sequence) break;
      if (t.ids.size() == 1) {
        spec.bos_id = t.ids[0];
        break;
      }
    }
  }
  return spec;
}

absl::StatusOr<text::TokenizerSpec> ReadTokenizerJson(const std::string& path) {
  CORTIQ_ASSIGN_OR_RETURN(const std::string json, ReadFileToString(path, kMaxTokenizerJsonBytes));
  return ParseTokenizerJson(json, path);
}

}  // namespace cortiq
