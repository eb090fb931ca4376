// A 1 s scrape of the server's Prometheus metrics (vLLM: running/waiting requests, KV-cache use).
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "wattlab/core/clock.h"

namespace wattlab::infer {

// Sums every sample of each wanted metric over its label sets (one value per name; several engines
// or models add up). Lines that do not parse are skipped: the text format is the server's business.
// A metric whose sum is not finite is left out.
std::map<std::string, double> parse_prometheus_text(std::string_view text, const std::vector<std::string>& names);

struct MetricsSample {
  int64_t t_ns = 0;
  std::optional<double> running, waiting, kv_cache_usage;  // kv: 0..1
};

// vLLM names; the KV-cache gauge was renamed in newer versions, both are read.
inline const std::vector<std::string>& vllm_metric_names() {
  static const std::vector<std::string> n{"vllm:num_requests_running", "vllm:num_requests_waiting",
                                          "vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"};
  return n;
}
MetricsSample sample_from(const std::map<std::string, double>& values, int64_t t_ns);

// Means of the samples inside [t0, t1]; empty when none fell there.
struct MetricsMeans {
  std::size_t samples = 0;
  std::optional<double> running, waiting, kv_cache_usage;
};
MetricsMeans mean_over(const std::vector<MetricsSample>& samples, int64_t t0_ns, int64_t t1_ns);

// Scrapes `url` every `period_ns` on a thread until stop(). Failures are counted, never fatal.
class MetricsScraper {
 public:
  MetricsScraper(std::string url, Clock& clock, int64_t period_ns = 1'000'000'000);
  ~MetricsScraper();
  void start();
  void stop();
  std::vector<MetricsSample> samples() const { return samples_; }  // after stop()
  int failures() const { return failures_; }
  const std::string& first_failure() const { return first_failure_; }

 private:
  std::string url_;
  Clock& clock_;
  int64_t period_ns_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<MetricsSample> samples_;
  int failures_ = 0;
  std::string first_failure_;
};

}  // namespace wattlab::infer
