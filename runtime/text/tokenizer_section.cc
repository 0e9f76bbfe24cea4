// Writer and validating loader of the tokenizer section (see tokenizer_section.h).
#include "runtime/text/tokenizer_section.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "runtime/text/hash.h"
#include "runtime/text/unicode.h"

namespace cortiq::text {
namespace {

enum BlockKind : uint32_t {
  kPieceOffsets = 1,
  kPieceBytes = 2,
  kTokenFlags = 3,
  kPieceHash = 4,
  kMergeHash = 5,
  kByteIds = 6,
  kAddedTokens = 7,
  kRawTrie = 8,
  kNormalizedTrie = 9,
  kConfig = 10,
  kBigramHash = 11,
  kSamplingDefaults = 12,  // 1.1, optional
  kScores = 13,            // 1.2, SPM models only
  kNumBlockKinds = 14,
};

// Blocks a section may leave out: those a later minor version added (a 1.0 section has no
// sampling defaults block; its readers skip it).
bool OptionalBlock(uint32_t kind) { return kind == kSamplingDefaults || kind == kScores; }

const char* BlockName(uint32_t kind) {
  switch (kind) {
    case kPieceOffsets: return "piece offsets";
    case kPieceBytes: return "piece bytes";
    case kTokenFlags: return "token flags";
    case kPieceHash: return "piece hash";
    case kMergeHash: return "merge hash";
    case kByteIds: return "byte ids";
    case kAddedTokens: return "added tokens";
    case kRawTrie: return "raw added-token trie";
    case kNormalizedTrie: return "normalized added-token trie";
    case kConfig: return "config";
    case kBigramHash: return "bigram hash";
    case kSamplingDefaults: return "sampling defaults";
    case kScores: return "scores";
    default: return "unknown";
  }
}

constexpr size_t kHeaderBytes = 64;
constexpr size_t kDirectoryEntryBytes = 24;
constexpr uint32_t kNone = 0xFFFFFFFFu;
// Deepest Sequence nesting of normalizers, pre-tokenizers and decoders (real ones nest 2 deep).
constexpr int kMaxConfigDepth = 16;

template <typename... Parts>
absl::Status SectionError(const Parts&... parts) {
  return absl::InvalidArgumentError(absl::StrCat("tokenizer section: ", parts...));
}

uint32_t NextPowerOfTwo(uint64_t n) {
  uint64_t p = 16;
  while (p < n) p <<= 1;
  return static_cast<uint32_t>(p);
}

// ---------------------------------------------------------------------------------------------
// Byte writer / bounded reader for kConfig.

class ByteWriter {
 public:
  void U8(uint8_t v) { out_.push_back(v); }
  void U32(uint32_t v) {
    for (int k = 0; k < 4; ++k) out_.push_back(static_cast<uint8_t>(v >> (8 * k)));
  }
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void F32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    U32(bits);
  }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  std::vector<uint8_t>& bytes() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

class ByteReader {
 public:
  explicit ByteReader(absl::Span<const uint8_t> in) : in_(in) {}
  bool ok() const { return ok_; }
  size_t offset() const { return pos_; }
  bool done() const { return pos_ == in_.size(); }
  uint8_t U8() {
    if (!Need(1)) return 0;
    return in_[pos_++];
  }
  uint32_t U32() {
    if (!Need(4)) return 0;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= static_cast<uint32_t>(in_[pos_ + k]) << (8 * k);
    pos_ += 4;
    return v;
  }
  int32_t I32() { return static_cast<int32_t>(U32()); }
  float F32() {
    const uint32_t bits = U32();
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  std::string Str() {
    const uint32_t n = U32();
    if (!Need(n)) return "";
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  // A count of items of at least `min_item_bytes` each: bounded by the bytes left.
  uint32_t Count(size_t min_item_bytes) {
    const uint32_t n = U32();
    if (ok_ && static_cast<uint64_t>(n) * min_item_bytes > in_.size() - pos_) ok_ = false;
    return ok_ ? n : 0;
  }

 private:
  bool Need(size_t n) {
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return false;
    }
    return true;
  }
  absl::Span<const uint8_t> in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

void WritePattern(const TextPattern& p, ByteWriter* w) {
  w->U8(static_cast<uint8_t>(p.kind));
  w->Str(p.text);
}

absl::Status WriteNormalizer(const NormalizerSpec& n, int depth, ByteWriter* w) {
  if (depth > kMaxConfigDepth) return absl::InvalidArgumentError("normalizer nested too deep");
  w->U8(static_cast<uint8_t>(n.type));
  WritePattern(n.pattern, w);
  w->Str(n.content);
  w->U32(static_cast<uint32_t>(n.children.size()));
  for (const NormalizerSpec& c : n.children) {
    CORTIQ_RETURN_IF_ERROR(WriteNormalizer(c, depth + 1, w));
  }
  return absl::OkStatus();
}

absl::Status WritePreTokenizer(const PreTokenizerSpec& p, int depth, ByteWriter* w) {
  if (depth > kMaxConfigDepth) return absl::InvalidArgumentError("pre_tokenizer nested too deep");
  w->U8(static_cast<uint8_t>(p.type));
  WritePattern(p.pattern, w);
  w->U8(static_cast<uint8_t>(p.behavior));
  w->U8(p.invert ? 1 : 0);
  w->Str(p.replacement);
  w->U8(static_cast<uint8_t>(p.prepend_scheme));
  w->U8(p.split ? 1 : 0);
  w->U32(static_cast<uint32_t>(p.children.size()));
  for (const PreTokenizerSpec& c : p.children) {
    CORTIQ_RETURN_IF_ERROR(WritePreTokenizer(c, depth + 1, w));
  }
  return absl::OkStatus();
}

absl::Status WriteDecoder(const DecoderSpec& d, int depth, ByteWriter* w) {
  if (depth > kMaxConfigDepth) return absl::InvalidArgumentError("decoder nested too deep");
  w->U8(static_cast<uint8_t>(d.type));
  WritePattern(d.pattern, w);
  w->Str(d.content);
  w->U32(d.start);
  w->U32(d.stop);
  w->U32(static_cast<uint32_t>(d.children.size()));
  for (const DecoderSpec& c : d.children) CORTIQ_RETURN_IF_ERROR(WriteDecoder(c, depth + 1, w));
  return absl::OkStatus();
}

void WriteOptionalId(const std::optional<TokenId>& id, ByteWriter* w) {
  w->U8(id.has_value() ? 1 : 0);
  w->I32(id.value_or(0));
}

bool ReadPattern(ByteReader* r, TextPattern* p) {
  const uint8_t kind = r->U8();
  if (kind > 1) return false;
  p->kind = static_cast<TextPattern::Kind>(kind);
  p->text = r->Str();
  return r->ok();
}

bool ReadNormalizer(ByteReader* r, int depth, NormalizerSpec* n) {
  if (depth > kMaxConfigDepth) return false;
  const uint8_t type = r->U8();
  if (type > static_cast<uint8_t>(NormalizerType::kNFKD)) return false;
  n->type = static_cast<NormalizerType>(type);
  if (!ReadPattern(r, &n->pattern)) return false;
  n->content = r->Str();
  const uint32_t children = r->Count(11);
  for (uint32_t i = 0; i < children && r->ok(); ++i) {
    n->children.emplace_back();
    if (!ReadNormalizer(r, depth + 1, &n->children.back())) return false;
  }
  return r->ok();
}

bool ReadPreTokenizer(ByteReader* r, int depth, PreTokenizerSpec* p) {
  if (depth > kMaxConfigDepth) return false;
  const uint8_t type = r->U8();
  if (type > static_cast<uint8_t>(PreTokenizerType::kMetaspace)) return false;
  p->type = static_cast<PreTokenizerType>(type);
  if (!ReadPattern(r, &p->pattern)) return false;
  const uint8_t behavior = r->U8();
  if (behavior > static_cast<uint8_t>(SplitBehavior::kContiguous)) return false;
  p->behavior = static_cast<SplitBehavior>(behavior);
  p->invert = r->U8() != 0;
  p->replacement = r->Str();
  const uint8_t scheme = r->U8();
  if (scheme > static_cast<uint8_t>(PrependScheme::kNever)) return false;
  p->prepend_scheme = static_cast<PrependScheme>(scheme);
  p->split = r->U8() != 0;
  const uint32_t children = r->Count(15);
  for (uint32_t i = 0; i < children && r->ok(); ++i) {
    p->children.emplace_back();
    if (!ReadPreTokenizer(r, depth + 1, &p->children.back())) return false;
  }
  return r->ok();
}

bool ReadDecoder(ByteReader* r, int depth, DecoderSpec* d) {
  if (depth > kMaxConfigDepth) return false;
  const uint8_t type = r->U8();
  if (type > static_cast<uint8_t>(DecoderType::kStrip)) return false;
  d->type = static_cast<DecoderType>(type);
  if (!ReadPattern(r, &d->pattern)) return false;
  d->content = r->Str();
  d->start = r->U32();
  d->stop = r->U32();
  const uint32_t children = r->Count(18);
  for (uint32_t i = 0; i < children && r->ok(); ++i) {
    d->children.emplace_back();
    if (!ReadDecoder(r, depth + 1, &d->children.back())) return false;
  }
  return r->ok();
}

std::optional<TokenId> ReadOptionalId(ByteReader* r) {
  const bool present = r->U8() != 0;
  const int32_t id = r->I32();
  if (!present) return std::nullopt;
  return id;
}

// Encodes the small parts of `spec` (kConfig).
absl::StatusOr<std::vector<uint8_t>> EncodeConfig(const TokenizerSpec& spec) {
  ByteWriter w;
  w.Str(spec.source);
  w.U8(spec.normalizer.has_value());
  if (spec.normalizer) CORTIQ_RETURN_IF_ERROR(WriteNormalizer(*spec.normalizer, 0, &w));
  w.U8(spec.pre_tokenizer.has_value());
  if (spec.pre_tokenizer) CORTIQ_RETURN_IF_ERROR(WritePreTokenizer(*spec.pre_tokenizer, 0, &w));
  w.U8(spec.decoder.has_value());
  if (spec.decoder) CORTIQ_RETURN_IF_ERROR(WriteDecoder(*spec.decoder, 0, &w));
  w.U32(static_cast<uint32_t>(spec.post_processor.single.size()));
  for (const TemplateItem& item : spec.post_processor.single) {
    w.U8(item.is_sequence ? 1 : 0);
    w.U32(static_cast<uint32_t>(item.ids.size()));
    for (TokenId id : item.ids) w.I32(id);
  }
  WriteOptionalId(spec.model.unk_id, &w);
  w.U8(spec.model.fuse_unk);
  w.U8(spec.model.byte_fallback);
  w.U8(spec.model.ignore_merges);
  w.Str(spec.model.continuing_subword_prefix);
  w.Str(spec.model.end_of_word_suffix);
  WriteOptionalId(spec.bos_id, &w);
  WriteOptionalId(spec.eos_id, &w);
  WriteOptionalId(spec.pad_id, &w);
  const GenerationDefaults& g = spec.generation;
  w.U32(static_cast<uint32_t>(g.eos_token_ids.size()));
  for (TokenId id : g.eos_token_ids) w.I32(id);
  w.U8(g.temperature.has_value());
  w.F32(g.temperature.value_or(0.0f));
  w.U8(g.top_p.has_value());
  w.F32(g.top_p.value_or(0.0f));
  w.U8(g.top_k.has_value());
  w.I32(g.top_k.value_or(0));
  w.U8(g.do_sample.has_value());
  w.U8(g.do_sample.value_or(false));
  w.Str(spec.chat_template.text);
  w.Str(spec.chat_template.source);
  // 1.2: only a non-BPE model says so (a BPE config stays as 1.1 readers expect it).
  if (spec.model.type != ModelType::kBpe) w.U8(static_cast<uint8_t>(spec.model.type));
  return std::move(w.bytes());
}

absl::Status DecodeConfig(absl::Span<const uint8_t> bytes, uint32_t vocab_size,
                          TokenizerConfig* c) {
  ByteReader r(bytes);
  const auto bad = [&](absl::string_view what) {
    return SectionError("config: ", what, " (at byte ", r.offset(), " of the config block)");
  };
  const auto id_ok = [&](const std::optional<TokenId>& id) {
    return !id || (*id >= 0 && static_cast<uint32_t>(*id) < vocab_size);
  };
  c->source = r.Str();
  if (r.U8()) {
    c->normalizer.emplace();
    if (!ReadNormalizer(&r, 0, &*c->normalizer)) return bad("undecodable normalizer");
  }
  if (r.U8()) {
    c->pre_tokenizer.emplace();
    if (!ReadPreTokenizer(&r, 0, &*c->pre_tokenizer)) return bad("undecodable pre_tokenizer");
  }
  if (r.U8()) {
    c->decoder.emplace();
    if (!ReadDecoder(&r, 0, &*c->decoder)) return bad("undecodable decoder");
  }
  const uint32_t items = r.Count(5);
  for (uint32_t i = 0; i < items && r.ok(); ++i) {
    TemplateItem item;
    item.is_sequence = r.U8() != 0;
    const uint32_t n = r.Count(4);
    for (uint32_t k = 0; k < n && r.ok(); ++k) {
      const TokenId id = r.I32();
      if (!id_ok(id)) return bad(absl::StrCat("post_processor id ", id, " out of range"));
      item.ids.push_back(id);
    }
    c->post_processor.single.push_back(std::move(item));
  }
  c->unk_id = ReadOptionalId(&r);
  c->fuse_unk = r.U8() != 0;
  c->byte_fallback = r.U8() != 0;
  c->ignore_merges = r.U8() != 0;
  c->continuing_subword_prefix = r.Str();
  c->end_of_word_suffix = r.Str();
  c->bos_id = ReadOptionalId(&r);
  c->eos_id = ReadOptionalId(&r);
  c->pad_id = ReadOptionalId(&r);
  if (!id_ok(c->unk_id) || !id_ok(c->bos_id) || !id_ok(c->eos_id) || !id_ok(c->pad_id)) {
    return bad("unk/bos/eos/pad id out of range");
  }
  GenerationDefaults& g = c->generation;
  const uint32_t num_eos = r.Count(4);
  for (uint32_t k = 0; k < num_eos && r.ok(); ++k) {
    const TokenId id = r.I32();
    if (!id_ok(id)) return bad(absl::StrCat("eos_token_id ", id, " out of range"));
    g.eos_token_ids.push_back(id);
  }
  if (r.U8()) {
    g.temperature = r.F32();
  } else {
    r.F32();
  }
  if (r.U8()) {
    g.top_p = r.F32();
  } else {
    r.F32();
  }
  if (r.U8()) {
    g.top_k = r.I32();
  } else {
    r.I32();
  }
  if (r.U8()) {
    g.do_sample = r.U8() != 0;
  } else {
    r.U8();
  }
  c->chat_template.text = r.Str();
  c->chat_template.source = r.Str();
  if (r.ok() && !r.done()) {
    const uint8_t type = r.U8();
    if (type != static_cast<uint8_t>(ModelType::kSpm)) {
      return bad(absl::StrCat("unknown model type ", type));
    }
    c->model_type = ModelType::kSpm;
  }
  if (!r.ok()) return bad("truncated");
  if (!r.done()) return bad("unexpected bytes after the end");
  return absl::OkStatus();
}

// The sampling defaults beyond temperature / top_p / top_k (kSamplingDefaults, 1.1): per field a
// u8 presence flag, then the value (f32 min_p, f32 typical_p, f32 repetition_penalty,
// i32 repeat_last_n), 20 bytes; later minors may append fields (read if present).
std::vector<uint8_t> EncodeSamplingDefaults(const GenerationDefaults& g) {
  ByteWriter w;
  w.U8(g.min_p.has_value());
  w.F32(g.min_p.value_or(0.0f));
  w.U8(g.typical_p.has_value());
  w.F32(g.typical_p.value_or(0.0f));
  w.U8(g.repetition_penalty.has_value());
  w.F32(g.repetition_penalty.value_or(0.0f));
  w.U8(g.repeat_last_n.has_value());
  w.I32(g.repeat_last_n.value_or(0));
  return std::move(w.bytes());
}

absl::Status DecodeSamplingDefaults(absl::Span<const uint8_t> bytes, GenerationDefaults* g) {
  ByteReader r(bytes);
  const auto f32 = [&](std::optional<float>* field) {
    const bool present = r.U8() != 0;
    const float v = r.F32();
    if (present) *field = v;
  };
  f32(&g->min_p);
  f32(&g->typical_p);
  f32(&g->repetition_penalty);
  const bool present = r.U8() != 0;
  const int32_t last_n = r.I32();
  if (present) g->repeat_last_n = last_n;
  if (!r.ok()) return SectionError("sampling defaults block truncated");
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Added-token tries.

// Builds the trie of the added tokens `indices` (into spec.added_tokens) as an AddedTrie block.
std::vector<uint8_t> BuildTrie(const std::vector<AddedTokenSpec>& tokens,
                               const std::vector<uint32_t>& indices) {
  struct BuildNode {
    std::map<uint8_t, uint32_t> children;
    uint32_t token_plus_1 = 0;
  };
  std::vector<BuildNode> nodes(1);
  for (uint32_t index : indices) {
    uint32_t node = 0;
    for (const char ch : tokens[index].content) {
      const uint8_t b = static_cast<uint8_t>(ch);
      auto it = nodes[node].children.find(b);
      if (it == nodes[node].children.end()) {
        nodes.emplace_back();
        const uint32_t child = static_cast<uint32_t>(nodes.size() - 1);
        nodes[node].children.emplace(b, child);
        node = child;
      } else {
        node = it->second;
      }
    }
    if (nodes[node].token_plus_1 == 0) nodes[node].token_plus_1 = index + 1;  // first wins
  }
  std::vector<AddedTrieView::Node> flat_nodes(nodes.size());
  std::vector<AddedTrieView::Edge> flat_edges;
  for (size_t i = 0; i < nodes.size(); ++i) {
    flat_nodes[i].first_edge = static_cast<uint32_t>(flat_edges.size());
    flat_nodes[i].num_edges = static_cast<uint32_t>(nodes[i].children.size());
    flat_nodes[i].token_plus_1 = nodes[i].token_plus_1;
    for (const auto& [b, child] : nodes[i].children) flat_edges.push_back({b, child});
  }
  std::vector<uint32_t> root(256, kNone);
  for (const auto& [b, child] : nodes[0].children) root[b] = child;
  std::vector<uint8_t> out;
  const auto append = [&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  };
  const uint32_t counts[2] = {static_cast<uint32_t>(flat_nodes.size()),
                              static_cast<uint32_t>(flat_edges.size())};
  append(counts, sizeof(counts));
  append(root.data(), root.size() * 4);
  append(flat_nodes.data(), flat_nodes.size() * sizeof(AddedTrieView::Node));
  append(flat_edges.data(), flat_edges.size() * sizeof(AddedTrieView::Edge));
  return out;
}

template <typename T>
const T* As(const uint8_t* p) {
  return reinterpret_cast<const T*>(p);
}

absl::Status LoadTrie(absl::Span<const uint8_t> block, uint32_t num_added, const char* name,
                      AddedTrieView* trie) {
  if (block.size() < 8 + 256 * 4) return SectionError(name, ": block too small");
  const uint32_t num_nodes = As<uint32_t>(block.data())[0];
  const uint32_t num_edges = As<uint32_t>(block.data())[1];
  const uint64_t expected = 8 + 256 * 4 + uint64_t{num_nodes} * sizeof(AddedTrieView::Node) +
                            uint64_t{num_edges} * sizeof(AddedTrieView::Edge);
  if (num_nodes == 0 || expected != block.size()) {
    return SectionError(name, ": ", num_nodes, " nodes and ", num_edges, " edges need ", expected,
                        " bytes, the block has ", block.size());
  }
  trie->root = As<uint32_t>(block.data() + 8);
  trie->nodes = absl::MakeConstSpan(As<AddedTrieView::Node>(block.data() + 8 + 1024), num_nodes);
  trie->edges = absl::MakeConstSpan(
      As<AddedTrieView::Edge>(block.data() + 8 + 1024 + num_nodes * sizeof(AddedTrieView::Node)),
      num_edges);
  for (int b = 0; b < 256; ++b) {
    if (trie->root[b] != kNone && trie->root[b] >= num_nodes) {
      return SectionError(name, ": root child ", trie->root[b], " out of range");
    }
  }
  for (uint32_t i = 0; i < num_nodes; ++i) {
    const AddedTrieView::Node& n = trie->nodes[i];
    if (n.first_edge > num_edges || n.num_edges > num_edges - n.first_edge) {
      return SectionError(name, ": node ", i, " edges out of range");
    }
    if (n.token_plus_1 > num_added) {
      return SectionError(name, ": node ", i, " names added token ", n.token_plus_1 - 1,
                          " of ", num_added);
    }
    for (uint32_t k = 0; k < n.num_edges; ++k) {
      const AddedTrieView::Edge& e = trie->edges[n.first_edge + k];
      if (e.byte > 255 || e.child >= num_nodes ||
          (k > 0 && e.byte <= trie->edges[n.first_edge + k - 1].byte)) {
        return SectionError(name, ": node ", i, " has a bad edge ", k);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

int64_t AddedTrieView::Child(uint32_t node, uint8_t byte) const {
  if (node == 0) return root[byte] == kNone ? -1 : static_cast<int64_t>(root[byte]);
  const Node& n = nodes[node];
  const Edge* first = edges.data() + n.first_edge;
  const Edge* last = first + n.num_edges;
  // Edges are few (a handful per node): linear beats binary search.
  for (const Edge* e = first; e != last; ++e) {
    if (e->byte == byte) return e->child;
    if (e->byte > byte) break;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Writer.

absl::StatusOr<std::vector<uint8_t>> SerializeTokenizerSection(const TokenizerSpec& spec) {
  const auto error = [&](auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(spec.source, ": ", parts...));
  };
  const uint64_t vocab = spec.tokens.size();
  if (vocab == 0) return error("the vocabulary is empty");
  if (vocab > kMaxTokenizerVocab) {
    return error("vocabulary of ", vocab, " tokens exceeds the limit of ", kMaxTokenizerVocab);
  }
  if (spec.model.merges.size() > kMaxTokenizerMerges) {
    return error(spec.model.merges.size(), " merges exceed the limit of ", kMaxTokenizerMerges);
  }
  const auto id_in_range = [&](int64_t id) { return id >= 0 && static_cast<uint64_t>(id) < vocab; };

  // Pieces, flags, piece hash.
  std::vector<uint32_t> offsets(vocab + 1);
  std::vector<uint8_t> pieces;
  std::vector<uint8_t> flags(vocab, 0);
  uint64_t model_pieces = 0;
  for (size_t i = 0; i < vocab; ++i) {
    const std::string& piece = spec.tokens[i].piece;
    if (piece.size() > kMaxPieceBytes) {
      return error("token ", i, " is ", piece.size(), " bytes long (limit ", kMaxPieceBytes, ")");
    }
    offsets[i] = static_cast<uint32_t>(pieces.size());
    pieces.insert(pieces.end(), piece.begin(), piece.end());
    if (pieces.size() > kMaxTokenizerSectionBytes / 2) return error("pieces too large");
    if (spec.tokens[i].in_model) {
      flags[i] |= kTokenInModel;
      ++model_pieces;
      unsigned hex = 0;
      if (piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>' &&
          std::isxdigit(static_cast<unsigned char>(piece[3])) &&
          std::isxdigit(static_cast<unsigned char>(piece[4])) &&
          !std::islower(static_cast<unsigned char>(piece[3])) &&
          !std::islower(static_cast<unsigned char>(piece[4])) &&
          std::sscanf(piece.c_str() + 3, "%2x", &hex) == 1) {
        flags[i] |= kTokenByte;
      }
    }
  }
  offsets[vocab] = static_cast<uint32_t>(pieces.size());

  const uint32_t piece_capacity = NextPowerOfTwo(2 * model_pieces);
  std::vector<uint32_t> piece_slots(piece_capacity, 0);
  uint32_t piece_max_probe = 1;
  for (size_t i = 0; i < vocab; ++i) {
    if (!spec.tokens[i].in_model) continue;
    const std::string& piece = spec.tokens[i].piece;
    uint64_t slot = HashPiece(piece) & (piece_capacity - 1);
    uint32_t probe = 1;
    while (piece_slots[slot] != 0) {
      if (spec.tokens[piece_slots[slot] - 1].piece == piece) {
        return error("the vocabulary has the piece \"", piece, "\" twice (ids ",
                     piece_slots[slot] - 1, " and ", i, ")");
      }
      slot = (slot + 1) & (piece_capacity - 1);
      ++probe;
    }
    piece_slots[slot] = static_cast<uint32_t>(i + 1);
    piece_max_probe = std::max(piece_max_probe, probe);
  }

  // Byte ids.
  std::vector<uint32_t> byte_ids(256, kNone);
  {
    // Only through the piece hash, as BPE's byte_fallback looks them up.
    for (int b = 0; b < 256; ++b) {
      const std::string piece = absl::StrFormat("<0x%02X>", b);
      uint64_t slot = HashPiece(piece) & (piece_capacity - 1);
      for (uint32_t k = 0; k < piece_max_probe && piece_slots[slot] != 0; ++k) {
        if (spec.tokens[piece_slots[slot] - 1].piece == piece) {
          byte_ids[b] = piece_slots[slot] - 1;
          break;
        }
        slot = (slot + 1) & (piece_capacity - 1);
      }
    }
  }

  // Merges.
  const uint32_t merge_capacity = NextPowerOfTwo(2 * spec.model.merges.size());
  std::vector<MergeEntry> merge_slots(merge_capacity, MergeEntry{kNone, kNone, 0, 0});
  uint32_t merge_max_probe = 1;
  for (size_t i = 0; i < spec.model.merges.size(); ++i) {
    const BpeMerge& m = spec.model.merges[i];
    if (!id_in_range(m.left) || !id_in_range(m.right) || !id_in_range(m.result)) {
      return error("merge ", i, " names a token id out of range (", m.left, ", ", m.right, " → ",
                   m.result, " with ", vocab, " tokens)");
    }
    const uint32_t left = static_cast<uint32_t>(m.left);
    const uint32_t right = static_cast<uint32_t>(m.right);
    uint64_t slot = HashPair(left, right) & (merge_capacity - 1);
    uint32_t probe = 1;
    while (merge_slots[slot].left != kNone) {
      if (merge_slots[slot].left == left && merge_slots[slot].right == right) {
        return error("merge ", i, " repeats the pair (", left, ", ", right, ")");
      }
      slot = (slot + 1) & (merge_capacity - 1);
      ++probe;
    }
    merge_slots[slot] = MergeEntry{left, right, m.rank, static_cast<uint32_t>(m.result)};
    merge_max_probe = std::max(merge_max_probe, probe);
  }

  // Added tokens.
  std::vector<AddedTokenEntry> added;
  std::vector<uint8_t> pool;
  std::vector<uint32_t> raw_indices;
  std::vector<uint32_t> normalized_indices;
  for (size_t i = 0; i < spec.added_tokens.size(); ++i) {
    const AddedTokenSpec& t = spec.added_tokens[i];
    if (!id_in_range(t.id)) {
      return error("added token \"", t.content, "\" has id ", t.id, " out of range (", vocab,
                   " tokens)");
    }
    if (t.content.empty() || t.content.size() > kMaxPieceBytes) {
      return error("added token ", t.id, " has an empty or too long content");
    }
    uint32_t f = 0;
    if (t.special) f |= kAddedSpecial;
    if (t.lstrip) f |= kAddedLstrip;
    if (t.rstrip) f |= kAddedRstrip;
    if (t.normalized) f |= kAddedNormalized;
    if (t.single_word) f |= kAddedSingleWord;
    added.push_back(AddedTokenEntry{static_cast<uint32_t>(t.id), f,
                                    static_cast<uint32_t>(pool.size()),
                                    static_cast<uint32_t>(t.content.size())});
    pool.insert(pool.end(), t.content.begin(), t.content.end());
    flags[t.id] |= kTokenAdded;
    if (t.special) flags[t.id] |= kTokenSpecial;
    (t.normalized ? normalized_indices : raw_indices).push_back(static_cast<uint32_t>(i));
  }
  const auto check_id = [&](const std::optional<TokenId>& id, const char* what) -> absl::Status {
    if (id && !id_in_range(*id)) return error(what, " ", *id, " out of range");
    return absl::OkStatus();
  };
  CORTIQ_RETURN_IF_ERROR(check_id(spec.model.unk_id, "unk_token id"));
  CORTIQ_RETURN_IF_ERROR(check_id(spec.bos_id, "bos_token_id"));
  CORTIQ_RETURN_IF_ERROR(check_id(spec.eos_id, "eos_token_id"));
  CORTIQ_RETURN_IF_ERROR(check_id(spec.pad_id, "pad_token_id"));
  for (TokenId id : spec.generation.eos_token_ids) {
    CORTIQ_RETURN_IF_ERROR(check_id(id, "generation eos_token_id"));
  }
  for (const TemplateItem& item : spec.post_processor.single) {
    for (TokenId id : item.ids) CORTIQ_RETURN_IF_ERROR(check_id(id, "post_processor id"));
  }
  absl::StatusOr<std::vector<uint8_t>> config = EncodeConfig(spec);
  if (!config.ok()) return error(config.status().message());

  // Character bigrams inside vocabulary pieces, and whether they may split words (see
  // TokenizerSection::WordsSplitAtForeignBigrams).
  bool split_ok = spec.model.continuing_subword_prefix.empty() &&
                  spec.model.end_of_word_suffix.empty();
  for (const BpeMerge& m : spec.model.merges) {
    for (const TokenId operand : {m.left, m.right}) {
      const uint8_t f = flags[operand];
      if ((f & kTokenByte) || (spec.model.unk_id && operand == *spec.model.unk_id)) {
        split_ok = false;
      }
    }
  }
  std::vector<uint64_t> bigram_keys;
  for (size_t i = 0; i < vocab && split_ok; ++i) {
    if (!spec.tokens[i].in_model || (flags[i] & kTokenByte)) continue;
    const std::string& piece = spec.tokens[i].piece;
    if (FindInvalidUtf8(piece) != std::string::npos) {
      split_ok = false;  // a GGUF piece that is not UTF-8: no character bigrams to speak of
      break;
    }
    size_t k = 0;
    char32_t previous = 0;
    bool first = true;
    while (k < piece.size()) {
      const char32_t c = DecodeUtf8(piece, &k);
      if (!first) bigram_keys.push_back(BigramKey(previous, c));
      previous = c;
      first = false;
    }
  }
  std::sort(bigram_keys.begin(), bigram_keys.end());
  bigram_keys.erase(std::unique(bigram_keys.begin(), bigram_keys.end()), bigram_keys.end());
  const uint32_t bigram_capacity = NextPowerOfTwo(2 * bigram_keys.size());
  std::vector<uint64_t> bigram_slots(bigram_capacity, 0);
  uint32_t bigram_max_probe = 1;
  for (const uint64_t key : bigram_keys) {
    uint64_t slot = Mix64(key) & (bigram_capacity - 1);
    uint32_t probe = 1;
    while (bigram_slots[slot] != 0) {
      slot = (slot + 1) & (bigram_capacity - 1);
      ++probe;
    }
    bigram_slots[slot] = key;
    bigram_max_probe = std::max(bigram_max_probe, probe);
  }

  // Assemble.
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> blocks;
  const auto block_of = [](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    return std::vector<uint8_t>(b, b + n);
  };
  blocks.emplace_back(kPieceOffsets, block_of(offsets.data(), offsets.size() * 4));
  blocks.emplace_back(kPieceBytes, std::move(pieces));
  blocks.emplace_back(kTokenFlags, std::move(flags));
  {
    std::vector<uint8_t> b = block_of(&piece_capacity, 4);
    b.resize(8);
    std::memcpy(b.data() + 4, &piece_max_probe, 4);
    b.insert(b.end(), reinterpret_cast<const uint8_t*>(piece_slots.data()),
             reinterpret_cast<const uint8_t*>(piece_slots.data() + piece_slots.size()));
    blocks.emplace_back(kPieceHash, std::move(b));
  }
  {
    const uint32_t head[4] = {merge_capacity, merge_max_probe,
                              static_cast<uint32_t>(spec.model.merges.size()), 0};
    std::vector<uint8_t> b = block_of(head, sizeof(head));
    b.insert(b.end(), reinterpret_cast<const uint8_t*>(merge_slots.data()),
             reinterpret_cast<const uint8_t*>(merge_slots.data() + merge_slots.size()));
    blocks.emplace_back(kMergeHash, std::move(b));
  }
  blocks.emplace_back(kByteIds, block_of(byte_ids.data(), 256 * 4));
  {
    const uint32_t head[2] = {static_cast<uint32_t>(added.size()),
                              static_cast<uint32_t>(pool.size())};
    std::vector<uint8_t> b = block_of(head, sizeof(head));
    b.insert(b.end(), reinterpret_cast<const uint8_t*>(added.data()),
             reinterpret_cast<const uint8_t*>(added.data() + added.size()));
    b.insert(b.end(), pool.begin(), pool.end());
    blocks.emplace_back(kAddedTokens, std::move(b));
  }
  blocks.emplace_back(kRawTrie, BuildTrie(spec.added_tokens, raw_indices));
  blocks.emplace_back(kNormalizedTrie, BuildTrie(spec.added_tokens, normalized_indices));
  blocks.emplace_back(kConfig, *std::move(config));
  {
    const uint32_t head[4] = {bigram_capacity, bigram_max_probe, split_ok ? 1u : 0u,
                              static_cast<uint32_t>(bigram_keys.size())};
    std::vector<uint8_t> b = block_of(head, sizeof(head));
    b.insert(b.end(), reinterpret_cast<const uint8_t*>(bigram_slots.data()),
             reinterpret_cast<const uint8_t*>(bigram_slots.data() + bigram_slots.size()));
    blocks.emplace_back(kBigramHash, std::move(b));
  }
  blocks.emplace_back(kSamplingDefaults, EncodeSamplingDefaults(spec.generation));
  if (spec.model.type == ModelType::kSpm) {
    std::vector<float> scores(vocab);
    for (size_t i = 0; i < vocab; ++i) {
      scores[i] = spec.tokens[i].score;
      if (!std::isfinite(scores[i])) return error("token ", i, " has a non-finite score");
    }
    blocks.emplace_back(kScores, block_of(scores.data(), scores.size() * 4));
  }

  const auto align8 = [](uint64_t n) { return (n + 7) & ~uint64_t{7}; };
  uint64_t offset = align8(kHeaderBytes + kDirectoryEntryBytes * blocks.size());
  std::vector<uint64_t> block_offsets;
  for (const auto& [kind, data] : blocks) {
    block_offsets.push_back(offset);
    offset = align8(offset + data.size());
  }
  if (offset > kMaxTokenizerSectionBytes) return error("the tokenizer section exceeds 1 GiB");
  std::vector<uint8_t> out(offset, 0);
  for (size_t i = 0; i < blocks.size(); ++i) {
    uint8_t* entry = out.data() + kHeaderBytes + kDirectoryEntryBytes * i;
    const uint32_t kind = blocks[i].first;
    const uint64_t size = blocks[i].second.size();
    std::memcpy(entry, &kind, 4);
    std::memcpy(entry + 8, &block_offsets[i], 8);
    std::memcpy(entry + 16, &size, 8);
    if (size > 0) std::memcpy(out.data() + block_offsets[i], blocks[i].second.data(), size);
  }
  std::memcpy(out.data(), kTokenizerSectionMagic, 8);
  const uint32_t major = kTokenizerSectionVersionMajor;
  const uint32_t minor = kTokenizerSectionVersionMinor;
  const uint64_t total = out.size();
  const uint32_t num_blocks = static_cast<uint32_t>(blocks.size());
  std::memcpy(out.data() + 8, &major, 4);
  std::memcpy(out.data() + 12, &minor, 4);
  std::memcpy(out.data() + 16, &total, 8);
  std::memcpy(out.data() + 32, &num_blocks, 4);
  const uint64_t checksum = ChecksumBytes(out.data() + kHeaderBytes, total - kHeaderBytes);
  std::memcpy(out.data() + 24, &checksum, 8);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Loader.

bool TokenizerSection::IsPieceBigram(char32_t a, char32_t b) const {
  const uint64_t key = BigramKey(a, b);
  const uint64_t mask = bigram_slots_.size() - 1;
  uint64_t slot = Mix64(key) & mask;
  for (uint32_t k = 0; k < bigram_max_probe_; ++k) {
    const uint64_t v = bigram_slots_[slot];
    if (v == key) return true;
    if (v == 0) return false;
    slot = (slot + 1) & mask;
  }
  return false;
}

uint64_t TokenizerSection::HashSlot(uint32_t left, uint32_t right) const {
  return HashPair(left, right) & (merges_.size() - 1);
}

std::optional<TokenId> TokenizerSection::FindPiece(std::string_view piece) const {
  const uint64_t mask = piece_slots_.size() - 1;
  uint64_t slot = HashPiece(piece) & mask;
  for (uint32_t k = 0; k < piece_max_probe_; ++k) {
    const uint32_t v = piece_slots_[slot];
    if (v == 0) return std::nullopt;
    if (Piece(static_cast<TokenId>(v - 1)) == piece) return static_cast<TokenId>(v - 1);
    slot = (slot + 1) & mask;
  }
  return std::nullopt;
}

absl::StatusOr<TokenizerSection> TokenizerSection::Load(absl::Span<const uint8_t> bytes) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % kTokenizerSectionAlignment != 0) {
    return SectionError("the section does not start at a multiple of ",
                        kTokenizerSectionAlignment, " bytes");
  }
  if (bytes.size() < kHeaderBytes) {
    return SectionError(bytes.size(), " bytes is smaller than the 64-byte header");
  }
  if (std::memcmp(bytes.data(), kTokenizerSectionMagic, 8) != 0) {
    return SectionError("bad magic (not a cortiq tokenizer section)");
  }
  uint32_t major, minor, num_blocks;
  uint64_t total, checksum;
  std::memcpy(&major, bytes.data() + 8, 4);
  std::memcpy(&minor, bytes.data() + 12, 4);
  std::memcpy(&total, bytes.data() + 16, 8);
  std::memcpy(&checksum, bytes.data() + 24, 8);
  std::memcpy(&num_blocks, bytes.data() + 32, 4);
  if (major != kTokenizerSectionVersionMajor) {
    return SectionError("version ", major, ".", minor, " is not readable by this build (reads ",
                        kTokenizerSectionVersionMajor, ".x)");
  }
  if (total > bytes.size() || total < kHeaderBytes) {
    return SectionError("total_size ", total, " but ", bytes.size(), " bytes are available");
  }
  bytes = bytes.subspan(0, total);
  if (ChecksumBytes(bytes.data() + kHeaderBytes, total - kHeaderBytes) != checksum) {
    return SectionError("checksum mismatch (the section is corrupted or truncated)");
  }
  if (num_blocks > 64 || kHeaderBytes + uint64_t{num_blocks} * kDirectoryEntryBytes > total) {
    return SectionError("block directory of ", num_blocks, " entries does not fit");
  }
  absl::Span<const uint8_t> block[kNumBlockKinds];
  bool seen[kNumBlockKinds] = {false};
  for (uint32_t i = 0; i < num_blocks; ++i) {
    const uint8_t* entry = bytes.data() + kHeaderBytes + kDirectoryEntryBytes * i;
    uint32_t kind;
    uint64_t offset, size;
    std::memcpy(&kind, entry, 4);
    std::memcpy(&offset, entry + 8, 8);
    std::memcpy(&size, entry + 16, 8);
    if (kind == 0 || kind >= kNumBlockKinds) continue;  // a later minor version's block
    if (seen[kind]) return SectionError("block ", BlockName(kind), " appears twice");
    if (offset % 8 != 0 || offset > total || size > total - offset) {
      return SectionError("block ", BlockName(kind), " at ", offset, " (", size,
                          " bytes) is outside the section of ", total, " bytes");
    }
    seen[kind] = true;
    block[kind] = bytes.subspan(offset, size);
  }
  for (uint32_t kind = 1; kind < kNumBlockKinds; ++kind) {
    if (!seen[kind] && !OptionalBlock(kind)) return SectionError("missing block ", BlockName(kind));
  }

  TokenizerSection s;
  s.bytes_ = bytes;
  // Pieces.
  if (block[kPieceOffsets].size() % 4 != 0 || block[kPieceOffsets].size() < 8) {
    return SectionError("piece offsets block of ", block[kPieceOffsets].size(), " bytes");
  }
  const uint64_t vocab = block[kPieceOffsets].size() / 4 - 1;
  if (vocab > kMaxTokenizerVocab) return SectionError("vocabulary of ", vocab, " tokens");
  s.vocab_size_ = static_cast<uint32_t>(vocab);
  s.piece_offsets_ = As<uint32_t>(block[kPieceOffsets].data());
  s.piece_bytes_ = block[kPieceBytes].data();
  if (s.piece_offsets_[0] != 0 || s.piece_offsets_[vocab] != block[kPieceBytes].size()) {
    return SectionError("piece offsets do not span the piece bytes");
  }
  for (uint64_t i = 0; i < vocab; ++i) {
    if (s.piece_offsets_[i + 1] < s.piece_offsets_[i]) {
      return SectionError("piece offsets decrease at token ", i);
    }
  }
  if (block[kTokenFlags].size() != vocab) {
    return SectionError("token flags block has ", block[kTokenFlags].size(), " bytes for ",
                        vocab, " tokens");
  }
  s.token_flags_ = block[kTokenFlags].data();
  // Piece hash.
  {
    const absl::Span<const uint8_t> b = block[kPieceHash];
    if (b.size() < 8) return SectionError("piece hash block too small");
    const uint32_t capacity = As<uint32_t>(b.data())[0];
    s.piece_max_probe_ = As<uint32_t>(b.data())[1];
    if (capacity == 0 || (capacity & (capacity - 1)) != 0 || b.size() != 8 + uint64_t{capacity} * 4 ||
        s.piece_max_probe_ > capacity) {
      return SectionError("piece hash: capacity ", capacity, " does not match the block");
    }
    s.piece_slots_ = absl::MakeConstSpan(As<uint32_t>(b.data() + 8), capacity);
    uint32_t largest = 0;
    for (uint32_t v : s.piece_slots_) largest = std::max(largest, v);
    if (largest > vocab) return SectionError("piece hash names token ", largest - 1, " of ", vocab);
  }
  // Merges.
  {
    const absl::Span<const uint8_t> b = block[kMergeHash];
    if (b.size() < 16) return SectionError("merge hash block too small");
    const uint32_t capacity = As<uint32_t>(b.data())[0];
    s.merge_max_probe_ = As<uint32_t>(b.data())[1];
    s.num_merges_ = As<uint32_t>(b.data())[2];
    if (capacity == 0 || (capacity & (capacity - 1)) != 0 ||
        b.size() != 16 + uint64_t{capacity} * sizeof(MergeEntry) ||
        s.merge_max_probe_ > capacity || s.num_merges_ > capacity) {
      return SectionError("merge hash: capacity ", capacity, " does not match the block");
    }
    s.merges_ = absl::MakeConstSpan(As<MergeEntry>(b.data() + 16), capacity);
    // Branch-free: about half the slots are empty, in no predictable order.
    uint32_t used = 0;
    bool bad = false;
    const uint64_t v = vocab;
    for (const MergeEntry& e : s.merges_) {
      const bool full = e.left != kNone;
      used += full;
      bad |= full & ((e.left >= v) | (e.right >= v) | (e.result >= v));
    }
    if (bad) {
      for (const MergeEntry& e : s.merges_) {
        if (e.left != kNone && (e.left >= v || e.right >= v || e.result >= v)) {
          return SectionError("merge hash: entry (", e.left, ", ", e.right, " → ", e.result,
                              ") names a token out of range");
        }
      }
    }
    if (used != s.num_merges_) {
      return SectionError("merge hash holds ", used, " merges, the header says ", s.num_merges_);
    }
  }
  // Byte ids.
  if (block[kByteIds].size() != 256 * 4) return SectionError("byte ids block size");
  s.byte_ids_ = As<uint32_t>(block[kByteIds].data());
  for (int b = 0; b < 256; ++b) {
    if (s.byte_ids_[b] != kNone && s.byte_ids_[b] >= vocab) {
      return SectionError("byte id of 0x", absl::Hex(b), " out of range");
    }
  }
  // Added tokens.
  {
    const absl::Span<const uint8_t> b = block[kAddedTokens];
    if (b.size() < 8) return SectionError("added tokens block too small");
    const uint32_t count = As<uint32_t>(b.data())[0];
    const uint32_t pool = As<uint32_t>(b.data())[1];
    if (b.size() != 8 + uint64_t{count} * sizeof(AddedTokenEntry) + pool) {
      return SectionError("added tokens: ", count, " tokens and ", pool,
                          " pool bytes do not match the block");
    }
    s.added_tokens_ = absl::MakeConstSpan(As<AddedTokenEntry>(b.data() + 8), count);
    s.added_pool_ = b.data() + 8 + uint64_t{count} * sizeof(AddedTokenEntry);
    for (const AddedTokenEntry& e : s.added_tokens_) {
      if (e.id >= vocab || e.offset > pool || e.size > pool - e.offset || e.size == 0) {
        return SectionError("added token ", e.id, " out of range");
      }
    }
    CORTIQ_RETURN_IF_ERROR(LoadTrie(block[kRawTrie], count, "raw added-token trie", &s.raw_trie_));
    CORTIQ_RETURN_IF_ERROR(LoadTrie(block[kNormalizedTrie], count, "normalized added-token trie",
                                    &s.normalized_trie_));
  }
  CORTIQ_RETURN_IF_ERROR(DecodeConfig(block[kConfig], s.vocab_size_, &s.config_));
  if (s.config_.model_type == ModelType::kSpm) {
    if (!seen[kScores]) return SectionError("missing block scores (an SPM model)");
    if (block[kScores].size() != vocab * 4) {
      return SectionError("scores block has ", block[kScores].size(), " bytes for ", vocab,
                          " tokens");
    }
    s.scores_ = As<float>(block[kScores].data());
    for (uint64_t i = 0; i < vocab; ++i) {
      if (!std::isfinite(s.scores_[i])) return SectionError("score of token ", i, " is not finite");
    }
  }
  if (seen[kSamplingDefaults]) {
    CORTIQ_RETURN_IF_ERROR(
        DecodeSamplingDefaults(block[kSamplingDefaults], &s.config_.generation));
  }
  {
    const absl::Span<const uint8_t> b = block[kBigramHash];
    if (b.size() < 16) return SectionError("bigram hash block too small");
    const uint32_t capacity = As<uint32_t>(b.data())[0];
    s.bigram_max_probe_ = As<uint32_t>(b.data())[1];
    s.split_at_foreign_bigrams_ = As<uint32_t>(b.data())[2] == 1;
    if (capacity == 0 || (capacity & (capacity - 1)) != 0 ||
        b.size() != 16 + uint64_t{capacity} * 8 || s.bigram_max_probe_ > capacity) {
      return SectionError("bigram hash: capacity ", capacity, " does not match the block");
    }
    s.bigram_slots_ = absl::MakeConstSpan(As<uint64_t>(b.data() + 16), capacity);
  }
  return s;
}

}  // namespace cortiq::text
