// The windows of a serving benchmark as stored (docs/serve-bench.md, "Store"): the whole
// benchmark, and the steady-state window that `wattlab diagnose` reads back as a configuration
// (docs/diagnose.md, "Reading the store"). `wattlab infer serve-bench` writes both through these
// codecs and diagnose reads the steady one through SteadyWindowRecord, so each label and count
// name is spelled here only. Windows recorded with `wattlab run --marks` carry the same names
// when the command sets them (docs/marks.md).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wattlab/core/error.h"
#include "wattlab/meter/window.h"

namespace wattlab {

// The steady-state window: its configuration labels and its counts. serve-bench writes every
// field but the optional ones it lacks (ITLs without inter-token gaps, KV-cache use without server
// metrics, flags of a stable run); a window from elsewhere may carry any subset.
struct SteadyWindowRecord {
  std::optional<std::string> phase;      // "steady"; any other phase (a warm-up) is no configuration
  std::optional<double> batch;           // the batch size, or the server's batch cap B
  std::optional<double> avg_batch_size;  // mean running requests over the window
  std::optional<double> median_itl_ms, p90_itl_ms, p95_itl_ms, p99_itl_ms;
  std::optional<double> kv_cache_usage;  // 0..1, mean over the window
  std::optional<bool> stable;            // the study's run filter passed
  std::vector<std::string> flags;        // the rules it failed, one line each
  std::optional<double> tokens;          // output tokens in the window (count)
  std::optional<double> requests;        // requests finished in the window (count)

  static constexpr const char* kSteady = "steady";

  bool operator==(const SteadyWindowRecord&) const = default;

  // Sets the labels and counts present here on `w`.
  void encode(WindowResult& w) const;
  // From a window's labels (for diagnose: over its run's tags) and counts. Errors (parse): a
  // present label that is malformed, "tag 'batch' = 'many' is not a number".
  static Result<SteadyWindowRecord> decode(const std::map<std::string, std::string>& labels,
                                           const std::map<std::string, double>& counts);
};

// The window over the whole benchmark (phase=whole: no configuration).
struct ServeBenchWholeRecord {
  double requests_sent = 0;
  double requests_failed = 0;

  bool operator==(const ServeBenchWholeRecord&) const = default;

  void encode(WindowResult& w) const;
  // Errors (parse): phase is not "whole", or a count is missing.
  static Result<ServeBenchWholeRecord> decode(const WindowResult& w);
};

// The run tags of a serving benchmark: the configuration its windows share, which `wattlab
// diagnose` reads over the steady window's labels (model, task, batch, workload).
struct ServeBenchRunTags {
  std::string model;  // the served model's name
  std::string task;   // what the requests are ("serve-bench" unless the user names it)
  int batch_cap = 0;  // the server's batch cap B, stored as the configuration's batch

  // Sets them on `tags` over what is there, except that a model or task already in `tags` (the
  // user's own --tag) stays.
  void encode(std::map<std::string, std::string>& tags) const;
};

// The run tag with the number of failed requests.
inline constexpr const char* kServeBenchRequestsFailedTag = "serve_bench.requests_failed";

}  // namespace wattlab
