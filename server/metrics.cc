// Prometheus exposition (see metrics.h).
#include "server/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cortiq::server {

void RequestCounter::Count(const std::string& endpoint, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++counts_[{endpoint, status}];
}

std::map<std::pair<std::string, int>, uint64_t> RequestCounter::Snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

namespace {

// A label value with \, " and newline escaped (the exposition format's rule).
std::string LabelValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Metric(std::string* out, const char* name, const char* type, const char* help,
            const std::string& value) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n", name, " ",
                  value, "\n");
}

}  // namespace

std::string PrometheusText(const std::map<std::pair<std::string, int>, uint64_t>& requests,
                           const SchedulerStats& s) {
  std::string out =
      "# HELP cortiq_requests_total HTTP requests answered, by endpoint and status.\n"
      "# TYPE cortiq_requests_total counter\n";
  for (const auto& [key, count] : requests) {
    absl::StrAppend(&out, "cortiq_requests_total{endpoint=\"", LabelValue(key.first),
                    "\",status=\"", key.second, "\"} ", count, "\n");
  }
  const auto u = [](uint64_t v) { return absl::StrCat(v); };
  const auto d = [](double v) { return absl::StrFormat("%.6f", v); };
  Metric(&out, "cortiq_prompt_tokens_total", "counter", "Prompt tokens evaluated.",
         u(s.prompt_tokens));
  Metric(&out, "cortiq_prompt_tokens_cached_total", "counter",
         "Prompt tokens kept from a slot's history (not evaluated).", u(s.cached_prompt_tokens));
  Metric(&out, "cortiq_generated_tokens_total", "counter", "Tokens sampled.",
         u(s.generated_tokens));
  Metric(&out, "cortiq_prompt_seconds_total", "counter", "Seconds spent evaluating prompts.",
         d(s.prompt_seconds));
  Metric(&out, "cortiq_decode_seconds_total", "counter",
         "Seconds spent in batched decode steps.", d(s.decode_seconds));
  Metric(&out, "cortiq_decode_steps_total", "counter", "Batched decode steps.",
         u(s.decode_steps));
  Metric(&out, "cortiq_jobs_started_total", "counter", "Generations that got a slot.",
         u(s.jobs_started));
  Metric(&out, "cortiq_jobs_cancelled_total", "counter",
         "Generations stopped because the client disconnected.", u(s.jobs_cancelled));
  Metric(&out, "cortiq_requests_queued", "gauge", "Generations waiting for a slot.",
         u(static_cast<uint64_t>(s.queued)));
  Metric(&out, "cortiq_slots", "gauge", "Slots (--parallel).", u(static_cast<uint64_t>(s.slots)));
  Metric(&out, "cortiq_slots_busy", "gauge", "Slots running a generation.",
         u(static_cast<uint64_t>(s.slots_busy)));
  Metric(&out, "cortiq_generation_tokens_per_second", "gauge",
         "Tokens generated per second over the last 5 seconds, all slots together.",
         d(s.recent_tokens_per_second));
  return out;
}

}  // namespace cortiq::server
