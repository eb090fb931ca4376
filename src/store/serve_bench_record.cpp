#include "store/serve_bench_record.h"

#include <fmt/format.h>

#include <array>

#include "record_fields.h"

namespace wattlab {
namespace {

constexpr const char* kPhase = "phase";
constexpr const char* kBatch = "batch";
constexpr const char* kModel = "model";
constexpr const char* kTask = "task";
constexpr const char* kWorkload = "workload";
constexpr const char* kWorkloadLlm = "llm";
constexpr const char* kWhole = "whole";
constexpr const char* kStable = "serve_bench.stable";
constexpr const char* kFlags = "serve_bench.flags";
constexpr const char* kTrue = "true";
constexpr const char* kFalse = "false";
constexpr std::string_view kFlagSeparator = " | ";
// Labels that are one number each: name, field, and whether the text is the shortest exact one
// (the batch: "64") rather than six significant digits.
struct NumberLabel {
  const char* name;
  std::optional<double> SteadyWindowRecord::*field;
  bool exact;
};
constexpr std::array<NumberLabel, 7> kNumbers{{
    {kBatch, &SteadyWindowRecord::batch, true},
    {"avg_batch_size", &SteadyWindowRecord::avg_batch_size, false},
    {"median_itl_ms", &SteadyWindowRecord::median_itl_ms, false},
    {"p90_itl_ms", &SteadyWindowRecord::p90_itl_ms, false},
    {"p95_itl_ms", &SteadyWindowRecord::p95_itl_ms, false},
    {"p99_itl_ms", &SteadyWindowRecord::p99_itl_ms, false},
    {"kv_cache_usage", &SteadyWindowRecord::kv_cache_usage, false},
}};
constexpr const char* kTokens = "tokens";
constexpr const char* kRequests = "requests";
constexpr const char* kRequestsSent = "requests_sent";
constexpr const char* kRequestsFailed = "requests_failed";

}  // namespace

void SteadyWindowRecord::encode(WindowResult& w) const {
  if (tokens) w.counts[kTokens] = *tokens;
  if (requests) w.counts[kRequests] = *requests;
  if (phase) w.labels[kPhase] = *phase;
  for (const auto& n : kNumbers)
    if (const auto& v = this->*n.field) w.labels[n.name] = n.exact ? fmt::format("{}", *v) : fmt::format("{:.6g}", *v);
  if (stable) w.labels[kStable] = std::string(*stable ? kTrue : kFalse);  // not char*: see gemm_point_record.cpp
  std::string joined;
  for (const auto& f : flags) joined += (joined.empty() ? "" : std::string(kFlagSeparator)) + f;
  if (!joined.empty()) w.labels[kFlags] = joined;
}

Result<SteadyWindowRecord> SteadyWindowRecord::decode(const std::map<std::string, std::string>& labels,
                                                      const std::map<std::string, double>& counts) {
  store_detail::FieldReader f(labels, counts, "", "tag");
  SteadyWindowRecord r;
  r.phase = f.optional_text(kPhase);
  for (const auto& n : kNumbers) r.*n.field = f.optional_number(n.name);
  r.stable = f.optional_flag(kStable, kTrue, kFalse);
  if (auto flags = f.optional_text(kFlags)) {
    std::size_t at = 0;
    for (;;) {
      const auto next = flags->find(kFlagSeparator, at);
      r.flags.push_back(flags->substr(at, next == std::string::npos ? std::string::npos : next - at));
      if (next == std::string::npos) break;
      at = next + kFlagSeparator.size();
    }
  }
  r.tokens = f.optional_count(kTokens);
  r.requests = f.optional_count(kRequests);
  if (f.failed()) return f.error();
  return r;
}

void ServeBenchWholeRecord::encode(WindowResult& w) const {
  w.labels[kPhase] = kWhole;
  w.counts[kRequestsSent] = requests_sent;
  w.counts[kRequestsFailed] = requests_failed;
}

Result<ServeBenchWholeRecord> ServeBenchWholeRecord::decode(const WindowResult& w) {
  store_detail::FieldReader f(w.labels, w.counts, "serve-bench window '" + w.name + "'");
  if (const std::string phase = f.text(kPhase); !f.failed() && phase != kWhole)
    return Error{ErrorKind::parse, fmt::format("serve-bench window '{}': label '{}' = '{}', expected '{}'", w.name, kPhase, phase, kWhole), ""};
  ServeBenchWholeRecord r;
  r.requests_sent = f.count(kRequestsSent);
  r.requests_failed = f.count(kRequestsFailed);
  if (f.failed()) return f.error();
  return r;
}

void ServeBenchRunTags::encode(std::map<std::string, std::string>& tags) const {
  tags.emplace(kModel, model);
  tags.emplace(kTask, task);
  tags[kBatch] = std::to_string(batch_cap);
  tags[kWorkload] = kWorkloadLlm;
}

}  // namespace wattlab
