// A streaming client for one request to an OpenAI-compatible server, and the load generator that
// sends a request set all at once or with Poisson arrivals.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "wattlab/core/clock.h"
#include "infer/request_set.h"
#include "infer/timeline.h"

namespace wattlab::infer {

struct ServerOptions {
  std::string base_url = "http://127.0.0.1:8000/v1";  // scheme://host:port[/prefix]
  std::string model;
  std::string api_key;       // sent as "Authorization: Bearer ..." when set
  double timeout_s = 600;    // whole request, first byte to [DONE]
  double temperature = 0.8;  // the study's sampling
  double top_p = 0.95;
  bool ignore_eos = false;   // vLLM extension: generate exactly max_tokens
};

// "http://h:8000/v1" -> {"http://h:8000", "/v1"}; throws UsageError naming the URL.
struct SplitUrl {
  std::string scheme_host_port;
  std::string path;
};
SplitUrl split_url(const std::string& url);

// The JSON body of a streamed request (stream_options.include_usage asked for).
std::string request_body(const BenchRequest& r, const ServerOptions& o);

// Sends one request and records its stream on `clock`. Never throws: a failure is in the result.
RequestTimeline run_request(const BenchRequest& r, std::size_t index, const ServerOptions& o, const Clock& clock);

struct LoadOptions {
  double rate_per_s = 0;  // 0: every request at t = 0 (the study); > 0: Poisson arrivals
  uint64_t seed = 1;
};

// Send offsets from the start, in ns: all 0, or cumulative exponential gaps of mean 1/rate.
std::vector<int64_t> arrival_offsets_ns(std::size_t n, double rate_per_s, uint64_t seed);

// One thread per request; returns the timelines in request order.
std::vector<RequestTimeline> run_load(std::span<const BenchRequest> requests, const ServerOptions& server,
                                      const LoadOptions& load, Clock& clock);

}  // namespace wattlab::infer
