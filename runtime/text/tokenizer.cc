// Tokenizer pipeline and stream decoder (see tokenizer.h).
#include "runtime/text/tokenizer.h"

#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/text/added_tokens.h"
#include "runtime/text/string_view_compat.h"
#include "runtime/text/unicode.h"

namespace cortiq::text {

Tokenizer::Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

absl::StatusOr<Tokenizer> Tokenizer::FromSection(absl::Span<const uint8_t> bytes) {
  Tokenizer t;
  CORTIQ_ASSIGN_OR_RETURN(TokenizerSection s, TokenizerSection::Load(bytes));
  t.section_ = std::make_unique<TokenizerSection>(std::move(s));
  CORTIQ_RETURN_IF_ERROR(t.Init());
  return t;
}

absl::StatusOr<Tokenizer> Tokenizer::FromOwnedSection(std::vector<uint8_t> bytes) {
  Tokenizer t;
  t.owned_ = std::move(bytes);
  CORTIQ_ASSIGN_OR_RETURN(TokenizerSection s, TokenizerSection::Load(t.owned_));
  t.section_ = std::make_unique<TokenizerSection>(std::move(s));
  CORTIQ_RETURN_IF_ERROR(t.Init());
  return t;
}

absl::StatusOr<Tokenizer> Tokenizer::FromSpec(const TokenizerSpec& spec) {
  CORTIQ_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, SerializeTokenizerSection(spec));
  return FromOwnedSection(std::move(bytes));
}

absl::Status Tokenizer::Init() {
  const TokenizerConfig& c = section_->config();
  const auto named = [&](const char* what, const absl::Status& s) {
    return absl::InvalidArgumentError(absl::StrCat(c.source, ": ", what, ": ", s.message()));
  };
  if (c.normalizer) {
    absl::StatusOr<Normalizer> n = Normalizer::Create(*c.normalizer);
    if (!n.ok()) return named("normalizer", n.status());
    normalizer_.emplace(*std::move(n));
  }
  if (c.pre_tokenizer) {
    absl::StatusOr<PreTokenizer> p = PreTokenizer::Create(*c.pre_tokenizer);
    if (!p.ok()) return named("pre_tokenizer", p.status());
    pre_tokenizer_.emplace(*std::move(p));
  }
  if (c.decoder) {
    absl::StatusOr<Decoder> d = Decoder::Create(*c.decoder);
    if (!d.ok()) return named("decoder", d.status());
    decoder_.emplace(*std::move(d));
  }
  if (c.model_type == ModelType::kSpm) {
    spm_ = std::make_unique<SpmModel>(section_.get());
  } else {
    model_ = std::make_unique<BpeModel>(section_.get());
  }
  const absl::Span<const AddedTokenEntry> added = section_->added_tokens();
  added_by_id_.reserve(added.size());
  for (uint32_t i = 0; i < added.size(); ++i) {
    added_by_id_.emplace(static_cast<TokenId>(added[i].id), i);  // first wins
    added_by_content_.emplace(std::string(section_->AddedContent(added[i])),
                              static_cast<TokenId>(added[i].id));
  }
  return absl::OkStatus();
}

absl::Status Tokenizer::EncodePlain(std::string_view text, bool at_start,
                                    std::vector<TokenId>* out) const {
  std::string normalized;
  if (normalizer_) {
    CORTIQ_ASSIGN_OR_RETURN(normalized, normalizer_->Apply(text));
  } else {
    normalized.assign(text);
  }
  if (normalized.empty()) return absl::OkStatus();
  for (const AddedSplit& split :
       SplitOnAddedTokens(*section_, section_->normalized_trie(), normalized)) {
    if (split.added_index >= 0) {
      out->push_back(static_cast<TokenId>(section_->added_tokens()[split.added_index].id));
      continue;
    }
    const std::string_view piece =
        std::string_view(normalized).substr(split.start, split.end - split.start);
    if (!pre_tokenizer_) {
      TokenizeWord(piece, out);
      continue;
    }
    std::vector<PreToken> words;
    words.push_back(PreToken{std::string(piece), at_start && split.start == 0});
    CORTIQ_RETURN_IF_ERROR(pre_tokenizer_->Apply(&words));
    for (const PreToken& word : words) TokenizeWord(word.text, out);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TokenId>> Tokenizer::Encode(std::string_view text,
                                                       const EncodeOptions& options) const {
  const size_t bad = FindInvalidUtf8(text);
  if (bad != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("text is not valid UTF-8 at byte ", bad));
  }
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3 + 4);
  for (const AddedSplit& split : SplitOnAddedTokens(*section_, section_->raw_trie(), text)) {
    if (split.added_index >= 0) {
      ids.push_back(static_cast<TokenId>(section_->added_tokens()[split.added_index].id));
    } else {
      CORTIQ_RETURN_IF_ERROR(
          EncodePlain(text.substr(split.start, split.end - split.start), split.start == 0, &ids));
    }
  }
  const std::vector<TemplateItem>& single = section_->config().post_processor.single;
  if (!options.add_special_tokens || single.empty()) return ids;
  std::vector<TokenId> out;
  out.reserve(ids.size() + 4);
  for (const TemplateItem& item : single) {
    if (item.is_sequence) {
      out.insert(out.end(), ids.begin(), ids.end());
    } else {
      out.insert(out.end(), item.ids.begin(), item.ids.end());
    }
  }
  return out;
}

absl::StatusOr<std::string_view> Tokenizer::TokenString(TokenId id) const {
  if (id < 0 || static_cast<uint32_t>(id) >= section_->vocab_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("token id ", id, " is out of range [0, ", section_->vocab_size(), ")"));
  }
  if (section_->flags(id) & kTokenAdded) {
    const auto it = added_by_id_.find(id);
    if (it != added_by_id_.end()) return section_->AddedContent(section_->added_tokens()[it->second]);
  }
  return section_->Piece(id);
}

std::optional<TokenId> Tokenizer::TokenToId(std::string_view piece) const {
  const auto it = added_by_content_.find(Av(piece));
  if (it != added_by_content_.end()) return it->second;
  return section_->FindPiece(piece);
}

bool Tokenizer::IsSpecial(TokenId id) const {
  return id >= 0 && static_cast<uint32_t>(id) < section_->vocab_size() &&
         (section_->flags(id) & kTokenSpecial) != 0;
}

absl::StatusOr<std::string> Tokenizer::DecodeStrings(std::vector<std::string> tokens) const {
  if (!decoder_) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) out += ' ';
      out += tokens[i];
    }
    return out;
  }
  CORTIQ_ASSIGN_OR_RETURN(std::vector<std::string> parts, decoder_->DecodeChain(std::move(tokens)));
  std::string out;
  for (const std::string& p : parts) out += p;
  return out;
}

absl::StatusOr<std::string> Tokenizer::Decode(absl::Span<const TokenId> ids,
                                              const DecodeOptions& options) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const TokenId id : ids) {
    CORTIQ_ASSIGN_OR_RETURN(std::string_view s, TokenString(id));
    if (options.skip_special_tokens && IsSpecial(id)) continue;
    tokens.emplace_back(s);
  }
  return DecodeStrings(std::move(tokens));
}

StreamDecoder::StreamDecoder(const Tokenizer* tokenizer, DecodeOptions options)
    : tokenizer_(tokenizer), options_(options) {
  local_ = !tokenizer_->decoder_ || tokenizer_->decoder_->IsLocal();
}

absl::StatusOr<std::string> StreamDecoder::Push(TokenId id) {
  CORTIQ_ASSIGN_OR_RETURN(std::string_view piece, tokenizer_->TokenString(id));
  if (options_.skip_special_tokens && tokenizer_->IsSpecial(id)) return std::string();
  pending_.push_back(id);
  if (!local_) {
    // Re-decode everything; return the new text once it extends what was returned and does not
    // end in U+FFFD (a possibly incomplete character).
    CORTIQ_ASSIGN_OR_RETURN(std::string all, tokenizer_->Decode(pending_, options_));
    const bool ends_replacement = all.size() >= 3 && all.compare(all.size() - 3, 3, "\xEF\xBF\xBD") == 0;
    holding_ = all.size() > emitted_ && ends_replacement;
    if (all.size() <= emitted_ || ends_replacement) return std::string();
    std::string out = all.substr(emitted_);
    emitted_ = all.size();
    return out;
  }
  uint8_t byte;
  if (tokenizer_->decoder_ && tokenizer_->decoder_->IsHeldBack(piece, &byte)) {
    pending_bytes_ += static_cast<char>(byte);
    if (!long_run_ && pending_.size() <= kMaxHeldBackBytes) return std::string();
    long_run_ = true;
    streamed_long_byte_run_ = true;
    return TakeCompleteCharacters();
  }
  CORTIQ_ASSIGN_OR_RETURN(std::string text, tokenizer_->Decode(pending_, options_));
  pending_.clear();
  pending_bytes_.clear();
  long_run_ = false;
  if (!tokenizer_->decoder_ && any_emitted_) text.insert(0, " ");
  any_emitted_ = true;
  return text;
}

absl::StatusOr<std::string> StreamDecoder::TakeCompleteCharacters() {
  std::string out;
  size_t start = 0;
  while (start < pending_bytes_.size()) {
    const std::string_view rest = std::string_view(pending_bytes_).substr(start);
    size_t valid = FindInvalidUtf8(rest);
    if (valid == std::string_view::npos) valid = rest.size();
    if (valid == 0) {
      if (IsIncompleteUtf8(rest)) break;
      valid = 1;  // starts no well-formed sequence: decodes alone to U+FFFD
    }
    const std::vector<TokenId> ids(pending_.begin() + start, pending_.begin() + start + valid);
    CORTIQ_ASSIGN_OR_RETURN(std::string text, tokenizer_->Decode(ids, options_));
    out += text;
    start += valid;
  }
  pending_.erase(pending_.begin(), pending_.begin() + start);
  pending_bytes_.erase(0, start);
  return out;
}

absl::StatusOr<std::string> StreamDecoder::HeldText() const {
  // Non-local mode: pending_ is every id so far; decode again only when Push held text back.
  if (pending_.empty() || (!local_ && !holding_)) return std::string();
  CORTIQ_ASSIGN_OR_RETURN(std::string all, tokenizer_->Decode(pending_, options_));
  if (local_) return all;
  return all.size() > emitted_ ? all.substr(emitted_) : std::string();
}

absl::StatusOr<std::string> StreamDecoder::Flush() {
  std::string out;
  if (!local_) {
    // pending_ stays (every id so far): the next Push decodes it all again and returns what
    // extends the emitted_ bytes.
    CORTIQ_ASSIGN_OR_RETURN(std::string all, tokenizer_->Decode(pending_, options_));
    if (all.size() > emitted_) out = all.substr(emitted_);
    emitted_ = all.size();
    holding_ = false;
    return out;
  }
  // Local mode holds back only byte tokens (a decoder's ByteFallback run).
  if (!pending_.empty()) {
    CORTIQ_ASSIGN_OR_RETURN(out, tokenizer_->Decode(pending_, options_));
    any_emitted_ = true;
  }
  pending_.clear();
  pending_bytes_.clear();
  long_run_ = false;
  return out;
}

absl::StatusOr<std::string> StreamDecoder::Finish() {
  std::string out;
  if (!local_) {
    CORTIQ_ASSIGN_OR_RETURN(std::string all, tokenizer_->Decode(pending_, options_));
    if (all.size() > emitted_) out = all.substr(emitted_);
  } else if (!pending_.empty()) {
    CORTIQ_ASSIGN_OR_RETURN(out, tokenizer_->Decode(pending_, options_));
  }
  pending_.clear();
  pending_bytes_.clear();
  long_run_ = false;
  emitted_ = 0;
  holding_ = false;
  any_emitted_ = false;
  return out;
}

}  // namespace cortiq::text
