// cortiq-bench: prompt-processing and generation speed of a compiled artifact, like llama-bench,
// reported against the weight bytes each token streams and the machine's measured read
// bandwidth (the decode roofline).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/json_writer.h"
#include "runtime/artifact.h"
#include "runtime/sequence.h"
#include "ops/cpu_features.h"
#include "ops/linear_vnni.h"
#include "ops/matmul_bf16_activations.h"
#include "ops/matmul_q8_activations.h"
#include "runtime/session.h"
#include "base/status_macros.h"
#include "tools/common/flags.h"
#include "tools/cortiq-bench/cache_size.h"
#include "tools/cortiq-bench/memory_bandwidth.h"
#include "tools/cortiq-bench/read_stream.h"

namespace cortiq {
namespace {

// The command line (main declares the flags; the names are llama-bench's).
struct BenchFlags {
  std::string model;
  std::string p = "512";
  std::string n = "128";
  std::string t = "1,2";
  std::string d = "0";
  std::string kv_type = "f32";
  std::string prefill_activations = "f32";
  // llama-bench's -mmp: 2 = map, matrices read into memory (the tools' default), 1 = map
  // everything, 0 = read everything into memory.
  int64_t mmap = 2;
  bool profile = false;
  std::string b = "0";
  int64_t r = 5;
  bool json = false;
  std::string output = "md";
  bool measure_bandwidth = true;
  bool warmup = true;
  double bandwidth_gbs = 0.0;
  int64_t llc_mb = -1;
};
BenchFlags flag_values;

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

absl::StatusOr<std::vector<int64_t>> ParseList(const std::string& flag, const std::string& text,
                                               int64_t min_value) {
  std::vector<int64_t> values;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v)) {
      return absl::InvalidArgumentError(
          part.empty() ? absl::StrCat("-", flag, ": '", text, "' has an empty entry")
                       : absl::StrCat("-", flag, ": '", part, "' is not an integer"));
    }
    if (v < min_value || v > (int64_t{1} << 30)) {
      return absl::InvalidArgumentError(absl::StrCat("-", flag, ": ", v, " is not in [", min_value,
                                                     ", ", int64_t{1} << 30, "]"));
    }
    values.push_back(v);
  }
  if (values.empty()) return absl::InvalidArgumentError(absl::StrCat("-", flag, " is empty"));
  return values;
}

// Weight bytes one token reads: every matrix of a linear / LM-head step, one row of each
// embedding table, the gains and scalars of the norms (by each kind's cost class,
// runtime/step_kind.h). This is what decode streams from memory. Without `with_logits`, only the
// steps of rows = all: what a prompt token whose logits nobody reads runs.
uint64_t WeightBytesPerToken(const Plan& plan, bool with_logits) {
  uint64_t bytes = 0;
  for (const Step& step : plan.steps) {
    if (step.rows == StepRows::kLogits && !with_logits) continue;
    const bool one_row = FindStepKind(step.kind)->cost == StepCost::kTableRow;
    for (int32_t w : {step.weight, step.scalar}) {
      if (w < 0) continue;
      const WeightEntry& entry = plan.weights[w];
      if (one_row && !entry.shape.empty() && entry.shape[0] > 0) {
        bytes += entry.size_bytes / static_cast<uint64_t>(entry.shape[0]);
      } else {
        bytes += entry.size_bytes;
      }
    }
  }
  return bytes;
}

// Time per token by step kind over one test: the plan's steps grouped by kind, in table order.
struct KindTime {
  const char* kind;
  int steps = 0;
  double seconds_per_token = 0;
};

std::vector<KindTime> ProfileByKind(const Plan& plan, const std::vector<double>& step_seconds,
                                    double tokens) {
  std::vector<KindTime> kinds;
  for (const StepKindInfo& info : StepKinds()) {
    KindTime k{info.name};
    for (size_t i = 0; i < plan.steps.size() && i < step_seconds.size(); ++i) {
      if (plan.steps[i].kind != info.kind) continue;
      ++k.steps;
      k.seconds_per_token += step_seconds[i] / tokens;
    }
    if (k.steps > 0) kinds.push_back(k);
  }
  return kinds;
}

struct Result {
  std::string test;  // "pp512" / "tg128", with " @ d4096" at a depth
  int64_t depth = 0;
  int threads = 1;
  int64_t batch = 1;  // tokens per evaluation (prompt tests)
  double median = 0, min = 0, max = 0;  // tokens/s
  double gbs = 0;                       // weight GB/s at the median
  double bandwidth_percent = 0;         // of the measured read bandwidth
  bool cached = false;  // the bytes a token reads fit in the last-level cache: no percent
  std::vector<KindTime> profile;        // --profile
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

absl::Status Run(const std::string& path) {
  CORTIQ_ASSIGN_OR_RETURN(std::vector<int64_t> prompts,
                          ParseList("p", flag_values.p, 0));
  CORTIQ_ASSIGN_OR_RETURN(std::vector<int64_t> gens, ParseList("n", flag_values.n, 0));
  CORTIQ_ASSIGN_OR_RETURN(std::vector<int64_t> threads,
                          ParseList("t", flag_values.t, 1));
  CORTIQ_ASSIGN_OR_RETURN(std::vector<int64_t> batches,
                          ParseList("b", flag_values.b, 0));
  CORTIQ_ASSIGN_OR_RETURN(std::vector<int64_t> depths, ParseList("d", flag_values.d, 0));
  const bool profile = flag_values.profile;
  const int64_t reps = flag_values.r;
  if (reps < 1 || reps > 1000) return absl::InvalidArgumentError("-r must be in [1, 1000]");
  for (int64_t t : threads) {
    if (t > 256) return absl::InvalidArgumentError("-t: at most 256 threads");
  }
  for (int64_t b : batches) {
    // The other tools' -b range (runtime/plan.h kMaxBatch).
    if (b > kMaxBatch) {
      return absl::InvalidArgumentError(
          absl::StrCat("-b: at most ", kMaxBatch, " tokens (got ", b, ")"));
    }
  }

  const Clock::time_point load_begin = Clock::now();
  CORTIQ_ASSIGN_OR_RETURN(
      std::unique_ptr<Artifact> artifact,
      Artifact::Open(path, flag_values.mmap == 0   ? ArtifactLoad::kRead
                           : flag_values.mmap == 1 ? ArtifactLoad::kMap
                                                   : ArtifactLoad::kReadMatrices));
  const Plan& plan = artifact->plan();
  const int32_t vocab = static_cast<int32_t>(plan.model.vocab_size);
  int64_t longest = 1;
  for (int64_t p : prompts) longest = std::max(longest, p);
  for (int64_t n : gens) longest = std::max(longest, n);
  int64_t deepest = 0;
  for (int64_t d : depths) deepest = std::max(deepest, d);
  if (deepest + longest + 1 > plan.model.max_position_embeddings) {
    return absl::InvalidArgumentError(absl::StrCat(
        "-d/-p/-n: ", deepest, " + ", longest, " tokens do not fit the model's "
        "max_position_embeddings (", plan.model.max_position_embeddings, ")"));
  }
  SessionOptions options;
  options.ctx_size = deepest + longest + 1;
  options.threads = static_cast<int>(threads[0]);
  const std::optional<KvType> kv_type = KvTypeFromName(flag_values.kv_type);
  if (!kv_type) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--kv-type: '", flag_values.kv_type, "' is not f32 or f16"));
  }
  options.kv_type = *kv_type;
  const std::optional<PrefillActivations> activations =
      PrefillActivationsFromName(flag_values.prefill_activations);
  if (!activations) {
    return absl::InvalidArgumentError(absl::StrCat("--prefill-activations: '",
                                                   flag_values.prefill_activations,
                                                   "' is not f32, q8_0 or bf16"));
  }
  options.prefill_activations = *activations;
  double load_ms = 0;
  int64_t max_batch = 1;  // the session's resolved batch size for batch_size 0
  {
    CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Session> first, Session::Create(*artifact, options));
    CORTIQ_RETURN_IF_ERROR(first->Eval(2, true));
    max_batch = first->batch_size();
    load_ms = 1e3 * Seconds(load_begin, Clock::now());
  }

  // Deterministic pseudo-random token ids (LCG), away from the special ids 0..3.
  std::vector<int32_t> tokens(static_cast<size_t>(deepest + longest));
  // The warm-up runs' own ids (the generator continued): like llama-bench's, its random tokens
  // are not the timed ones, so it does not pre-read the timed tokens' embedding rows.
  std::vector<int32_t> warmup_tokens(static_cast<size_t>(longest));
  uint64_t state = 12345;
  for (std::vector<int32_t>* ids : {&tokens, &warmup_tokens}) {
    for (int32_t& token : *ids) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      token = static_cast<int32_t>(4 + (state >> 33) %
                                           static_cast<uint64_t>(std::max(vocab - 4, 1)));
    }
  }

  // KV bytes: per position of the full-attention caches, and the fixed sliding rings.
  uint64_t kv_per_position = 0, kv_rings = 0;
  for (const CacheEntry& c : plan.caches) {
    const uint64_t row = 2 * static_cast<uint64_t>(c.num_kv_heads * c.head_dim) *
                         KvTypeBytes(options.kv_type);
    if (c.sliding) {
      kv_rings += row * static_cast<uint64_t>(KvCache::RowsFor(c, options.ctx_size, max_batch));
    } else {
      kv_per_position += row;
    }
  }
  // Weights that fit in the last-level cache stay there between tokens: their GB/s is the
  // cache's, and a share of the memory bandwidth would say nothing (hundreds of percent).
  const uint64_t llc_bytes = flag_values.llc_mb >= 0
                                 ? static_cast<uint64_t>(flag_values.llc_mb) << 20
                                 : LastLevelCacheBytes();
  const uint64_t bytes_with_head = WeightBytesPerToken(plan, true);
  const uint64_t bytes_without_head = WeightBytesPerToken(plan, false);
  std::vector<double> bandwidth(threads.size(), 0.0);
  std::vector<Result> results;
  for (size_t ti = 0; ti < threads.size(); ++ti) {
    // Measured right before this thread count's tests: a shared host's bandwidth drifts over
    // minutes (this project's VM: 41-71 GB/s with 2 threads within one session).
    if (flag_values.bandwidth_gbs > 0) {
      bandwidth[ti] = flag_values.bandwidth_gbs * 1e9;
    } else if (flag_values.measure_bandwidth) {
      bandwidth[ti] = MeasureReadBandwidth(size_t{1} << 30, static_cast<int>(threads[ti]), 5);
    }
    options.threads = static_cast<int>(threads[ti]);
    // One sequence of the default (compiled) batch size for this thread count, as a host would
    // keep; a prompt test of another batch size gets its own (Sequence::Eval chunks by it).
    CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Sequence> shared,
                            Sequence::Create(*artifact, options));
    auto measure = [&](const std::string& name, int64_t depth, int64_t count, bool is_prompt,
                       int64_t batch) -> absl::Status {
      if (count == 0) return absl::OkStatus();
      const int64_t shared_batch = shared->batch_size();
      const bool same_chunks =
          !is_prompt || batch == shared_batch || (batch >= count && shared_batch >= count);
      std::unique_ptr<Sequence> own;
      if (!same_chunks) {
        SessionOptions own_options = options;
        own_options.batch_size = batch;
        CORTIQ_ASSIGN_OR_RETURN(own, Sequence::Create(*artifact, own_options));
      }
      Sequence* sequence = same_chunks ? shared.get() : own.get();
      // The depth's positions: tokens[0, depth) evaluated once (batched, no logits, not timed);
      // each repetition truncates back to them (only the sliding rings' overwritten rows are
      // recomputed).
      const auto at_depth = [&]() -> absl::Status {
        const absl::Span<const int32_t> history = sequence->history();
        const size_t d = static_cast<size_t>(depth);
        const bool prefix = history.size() >= d && std::equal(tokens.begin(),
                                                              tokens.begin() + d, history.begin());
        if (!prefix) {
          sequence->Reset();
          return sequence->Eval(absl::MakeConstSpan(tokens.data(), d), BatchLogits::kNone);
        }
        return sequence->Truncate(depth);
      };
      const int32_t* input = tokens.data() + depth;
      if (flag_values.warmup) {
        // One untimed run first, as llama-bench's (the whole prompt, or one generated token):
        // the first evaluation after a load or another test pays for page faults and cold
        // caches that a server's steady state does not.
        CORTIQ_RETURN_IF_ERROR(at_depth());
        CORTIQ_RETURN_IF_ERROR(sequence->Eval(
            absl::MakeConstSpan(warmup_tokens.data(), static_cast<size_t>(is_prompt ? count : 1)),
            BatchLogits::kLast));
      }
      std::vector<double> rates;
      std::vector<double> step_seconds;
      for (int rep = 0; rep < reps; ++rep) {
        CORTIQ_RETURN_IF_ERROR(at_depth());
        if (profile) sequence->set_step_profile(&step_seconds);
        const Clock::time_point begin = Clock::now();
        if (is_prompt) {
          // A prompt wants only its last logits.
          CORTIQ_RETURN_IF_ERROR(sequence->Eval(
              absl::MakeConstSpan(input, static_cast<size_t>(count)), BatchLogits::kLast));
        } else {
          // Generation wants every token's, one token at a time.
          for (int64_t i = 0; i < count; ++i) {
            CORTIQ_RETURN_IF_ERROR(
                sequence->Eval(absl::MakeConstSpan(input + i, 1), BatchLogits::kLast));
          }
        }
        rates.push_back(static_cast<double>(count) / Seconds(begin, Clock::now()));
        sequence->set_step_profile(nullptr);
      }
      Result r;
      r.test = depth > 0 ? absl::StrCat(name, " @ d", depth) : name;
      r.depth = depth;
      r.threads = options.threads;
      r.batch = batch;
      r.median = Median(rates);
      r.min = *std::min_element(rates.begin(), rates.end());
      r.max = *std::max_element(rates.begin(), rates.end());
      // Batched prompt tokens share each weight read: GB/s per token means nothing there.
      if (batch == 1) {
        const double bytes =
            static_cast<double>(is_prompt ? bytes_without_head : bytes_with_head);
        r.gbs = r.median * bytes / 1e9;
        r.bandwidth_percent =
            bandwidth[ti] > 0 ? 100.0 * r.median * bytes / bandwidth[ti] : 0.0;
        r.cached = static_cast<uint64_t>(bytes) <= llc_bytes;
      }
      if (profile) {
        r.profile = ProfileByKind(plan, step_seconds, static_cast<double>(count) * reps);
      }
      results.push_back(r);
      return absl::OkStatus();
    };
    for (int64_t depth : depths) {
      for (int64_t p : prompts) {
        for (int64_t b : batches) {
          const int64_t batch = b == 0 ? max_batch : std::min(b, max_batch);
          CORTIQ_RETURN_IF_ERROR(
              measure(absl::StrCat("pp", p), depth, p, true, std::min(batch, p)));
        }
      }
      for (int64_t n : gens) {
        CORTIQ_RETURN_IF_ERROR(measure(absl::StrCat("tg", n), depth, n, false, 1));
      }
    }
  }

  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  const double peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  std::string formats;
  for (const WeightEntry& w : plan.weights) {
    if (w.shape.size() == 2 && formats.find(WeightFormatName(w.format)) == std::string::npos) {
      absl::StrAppend(&formats, formats.empty() ? "" : "+", WeightFormatName(w.format));
    }
  }

  if (flag_values.json) {
    JsonWriter j;
    j.BeginObject(/*one_line=*/true);
    j.Field("model", path);
    j.Field("weight_formats", formats);
    j.Field("file_bytes", artifact->file_size());
    j.Field("weight_bytes_per_token", bytes_with_head);
    j.Field("weight_bytes_per_prompt_token", bytes_without_head);
    j.Field("kv_type", KvTypeName(options.kv_type));
    j.Field("prefill_activations", flag_values.prefill_activations);
    j.Field("q4_0x16_decode_path", ops::DecodeLinearPathName(ops::DispatchedDecodeLinearPath()));
    j.Field("q8_0x16_decode_path",
            ops::DecodeLinearPathName(ops::DispatchedDecodeLinearPathQ8_0x16()));
    j.Field("q4_k_decode_path", ops::DecodeLinearPathName(ops::DispatchedDecodeLinearPath()));
    j.Field("q4_kx16_decode_path",
            ops::DispatchedDecodeLinearPath() != ops::DecodeLinearPath::kFloat
                ? std::string(ops::DecodeLinearPathName(ops::DispatchedDecodeLinearPath()))
                : absl::StrCat(ops::DecodeLinearPathName(ops::DecodeLinearPath::kFloat),
                               " (decoded blocks)"));
    j.Field("q5_kx16_decode_path",
            ops::DispatchedDecodeLinearPath() != ops::DecodeLinearPath::kFloat
                ? std::string(ops::DecodeLinearPathName(ops::DispatchedDecodeLinearPath()))
                : absl::StrCat(ops::DecodeLinearPathName(ops::DecodeLinearPath::kFloat),
                               " (decoded blocks)"));
    j.Field("q5_k_q6_k_decode_path", ops::DecodeLinearPathName(ops::DispatchedDecodeLinearPath()));
    j.Field("decode_prefetch_into_l2", ops::DecodePrefetchIntoL2());
    j.Field("mmap", flag_values.mmap != 0);
    j.Field("load", flag_values.mmap == 0   ? "read"
                    : flag_values.mmap == 1 ? "mmap"
                                            : "mmap, matrices read");
    j.Field("kv_bytes_per_position", kv_per_position);
    j.Field("kv_ring_bytes", kv_rings);
    j.Field("llc_bytes", llc_bytes);
    j.Key("load_ms");
    j.Fixed(load_ms, 3);
    j.Key("peak_rss_mb");
    j.Fixed(peak_rss_mb, 1);
    j.Key("bandwidth_gbs");
    j.BeginObject();
    for (size_t i = 0; i < threads.size(); ++i) {
      j.Key(absl::StrCat(threads[i]));
      if (bandwidth[i] > 0) {
        j.Fixed(bandwidth[i] / 1e9, 3);
      } else {
        j.Null();  // not measured (--no-measure-bandwidth)
      }
    }
    j.EndObject();
    j.Key("results");
    j.BeginArray();
    for (const Result& r : results) {
      j.BeginObject();
      j.Field("test", r.test);
      j.Field("threads", static_cast<int64_t>(r.threads));
      j.Field("batch", r.batch);
      j.Field("depth", r.depth);
      j.Key("tokens_per_s");
      j.BeginObject();
      j.Key("median");
      j.Fixed(r.median, 4);
      j.Key("min");
      j.Fixed(r.min, 4);
      j.Key("max");
      j.Fixed(r.max, 4);
      j.EndObject();
      j.Key("gbs");
      j.Fixed(r.gbs, 3);
      j.Key("bandwidth_percent");
      if (r.cached || r.bandwidth_percent <= 0) {  // cached, or no bandwidth measured
        j.Null();
      } else {
        j.Fixed(r.bandwidth_percent, 2);
      }
      j.Field("weights_cached", r.cached);
      if (profile) {
        // Seconds per token by step kind.
        j.Key("profile");
        j.BeginObject(/*one_line=*/true);
        for (const KindTime& k : r.profile) {
          j.Key(k.kind);
          j.Fixed(k.seconds_per_token, 9);
        }
        j.EndObject();
      }
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
    std::fputs(j.Take().c_str(), stdout);
    return absl::OkStatus();
  }
  std::printf("model: %s (%s weights, %.2f GB file)\n", path.c_str(), formats.c_str(),
              static_cast<double>(artifact->file_size()) / 1e9);
  std::printf("weight bytes per token: %.3f GB (generation, with the logits), %.3f GB (prompt "
              "tokens but the last: the steps of rows = all)\n",
              static_cast<double>(bytes_with_head) / 1e9,
              static_cast<double>(bytes_without_head) / 1e9);
  for (size_t i = 0; i < threads.size(); ++i) {
    if (bandwidth[i] > 0 && flag_values.bandwidth_gbs > 0) {
      std::printf("read bandwidth, %lld thread(s): %.2f GB/s (--bandwidth-gbs, not measured)\n",
                  static_cast<long long>(threads[i]), bandwidth[i] / 1e9);
    } else if (bandwidth[i] > 0) {
      std::printf("read bandwidth, %lld thread(s): %.2f GB/s (%s loads, 1 GiB, best of 5 passes "
                  "plain and 5 prefetched into L2)\n",
                  static_cast<long long>(threads[i]), bandwidth[i] / 1e9, XorWordsTarget());
    }
  }
  // Which kernels the prompt's matrix products run on (session.cc's choice), and whether an
  // opt-in applies to any matrix of this model.
  size_t split_amx = 0, q8_targets = 0, bf16_targets = 0, matrices = 0, q4_0x16_matrices = 0,
         q8_0x16_matrices = 0, q4_k_matrices = 0, q5_k_matrices = 0, q6_k_matrices = 0,
         f16_matrices = 0, q4_kx16_matrices = 0, q5_kx16_matrices = 0;
  std::vector<bool> multiplied(artifact->plan().weights.size(), false);
  for (const Step& step : artifact->plan().steps) {
    if ((step.kind == StepKind::kLinear || step.kind == StepKind::kLmHead) && step.weight >= 0 &&
        static_cast<size_t>(step.weight) < multiplied.size()) {
      multiplied[static_cast<size_t>(step.weight)] = true;
    }
  }
  for (size_t i = 0; i < multiplied.size(); ++i) {
    if (!multiplied[i]) continue;  // tables that are only looked up
    const WeightEntry& w = artifact->plan().weights[i];
    ++matrices;
    const bool two_terms = w.format == WeightFormat::kQ4_0 || w.format == WeightFormat::kQ4_0x16 ||
                           w.format == WeightFormat::kQ5_0 || w.format == WeightFormat::kF16;
    split_amx += w.format == WeightFormat::kBF16 || two_terms;
    q8_targets += PrefillActivationsApply(PrefillActivations::kQ8_0, w.format);
    bf16_targets += PrefillActivationsApply(PrefillActivations::kBF16, w.format);
    q4_0x16_matrices += w.format == WeightFormat::kQ4_0x16;
    q8_0x16_matrices += w.format == WeightFormat::kQ8_0x16;
    q4_k_matrices += w.format == WeightFormat::kQ4_K;
    q4_kx16_matrices += w.format == WeightFormat::kQ4_Kx16;
    q5_kx16_matrices += w.format == WeightFormat::kQ5_Kx16;
    q5_k_matrices += w.format == WeightFormat::kQ5_K;
    q6_k_matrices += w.format == WeightFormat::kQ6_K;
    f16_matrices += w.format == WeightFormat::kF16;
  }
  if (options.prefill_activations == PrefillActivations::kF32) {
    if (ops::BF16x3Available() && split_amx > 0) {
      std::printf("prefill products: exact; AMX-BF16 split products for the BF16/Q4_0/Q5_0/F16 "
                  "matrices (%zu of %zu), AVX-512 FMA for the others\n",
                  split_amx, matrices);
    } else {
      std::printf("prefill products: exact (f32 FMA)\n");
    }
  }
  // Where the CPU splits 512-bit instructions, short Q8_0x16 rows leave the integer digits for
  // the f32 kernel (ops::DecodeQ8_0x16WithFloat).
  const std::string short_rows =
      ops::DecodeQ8_0x16WithFloat(ops::kFloatDecodeMaxCols)
          ? absl::StrCat("; f32 FMA for rows of <= ", ops::kFloatDecodeMaxCols,
                         " columns (this CPU splits 512-bit instructions)")
          : "";
  if (q4_0x16_matrices > 0) {
    const ops::DecodeLinearPath path = ops::DispatchedDecodeLinearPath();
    std::printf("decode products of the %zu q4_0x16 matrices: %s\n", q4_0x16_matrices,
                ops::DecodeLinearPathName(path));
  }
  if (q8_0x16_matrices > 0) {
    const ops::DecodeLinearPath path = ops::DispatchedDecodeLinearPathQ8_0x16();
    std::printf("decode products of the %zu q8_0x16 matrices: %s%s\n", q8_0x16_matrices,
                ops::DecodeLinearPathName(path),
                path == ops::DecodeLinearPath::kFloat ? "" : short_rows.c_str());
  }
  if (q4_k_matrices > 0) {
    std::printf("decode products of the %zu q4_k matrices: %s\n", q4_k_matrices,
                ops::DecodeLinearPathName(ops::DispatchedDecodeLinearPath()));
  }
  for (const auto& [name, count] : {std::pair<const char*, size_t>{"q4_k", q4_kx16_matrices},
                                    std::pair<const char*, size_t>{"q5_k", q5_kx16_matrices}}) {
    if (count == 0) continue;
    const ops::DecodeLinearPath path = ops::DispatchedDecodeLinearPath();
    std::printf("decode products of the %zu %sx16 matrices: %s%s\n", count, name,
                ops::DecodeLinearPathName(path),
                path == ops::DecodeLinearPath::kFloat
                    ? " (decoded blocks; slower than plain q4_k / q5_k on this CPU: compile "
                      "with --keep-q4_k-layout --keep-q5_k-layout)"
                    : "");
  }
  for (const auto& [name, count] : {std::pair<const char*, size_t>{"q5_k", q5_k_matrices},
                                    std::pair<const char*, size_t>{"q6_k", q6_k_matrices}}) {
    if (count > 0) {
      std::printf("decode products of the %zu %s matrices: %s\n", count, name,
                  ops::DecodeLinearPathName(ops::DispatchedDecodeLinearPath()));
    }
  }
  // The kernels that DecodePrefetchIntoL2 changes.
  if (bf16_targets + f16_matrices + q4_0x16_matrices + q8_0x16_matrices + q4_k_matrices +
          q4_kx16_matrices + q5_kx16_matrices + q5_k_matrices + q6_k_matrices >
      0) {
    std::printf("decode weight prefetch: %s\n",
                ops::DecodePrefetchIntoL2()
                    ? "into L2, whole passes of 4 rows ahead (CORTIQ_DECODE_PREFETCH=l1 for L1)"
                    : "into L1, a few KiB ahead (CORTIQ_DECODE_PREFETCH=l2 for L2)");
  }
  if (options.prefill_activations == PrefillActivations::kQ8_0) {
    const ops::Q8ActivationsPath path = ops::DispatchedQ8ActivationsPath();
    std::printf("prefill activations: q8_0 (opt-in, lower precision: Q8_0/Q4_0 matrices on "
                "8-bit dot products, %s%s)%s\n",
                ops::Q8ActivationsPathName(path),
                path == ops::Q8ActivationsPath::kPortable ? ": slow on this CPU" : "",
                q8_targets == 0 ? "; this model has no Q8_0/Q4_0 matrix: no effect" : "");
  }
  if (options.prefill_activations == PrefillActivations::kBF16) {
    const ops::BF16ActivationsPath path = ops::DispatchedBF16ActivationsPath();
    std::printf("prefill activations: bf16 (opt-in, lower precision: BF16 matrices on bf16 dot "
                "products, %s%s)%s\n",
                ops::BF16ActivationsPathName(path),
                path == ops::BF16ActivationsPath::kPortable ? ": slow on this CPU" : "",
                bf16_targets == 0 ? "; this model has no BF16 matrix: no effect" : "");
  }
  std::printf("kv cache: %s, %llu B per position (full-attention layers) + %llu B of sliding "
              "rings (at batch %lld)\n",
              KvTypeName(options.kv_type), static_cast<unsigned long long>(kv_per_position),
              static_cast<unsigned long long>(kv_rings), static_cast<long long>(max_batch));
  std::printf("load (%s → first token): %.1f ms; peak RSS: %.0f MB\n\n",
              flag_values.mmap == 0   ? "read into memory"
              : flag_values.mmap == 1 ? "mmap"
                                      : "mmap, matrices read into memory",
              load_ms, peak_rss_mb);
  std::printf(
      "| threads | test | batch | t/s (median) | min | max | weight GB/s | %% of read BW |\n");
  std::printf("|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (const Result& r : results) {
    std::printf("| %d | %s | %lld | %.2f | %.2f | %.2f | %s | %s |\n", r.threads,
                r.test.c_str(), static_cast<long long>(r.batch), r.median, r.min, r.max,
                r.gbs > 0 ? absl::StrFormat("%.2f", r.gbs).c_str() : "-",
                r.cached                  ? "(cached)"
                : r.bandwidth_percent > 0 ? absl::StrFormat("%.1f%%", r.bandwidth_percent).c_str()
                                          : "-");
  }
  const bool any_cached =
      std::any_of(results.begin(), results.end(), [](const Result& r) { return r.cached; });
  if (any_cached) {
    std::printf("\n(cached): the weights a token reads (%.1f MB) fit in the %.1f MB last-level "
                "cache, so they are read from the cache, not streamed from memory: a share of the "
                "memory's read bandwidth means nothing there (it is meaningful for a model larger "
                "than the cache)\n",
                static_cast<double>(bytes_with_head) / 1e6, static_cast<double>(llc_bytes) / 1e6);
  }
  if (profile) {
    for (const Result& r : results) {
      double total = 0;
      for (const KindTime& k : r.profile) total += k.seconds_per_token;
      std::printf("\nprofile: %s, %d thread(s), batch %lld: %.3f ms per token in the steps\n",
                  r.test.c_str(), r.threads, static_cast<long long>(r.batch), 1e3 * total);
      std::printf("| step kind | steps | ms per token | share |\n|--|--:|--:|--:|\n");
      for (const KindTime& k : r.profile) {
        std::printf("| %s | %d | %.4f | %.1f%% |\n", k.kind, k.steps, 1e3 * k.seconds_per_token,
                    total > 0 ? 100.0 * k.seconds_per_token / total : 0.0);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) {
  cortiq::BenchFlags& f = cortiq::flag_values;
  cortiq::Flags flags(
      "cortiq-bench", "MODEL.cortiq [options]  (or -m MODEL.cortiq)",
      "Prompt (batched, -b tokens per evaluation) and generation tokens/s, like llama-bench; for "
      "token-by-token tests also the weight GB/s and the share of the measured read bandwidth "
      "(the decode roofline). Lists are comma-separated; every combination is tested.");
  flags.AddString("-m, --model", "FILE", &f.model,
                  "the compiled model (MODEL.cortiq); or give it as the first argument");
  flags.AddString("-p, --n-prompt", "N,...", &f.p, "prompt lengths to test (0 = none)");
  flags.AddString("-n, --n-gen", "N,...", &f.n, "generation lengths to test (0 = none)");
  flags.AddString("-t, --threads", "N,...", &f.t, "thread counts");
  flags.AddString("-b, --batch-size", "N,...", &f.b,
                  "prompt batch sizes: tokens per batched evaluation (0 = the artifact's "
                  "compiled maximum, 1 = token by token)");
  flags.AddString("-d, --n-depth", "N,...", &f.d,
                  "context depths: each test runs after this many positions are already in the "
                  "KV caches (filled with a batched prompt, not timed), like llama-bench -d");
  flags.AddInt("-r, --repetitions", "N", &f.r, INT64_MIN, INT64_MAX,
               "repetitions of each test (median, min and max are reported) (default: 5)");
  flags.AddString("--kv-type", "f32|f16", &f.kv_type, "element type of the KV caches");
  flags.AddString("--prefill-activations", "f32|q8_0|bf16", &f.prefill_activations,
                  "activations of the prompt's matrix products: f32 (exact, default), q8_0 or "
                  "bf16 (opt-in, lower precision; SessionOptions::prefill_activations)");
  flags.AddInt("--mmap, --mmp", "0|1|2", &f.mmap, 0, 2,
               "2: map the artifact and read the matrices multiplied every token into memory "
               "(ArtifactLoad::kReadMatrices, the tools' default); 1: map everything "
               "(ArtifactLoad::kMap); 0: read it all into memory first (ArtifactLoad::kRead; as "
               "llama-bench -mmp 0)");
  flags.AddString("-o, --output", "md|json", &f.output,
                  "output format: a markdown table or one JSON object");
  flags.AddBool("--json", &f.json, "the same as -o json");
  flags.AddBool("--profile", &f.profile,
                "time every step of the plan during the tests and print, per test, each step "
                "kind's time per token and share");
  flags.AddBool("--warmup", &f.warmup,
                "run each test once untimed before its repetitions (a whole prompt, or one "
                "generated token, of other token ids), as llama-bench does; --no-warmup skips "
                "it (on by default)");
  flags.AddGroup("read bandwidth");
  flags.AddBool("--measure-bandwidth", &f.measure_bandwidth,
                "measure the read bandwidth for each thread count (1 GiB buffer, best of 5 "
                "plain passes and 5 with L2 prefetches); --no-measure-bandwidth skips it (on by "
                "default)");
  flags.AddDouble("--bandwidth-gbs", "GB/s", &f.bandwidth_gbs, 0.0, 1e6,
                  "use this read bandwidth instead of measuring it (0 = measure)");
  flags.AddInt("--llc-mb", "MiB", &f.llc_mb, -1, int64_t{1} << 30,
               "the last-level cache size: a test whose weights fit in it shows \"(cached)\" "
               "instead of a share of the read bandwidth; -1 = read it from "
               "/sys/devices/system/cpu, 0 = none (default: -1)");
  flags.AddEpilog(
      "examples:\n"
      "  cortiq-bench -m e2b.cortiq\n"
      "  cortiq-bench e2b.cortiq -p 512 -n 128 -t 1,2 -b 0,1 -d 0,4096 -o json");
  std::vector<std::string> args = flags.ParseOrExit(argc, argv);
  if (f.output != "md" && f.output != "json") {
    std::fprintf(stderr, "cortiq-bench: -o/--output must be md or json, not '%s'\n",
                 f.output.c_str());
    return 1;
  }
  if (f.output == "json") f.json = true;
  if (!f.model.empty()) args.insert(args.begin(), f.model);
  if (args.size() != 1) {
    std::fprintf(stderr, "cortiq-bench: expected one MODEL.cortiq (see --help)\n");
    return 1;
  }
  absl::Status status = cortiq::Run(args[0]);
  if (!status.ok()) {
    std::fprintf(stderr, "cortiq-bench: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
