// SerializePlan and ParsePlan (plan_encoding.h): little-endian scalars, sized records written
// and read by visitors over the field description (plan_fields.h), and the reader of format 2.0.
#include "runtime/plan_encoding.h"

#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "runtime/plan_fields.h"

namespace cortiq {
namespace {

// Largest weight rank the decoder accepts (ValidatePlan allows 8; 1 and 2 are used).
constexpr uint32_t kMaxRank = 8;

// Appends little-endian values to a byte string.
class Writer {
 public:
  void U8(uint8_t v) { Put(v, 1); }
  void U32(uint32_t v) { Put(v, 4); }
  void I32(int32_t v) { Put(static_cast<uint32_t>(v), 4); }
  void U64(uint64_t v) { Put(v, 8); }
  void I64(int64_t v) { Put(static_cast<uint64_t>(v), 8); }
  void F64(double v) {
    uint64_t bits;
    static_assert(sizeof(bits) == sizeof(v));
    std::memcpy(&bits, &v, sizeof(bits));
    Put(bits, 8);
  }
  void Str(const std::string& s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  size_t size() const { return out_.size(); }
  // Overwrites the u32 at byte `at`.
  void Patch32(size_t at, uint32_t v) {
    for (size_t i = 0; i < 4; ++i) out_[at + i] = static_cast<char>(v >> (8 * i));
  }
  std::string Take() { return std::move(out_); }

 private:
  void Put(uint64_t v, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  std::string out_;
};

// Reads little-endian values from [data, data + size); every read is bounds-checked and errors
// name the field and its byte offset.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t remaining() const { return size_ - pos_; }
  size_t position() const { return pos_; }
  // Moves to byte `at` (position() <= at <= size).
  void SkipTo(size_t at) { pos_ = at; }

  absl::Status U8(absl::string_view what, uint8_t* v) { return Get(what, 1, v); }
  absl::Status U32(absl::string_view what, uint32_t* v) { return Get(what, 4, v); }
  absl::Status U64(absl::string_view what, uint64_t* v) { return Get(what, 8, v); }
  absl::Status I32(absl::string_view what, int32_t* v) {
    uint32_t u = 0;
    CORTIQ_RETURN_IF_ERROR(Get(what, 4, &u));
    *v = static_cast<int32_t>(u);
    return absl::OkStatus();
  }
  absl::Status I64(absl::string_view what, int64_t* v) {
    uint64_t u = 0;
    CORTIQ_RETURN_IF_ERROR(Get(what, 8, &u));
    *v = static_cast<int64_t>(u);
    return absl::OkStatus();
  }
  absl::Status F64(absl::string_view what, double* v) {
    uint64_t bits = 0;
    CORTIQ_RETURN_IF_ERROR(Get(what, 8, &bits));
    std::memcpy(v, &bits, sizeof(bits));
    return absl::OkStatus();
  }
  absl::Status Bool(absl::string_view what, bool* v) {
    uint8_t b = 0;
    const size_t at = pos_;
    CORTIQ_RETURN_IF_ERROR(U8(what, &b));
    if (b > 1) return Error(what, at, absl::StrCat("bool byte is ", b));
    *v = b != 0;
    return absl::OkStatus();
  }
  absl::Status Str(absl::string_view what, std::string* s) {
    uint32_t n = 0;
    const size_t at = pos_;
    CORTIQ_RETURN_IF_ERROR(U32(what, &n));
    if (n > remaining()) {
      return Error(what, at, absl::StrCat("string of ", n, " bytes, only ", remaining(), " left"));
    }
    s->assign(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return absl::OkStatus();
  }
  // A u32 count and that many u64 (the count bounded by the remaining bytes).
  absl::Status U64List(absl::string_view what, std::vector<uint64_t>* values) {
    uint32_t n = 0;
    const size_t at = pos_;
    CORTIQ_RETURN_IF_ERROR(U32(what, &n));
    if (n > remaining() / 8) {
      return Error(what, at,
                   absl::StrCat(n, " values of 8 bytes, only ", remaining(), " bytes left"));
    }
    values->resize(n);
    for (uint64_t& v : *values) CORTIQ_RETURN_IF_ERROR(U64(what, &v));
    return absl::OkStatus();
  }
  absl::Status Shape(absl::string_view what, std::vector<int64_t>* shape) {
    uint32_t rank = 0;
    const size_t at = pos_;
    CORTIQ_RETURN_IF_ERROR(U32(what, &rank));
    if (rank > kMaxRank) return Error(what, at, absl::StrCat("rank ", rank, " exceeds ", kMaxRank));
    shape->resize(rank);
    for (int64_t& d : *shape) CORTIQ_RETURN_IF_ERROR(I64(what, &d));
    return absl::OkStatus();
  }
  // Reads a u64 count of records of at least `min_record_bytes` each; the count may not exceed
  // what the remaining bytes can hold (so a hostile count cannot trigger a huge allocation).
  absl::Status Count(absl::string_view what, size_t min_record_bytes, size_t* n) {
    uint64_t v = 0;
    const size_t at = pos_;
    CORTIQ_RETURN_IF_ERROR(U64(what, &v));
    if (v > remaining() / min_record_bytes) {
      return Error(what, at,
                   absl::StrCat("count ", v, " exceeds the ", remaining(), " remaining bytes (",
                                min_record_bytes, " per record)"));
    }
    *n = static_cast<size_t>(v);
    return absl::OkStatus();
  }

  absl::Status Error(absl::string_view what, size_t at, absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata: ", what, " at byte ", at, ": ", message));
  }

 private:
  template <typename T>
  absl::Status Get(absl::string_view what, size_t bytes, T* v) {
    if (remaining() < bytes) return Error(what, pos_, "truncated");
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(data_[pos_ + i]) << (8 * i);
    *v = static_cast<T>(value);
    pos_ += bytes;
    return absl::OkStatus();
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Writes each field a description visits (plan_fields.h).
struct FieldWriter {
  Writer& w;
  void operator()(const char*, const std::string& v) { w.Str(v); }
  void operator()(const char*, bool v) { w.U8(v ? 1 : 0); }
  void operator()(const char*, int32_t v) { w.I32(v); }
  void operator()(const char*, int64_t v) { w.I64(v); }
  void operator()(const char*, uint64_t v) { w.U64(v); }
  void operator()(const char*, double v) { w.F64(v); }
  void operator()(const char*, WeightFormat v) { w.U32(static_cast<uint32_t>(v)); }
  void operator()(const char*, StepKind v) { w.U32(static_cast<uint32_t>(v)); }
  void operator()(const char*, StepRows v) { w.U32(static_cast<uint32_t>(v)); }
  void operator()(const char*, const std::vector<int64_t>& shape) {
    w.U32(static_cast<uint32_t>(shape.size()));
    for (int64_t d : shape) w.I64(d);
  }
  void operator()(const char*, const std::vector<uint64_t>& values) {
    w.U32(static_cast<uint32_t>(values.size()));
    for (uint64_t v : values) w.U64(v);
  }
  template <class T>
  void operator()(StepField, const char* name, const T& v) {
    (*this)(name, v);
  }
};

// One record, u32 size first: `visit(FieldWriter&)` writes its fields.
template <class Visit>
void WriteRecord(Writer& w, Visit&& visit) {
  const size_t at = w.size();
  w.U32(0);  // the size, patched below
  FieldWriter fields{w};
  visit(fields);
  w.Patch32(at, static_cast<uint32_t>(w.size() - at - 4));
}

// Reads the fields a description visits, for one record that ends at byte `end` and holds at
// most `max_fields` fields: a field at or past the end, or past max_fields, is absent (an older
// format's shorter record) and keeps its default; one that crosses the end is an error. The
// first error stops the reads (status()).
class FieldReader {
 public:
  FieldReader(Reader& r, absl::string_view record, size_t end, size_t max_fields)
      : r_(r), record_(record), end_(end), fields_left_(max_fields) {}
  absl::Status status() const { return status_; }
  // The first field past the record's end, or null.
  const char* first_absent() const { return absent_.empty() ? nullptr : absent_.front(); }
  // True if the record ended before field `name` (an older minor's record): it kept its default.
  bool Absent(absl::string_view name) const {
    for (const char* a : absent_) {
      if (name == a) return true;
    }
    return false;
  }

  template <class T>
  void operator()(const char* name, T& v) {
    if (!status_.ok()) return;
    if (r_.position() >= end_ || fields_left_ == 0) {
      absent_.push_back(name);
      return;
    }
    --fields_left_;
    const std::string what = absl::StrCat(record_, ".", name);
    const size_t at = r_.position();
    status_ = Read(what, &v);
    if (status_.ok() && r_.position() > end_) {
      status_ = r_.Error(what, at, absl::StrCat("crosses the end of its record at byte ", end_));
    }
  }
  template <class T>
  void operator()(StepField, const char* name, T& v) {
    (*this)(name, v);
  }

 private:
  absl::Status Read(absl::string_view what, std::string* v) { return r_.Str(what, v); }
  absl::Status Read(absl::string_view what, bool* v) { return r_.Bool(what, v); }
  absl::Status Read(absl::string_view what, int32_t* v) { return r_.I32(what, v); }
  absl::Status Read(absl::string_view what, int64_t* v) { return r_.I64(what, v); }
  absl::Status Read(absl::string_view what, uint64_t* v) { return r_.U64(what, v); }
  absl::Status Read(absl::string_view what, double* v) { return r_.F64(what, v); }
  absl::Status Read(absl::string_view what, std::vector<int64_t>* v) { return r_.Shape(what, v); }
  absl::Status Read(absl::string_view what, std::vector<uint64_t>* v) {
    return r_.U64List(what, v);
  }
  // Enums as u32; values are checked by ValidatePlan.
  absl::Status Read(absl::string_view what, WeightFormat* v) { return Enum(what, v); }
  absl::Status Read(absl::string_view what, StepKind* v) { return Enum(what, v); }
  absl::Status Read(absl::string_view what, StepRows* v) { return Enum(what, v); }
  template <class E>
  absl::Status Enum(absl::string_view what, E* v) {
    uint32_t u = 0;
    CORTIQ_RETURN_IF_ERROR(r_.U32(what, &u));
    *v = static_cast<E>(u);
    return absl::OkStatus();
  }

  Reader& r_;
  absl::string_view record_;
  size_t end_;
  size_t fields_left_;
  absl::Status status_;
  std::vector<const char*> absent_;  // fields past the record's end
};

// One record named `record`: sized (format 3: u32 size, then fields; bytes past the known fields
// skipped) or not (format 2: its first `v2_fields` fields, those 2.0 had; the fields appended
// since keep their defaults). `visit(FieldReader&)` reads its fields.
// What a sized record of the file's minor may differ in from this build's: an older minor's
// lacks the fields appended since (they keep their defaults), a newer minor's carries fields
// this build skips; a record of this build's own minor holds exactly its fields, so that it
// re-serializes to the same bytes.
struct MinorRules {
  bool fields_may_be_absent = false;
  bool extra_bytes_allowed = false;
};

template <class Visit>
absl::Status ReadRecord(Reader& r, absl::string_view record, bool sized, size_t v2_fields,
                        const MinorRules& rules, Visit&& visit) {
  size_t end = std::numeric_limits<size_t>::max();
  if (sized) {
    uint32_t size = 0;
    const size_t at = r.position();
    const std::string what = absl::StrCat(record, " record size");
    CORTIQ_RETURN_IF_ERROR(r.U32(what, &size));
    if (size > r.remaining()) {
      return r.Error(what, at,
                     absl::StrCat("record of ", size, " bytes, only ", r.remaining(), " left"));
    }
    end = r.position() + size;
  }
  const size_t begin = r.position();
  FieldReader fields(r, record, end, sized ? std::numeric_limits<size_t>::max() : v2_fields);
  visit(fields);
  CORTIQ_RETURN_IF_ERROR(fields.status());
  if (sized) {
    if (!rules.fields_may_be_absent && fields.first_absent() != nullptr) {
      return r.Error(absl::StrCat(record, ".", fields.first_absent()), begin,
                     "missing: the record ends before it, and this format version writes it");
    }
    if (!rules.extra_bytes_allowed && r.position() != end) {
      return r.Error(absl::StrCat(record, " record size"), begin,
                     absl::StrCat(end - r.position(), " bytes after its last field (only a newer "
                                  "format minor appends fields)"));
    }
    r.SkipTo(end);  // fields a newer minor appended
  }
  return absl::OkStatus();
}

// A u64 count and that many records of `min_record_bytes` at least, each read by
// `read(FieldReader&, element)`.
template <class T, class Read>
absl::Status ReadList(Reader& r, absl::string_view record, bool sized, size_t min_record_bytes,
                      size_t v2_fields, const MinorRules& rules, std::vector<T>* list,
                      Read&& read) {
  size_t n = 0;
  CORTIQ_RETURN_IF_ERROR(r.Count(absl::StrCat(record, " count"), min_record_bytes, &n));
  list->resize(n);
  for (T& element : *list) {
    CORTIQ_RETURN_IF_ERROR(
        ReadRecord(r, record, sized, v2_fields, rules,
                   [&](FieldReader& f) { read(f, element); }));
  }
  return absl::OkStatus();
}

template <class T, class Write>
void WriteList(Writer& w, const std::vector<T>& list, Write&& write) {
  w.U64(list.size());
  for (const T& element : list) {
    WriteRecord(w, [&](FieldWriter& f) { write(f, element); });
  }
}

// --- Format 2.0 ---------------------------------------------------------------------------

// The fields of its records, the first of each record's description (plan_fields.h).
constexpr size_t kV2ModelFields = 5;
constexpr size_t kV2WeightFields = 5;  // name .. size_bytes (no xxh3_64)
constexpr size_t kV2BufferFields = 3;
constexpr size_t kV2CacheFields = 5;
constexpr size_t kV2TapFields = 2;
constexpr size_t kV2PlanFields = 3;  // logits_buffer, arena_bytes, max_batch
// Minimum encoded sizes of its records (for Reader::Count).
constexpr size_t kV2WeightMinBytes = 4 + 4 + 4 + 8 + 8;  // name length, format, rank, offset, size
constexpr size_t kV2BufferBytes = 8 + 8 + 4;
constexpr size_t kV2CacheBytes = 8 + 1 + 8 + 8 + 8;
constexpr size_t kV2StepBytes = 4 + 6 * 4 + 2 * 8 + 2 * 8 + 1;
constexpr size_t kV2TapMinBytes = 4 + 4;

// A 2.0 step record: the operands, then the generic parameter slots i0, i1 (i64), f0, f1 (f64),
// which held each kind's parameters as below (f1 was never used; slots a kind did not use are
// ignored).
absl::Status ReadV2Step(Reader& r, Step* s) {
  uint32_t kind = 0;
  int64_t i0 = 0, i1 = 0;
  double f0 = 0, f1 = 0;
  CORTIQ_RETURN_IF_ERROR(r.U32("step.kind", &kind));
  s->kind = static_cast<StepKind>(kind);
  CORTIQ_RETURN_IF_ERROR(r.I32("step.out", &s->out));
  CORTIQ_RETURN_IF_ERROR(r.I32("step.in0", &s->in0));
  CORTIQ_RETURN_IF_ERROR(r.I32("step.in1", &s->in1));
  CORTIQ_RETURN_IF_ERROR(r.I32("step.weight", &s->weight));
  CORTIQ_RETURN_IF_ERROR(r.I32("step.weight2", &s->scalar));
  CORTIQ_RETURN_IF_ERROR(r.I32("step.cache", &s->cache));
  CORTIQ_RETURN_IF_ERROR(r.I64("step.i0", &i0));
  CORTIQ_RETURN_IF_ERROR(r.I64("step.i1", &i1));
  CORTIQ_RETURN_IF_ERROR(r.F64("step.f0", &f0));
  CORTIQ_RETURN_IF_ERROR(r.F64("step.f1", &f1));
  CORTIQ_RETURN_IF_ERROR(r.Bool("step.logits_only", &s->logits_only));
  switch (s->kind) {
    case StepKind::kEmbedding:
      s->scale = f0;
      break;
    case StepKind::kRmsNorm:
    case StepKind::kResidualRmsNorm:
      s->group_size = i0;
      s->eps = f0;
      break;
    case StepKind::kRope:
      s->head_dim = i0;
      s->rotated_pairs = i1;
      s->theta = f0;
      break;
    case StepKind::kAttention:
      s->num_heads = i0;
      s->window = i1;
      s->scale = f0;
      break;
    case StepKind::kScale:
      s->factor = f0;
      break;
    case StepKind::kSoftcap:
      s->cap = f0;
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

}  // namespace

std::string SerializePlan(const Plan& plan) { return SerializeMetadata(plan, {}); }

std::string SerializeMetadata(const Plan& plan, const std::vector<SectionEntry>& sections) {
  Writer w;
  WriteRecord(w, [&](FieldWriter& f) { VisitModelInfo(plan.model, f); });
  WriteList(w, plan.weights, [](FieldWriter& f, const WeightEntry& e) { VisitWeightEntry(e, f); });
  WriteList(w, plan.buffers, [](FieldWriter& f, const BufferEntry& e) { VisitBufferEntry(e, f); });
  WriteList(w, plan.caches, [](FieldWriter& f, const CacheEntry& e) { VisitCacheEntry(e, f); });
  WriteList(w, plan.steps, [](FieldWriter& f, const Step& e) { VisitStep(e, f); });
  WriteList(w, plan.taps, [](FieldWriter& f, const Tap& e) { VisitTap(e, f); });
  WriteRecord(w, [&](FieldWriter& f) { VisitPlanScalars(plan, f); });
  if (!sections.empty()) {
    WriteList(w, sections, [](FieldWriter& f, const SectionEntry& e) { VisitSectionEntry(e, f); });
  }
  return w.Take();
}

absl::StatusOr<Plan> ParsePlan(const uint8_t* data, size_t size, uint32_t major,
                               uint32_t minor) {
  CORTIQ_ASSIGN_OR_RETURN(ArtifactMetadata metadata, ParseMetadata(data, size, major, minor));
  return std::move(metadata.plan);
}

absl::StatusOr<ArtifactMetadata> ParseMetadata(const uint8_t* data, size_t size, uint32_t major,
                                               uint32_t minor) {
  const bool v2 = major == 2 && minor == 0;
  if (major != kPlanFormatMajor && !v2) {
    return absl::InvalidArgumentError(absl::StrCat("metadata: format v", major, ".", minor,
                                                   " is not read by this build (it reads v2.0 "
                                                   "and v", kPlanFormatMajor, ".x)"));
  }
  const bool sized = !v2;
  MinorRules rules;
  rules.fields_may_be_absent = major == kPlanFormatMajor && minor < kPlanFormatMinor;
  rules.extra_bytes_allowed = major == kPlanFormatMajor && minor > kPlanFormatMinor;
  Reader r(data, size);
  ArtifactMetadata metadata;
  Plan& plan = metadata.plan;
  CORTIQ_RETURN_IF_ERROR(
      ReadRecord(r, "model", sized, kV2ModelFields, rules,
                 [&](FieldReader& f) { VisitModelInfo(plan.model, f); }));
  // Format 3 records are at least their u32 size.
  CORTIQ_RETURN_IF_ERROR(ReadList(r, "weight", sized, sized ? 4 : kV2WeightMinBytes,
                                  kV2WeightFields, rules, &plan.weights,
                                  [](FieldReader& f, WeightEntry& e) { VisitWeightEntry(e, f); }));
  CORTIQ_RETURN_IF_ERROR(ReadList(r, "buffer", sized, sized ? 4 : kV2BufferBytes, kV2BufferFields,
                                  rules, &plan.buffers,
                                  [](FieldReader& f, BufferEntry& e) { VisitBufferEntry(e, f); }));
  CORTIQ_RETURN_IF_ERROR(ReadList(r, "cache", sized, sized ? 4 : kV2CacheBytes, kV2CacheFields,
                                  rules, &plan.caches,
                                  [](FieldReader& f, CacheEntry& e) { VisitCacheEntry(e, f); }));
  if (sized) {
    CORTIQ_RETURN_IF_ERROR(ReadList(r, "step", sized, 4, 0, rules, &plan.steps,
                                    [](FieldReader& f, Step& e) {
                                      VisitStep(e, f);
                                      // Before 3.1 the logits_only steps were the ones that ran
                                      // on the logits rows only.
                                      if (f.Absent("rows")) {
                                        e.rows = e.logits_only ? StepRows::kLogits
                                                               : StepRows::kAll;
                                      }
                                    }));
  } else {
    size_t n = 0;
    CORTIQ_RETURN_IF_ERROR(r.Count("step count", kV2StepBytes, &n));
    plan.steps.resize(n);
    for (Step& s : plan.steps) {
      CORTIQ_RETURN_IF_ERROR(ReadV2Step(r, &s));
      s.rows = s.logits_only ? StepRows::kLogits : StepRows::kAll;
    }
  }
  CORTIQ_RETURN_IF_ERROR(ReadList(r, "tap", sized, sized ? 4 : kV2TapMinBytes, kV2TapFields,
                                  rules, &plan.taps,
                                  [](FieldReader& f, Tap& e) { VisitTap(e, f); }));
  CORTIQ_RETURN_IF_ERROR(
      ReadRecord(r, "plan", sized, kV2PlanFields, rules,
                 [&](FieldReader& f) { VisitPlanScalars(plan, f); }));
  // 3.1: the section list, if any bytes follow.
  if (sized && minor >= 1 && r.remaining() != 0) {
    CORTIQ_RETURN_IF_ERROR(ReadList(r, "section", sized, 4, 0, rules, &metadata.sections,
                                    [](FieldReader& f, SectionEntry& e) { VisitSectionEntry(e, f); }));
  }
  // A newer minor may append more; anything else after the last record is an error.
  const bool newer_minor = major == kPlanFormatMajor && minor > kPlanFormatMinor;
  if (r.remaining() != 0 && !newer_minor) {
    return r.Error("end", r.position(),
                   absl::StrCat(r.remaining(), " unexpected trailing bytes"));
  }
  return metadata;
}

}  // namespace cortiq
