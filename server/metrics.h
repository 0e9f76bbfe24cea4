// Metrics of cortiq-server in the Prometheus text exposition format (version 0.0.4), served by
// GET /metrics: HTTP requests by endpoint and status, and the scheduler's counters (tokens,
// seconds, queue depth, busy slots, recent generation speed).
#ifndef CORTIQ_SERVER_METRICS_H_
#define CORTIQ_SERVER_METRICS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "server/scheduler.h"

namespace cortiq::server {

// Counts answered HTTP requests. Thread-safe.
class RequestCounter {
 public:
  void Count(const std::string& endpoint, int status);
  // (endpoint, status) -> count.
  std::map<std::pair<std::string, int>, uint64_t> Snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> counts_;
};

// The exposition text: cortiq_requests_total{endpoint,status}, cortiq_prompt_tokens_total,
// cortiq_prompt_tokens_cached_total, cortiq_generated_tokens_total, cortiq_prompt_seconds_total,
// cortiq_decode_seconds_total, cortiq_decode_steps_total, cortiq_jobs_cancelled_total (counters);
// cortiq_requests_queued, cortiq_slots, cortiq_slots_busy, cortiq_generation_tokens_per_second
// (gauges).
std::string PrometheusText(const std::map<std::pair<std::string, int>, uint64_t>& requests,
                           const SchedulerStats& stats);

}  // namespace cortiq::server

#endif  // CORTIQ_SERVER_METRICS_H_
