// Everything a serve-bench run found (its JSON form: series_json.h, docs/serve-bench.md "JSON").
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "infer/latency.h"
#include "infer/metrics_scrape.h"
#include "infer/steady_state.h"
#include "infer/timeline.h"

namespace wattlab::infer {

// Stream chunks against the server's `usage.completion_tokens`, per successful request.
struct TokenDifference {
  std::size_t index = 0;
  std::string id;
  int64_t chunks = 0, usage = 0;
};
struct TokenReconciliation {
  int64_t chunk_tokens = 0;        // all successful requests
  int64_t usage_tokens = 0;        // over the requests that reported usage
  int64_t chunk_tokens_with_usage = 0;
  int requests_with_usage = 0, requests_without_usage = 0;
  std::vector<TokenDifference> differences;
};
TokenReconciliation reconcile_tokens(std::span<const RequestTimeline> requests);

struct BenchResult {
  bool simulated = false;
  std::string energy_domains;  // "gpu:0+gpu:1", the domains summed
  std::string base_url, model, request_file;
  int batch_cap = 0;
  double rate_per_s = 0;  // 0: all at once
  uint64_t seed = 0;
  double bench_dur_s = 0;
  std::vector<RequestTimeline> requests;  // all, failed ones included
  std::vector<RequestTimeline> succeeded;  // what the statistics use
  SteadyAccount steady;
  LatencySummary latency;
  TokenReconciliation tokens;
  std::optional<MetricsMeans> metrics;  // means over the steady window
  std::size_t metrics_samples = 0;
  int metrics_failures = 0;
  std::string metrics_first_failure;
};

}  // namespace wattlab::infer
