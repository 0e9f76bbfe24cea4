// The binary encoding of a Plan: the metadata section of an artifact (runtime/artifact.h).
// SerializePlan writes and ParsePlan reads the records field by field as runtime/plan_fields.h
// describes them, so the two cannot drift apart; ParsePlan also reads the layout of format 2.0.
//
// Format 3 (written by this build): all integers little-endian.
//   metadata = model record,
//              u64 count + weight records, u64 count + buffer records,
//              u64 count + cache records, u64 count + step records, u64 count + tap records,
//              plan record (logits_buffer, arena_bytes, max_batch),
//              [3.1: u64 count + section records (name, offset, size); absent = no sections]
//   record   = u32 size (bytes of the fields after it), then the record's fields in the order of
//              plan_fields.h: i32/i64/u64 two's complement, f64 IEEE binary64, bool one byte 0/1,
//              WeightFormat, StepKind and StepRows as u32, a string as u32 length + bytes, a
//              weight shape as u32 rank + rank i64, a list of hashes as u32 count + count u64.
//              A step record holds every Step field (113 bytes).
// Minor versions: 3.1 appends WeightEntry::xxh3_64 to the weight record and
// Plan::weight_hash_chunk_bytes to the plan record (the weights' chunk hashes,
// runtime/weight_hash.h; absent in 3.0: no hashes), and Step::rows to the step record (a 3.0
// record without it reads as rows = logits for its logits_only steps and all for the others,
// what 3.0 executors ran).
// 3.1 also appends the section list: byte ranges of the artifact file outside the metadata and
// the weights, each named (kTokenizerSectionName: the tokenizer, runtime/text/tokenizer_section.h),
// which the artifact reader checks and exposes (runtime/artifact.h). A 3.0 reader skips the list.
// 3.2 adds WeightFormat values 4..14 (F16 and llama.cpp's other block formats); no record
// changes.
//
// Growing it within major 3: a minor version appends fields at the end of a record (and sections
// after the plan record); a reader skips the fields it does not know at the end of a record
// (and, for a newer minor, bytes after the plan record) and gives fields a shorter record lacks
// their default, so an appended field's default must mean what files without it meant. A
// change an older reader must not ignore (a new meaning for an existing field, a new kernel
// behind an existing kind) takes a new major.
//
// Format 2.0 (read only): the same records in the same order without the size prefix, except
// steps: kind (u32), out, in0, in1, weight, weight2 (= scalar), cache (i32), i0, i1 (i64), f0, f1
// (f64), logits_only (u8), 61 bytes, each kind's parameters held in the generic i0, i1, f0.
#ifndef CORTIQ_RUNTIME_PLAN_ENCODING_H_
#define CORTIQ_RUNTIME_PLAN_ENCODING_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/plan.h"

namespace cortiq {

// The metadata format versions: 3.2 is written; 2.0 and 3.x are read. 3.1: the weight hashes,
// step rows and the section list; 3.2: the weight formats kF16 .. kIQ4_XS (values an older 3.x
// reader rejects in ValidatePlan: "unknown format").
inline constexpr uint32_t kPlanFormatMajor = 3;
inline constexpr uint32_t kPlanFormatMinor = 2;
// The oldest format major ParsePlan reads.
inline constexpr uint32_t kOldestPlanFormatMajor = 2;

// Name of the section holding the tokenizer (runtime/text/tokenizer_section.h).
inline constexpr char kTokenizerSectionName[] = "tokenizer";

// One named byte range of the artifact file (3.1): `size` bytes at `offset` from the file start.
struct SectionEntry {
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// The decoded metadata: the plan and the section list.
struct ArtifactMetadata {
  Plan plan;
  std::vector<SectionEntry> sections;
};

// Encodes `plan` in format kPlanFormatMajor.kPlanFormatMinor, followed by `sections` when there
// are any. Does not validate the plan.
std::string SerializeMetadata(const Plan& plan, const std::vector<SectionEntry>& sections);
// SerializeMetadata(plan, {}).
std::string SerializePlan(const Plan& plan);

// Decodes `size` bytes written in format `major`.`minor` (the artifact header's version).
// Bounds-checked: every count is at most the number of records the remaining bytes can hold,
// every record and string fits the remaining bytes, no field crosses the end of its record,
// bools are 0/1, weight ranks at most 8, and all bytes are consumed (but those after the plan
// record of a newer minor). Fields a record lacks keep their defaults, but for Step::rows (see
// above). Does not run ValidatePlan. Errors: InvalidArgument "metadata: ..."
// naming the record and field and the byte offset, or the version if it is not read.
// Also reads the section list of a 3.1+ file (not its contents: Artifact::Open checks the ranges).
absl::StatusOr<ArtifactMetadata> ParseMetadata(const uint8_t* data, size_t size,
                                               uint32_t major = kPlanFormatMajor,
                                               uint32_t minor = kPlanFormatMinor);
// ParseMetadata's plan.
absl::StatusOr<Plan> ParsePlan(const uint8_t* data, size_t size,
                               uint32_t major = kPlanFormatMajor,
                               uint32_t minor = kPlanFormatMinor);

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_PLAN_ENCODING_H_
