#include "infer/client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "wattlab/core/error.h"
#include "infer/sse_stream.h"

namespace wattlab::infer {

SplitUrl split_url(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos || (url.substr(0, scheme) != "http" && url.substr(0, scheme) != "https"))
    throw UsageError(fmt::format("URL '{}': expected http://HOST:PORT[/PATH] or https://...", url));
  const auto slash = url.find('/', scheme + 3);
  SplitUrl s;
  s.scheme_host_port = url.substr(0, slash);
  if (s.scheme_host_port.size() <= scheme + 3) throw UsageError(fmt::format("URL '{}': no host", url));
  s.path = slash == std::string::npos ? "" : url.substr(slash);
  while (!s.path.empty() && s.path.back() == '/') s.path.pop_back();
  return s;
}

std::string request_body(const BenchRequest& r, const ServerOptions& o) {
  nlohmann::json j;
  j["model"] = o.model;
  j["stream"] = true;
  j["stream_options"] = {{"include_usage", true}};
  j["max_tokens"] = r.max_tokens;
  j["temperature"] = o.temperature;
  j["top_p"] = o.top_p;
  if (o.ignore_eos) j["ignore_eos"] = true;
  if (r.api == Api::chat) j["messages"] = nlohmann::json::parse(r.messages_json);
  else j["prompt"] = r.prompt;
  return j.dump();
}

RequestTimeline run_request(const BenchRequest& r, std::size_t index, const ServerOptions& o, const Clock& clock) {
  RequestTimeline t;
  t.index = index;
  t.id = r.id;
  try {
    const SplitUrl u = split_url(o.base_url);
    httplib::Client cli(u.scheme_host_port);
    const auto timeout = std::chrono::duration<double>(o.timeout_s);
    cli.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    cli.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    httplib::Request req;
    req.method = "POST";
    req.path = u.path + (r.api == Api::chat ? "/chat/completions" : "/completions");
    req.headers = {{"Accept", "text/event-stream"}};
    if (!o.api_key.empty()) req.headers.emplace("Authorization", "Bearer " + o.api_key);
    req.body = request_body(r, o);
    req.headers.emplace("Content-Type", "application/json");
    SseStream sse(r.api);
    std::string error_body;
    bool timed_out = false;
    const int64_t deadline_ns = clock.now_ns() + static_cast<int64_t>(o.timeout_s * 1e9);
    req.response_handler = [&](const httplib::Response& res) {
      t.http_status = res.status;
      return true;
    };
    req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
      const int64_t now = clock.now_ns();
      if (t.http_status != 200) {
        if (error_body.size() < 200) error_body.append(data, std::min<size_t>(len, 200));
        return true;
      }
      const int tokens = sse.feed(std::string_view(data, len));
      for (int i = 0; i < tokens; ++i) t.token_t_ns.push_back(now);
      if (now > deadline_ns) {
        timed_out = true;
        return false;
      }
      return sse.error().empty();
    };
    t.t_send_ns = clock.now_ns();
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    const bool sent = cli.send(req, res, err);
    t.t_finish_ns = clock.now_ns();
    if (!t.token_t_ns.empty()) t.t_first_token_ns = t.token_t_ns.front();
    if (t.http_status != 0 && t.http_status != 200) {
      t.error = fmt::format("HTTP {}: {}", t.http_status, error_body.empty() ? res.body.substr(0, 200) : error_body);
    } else if (!sse.error().empty()) {
      t.error = sse.error();
    } else if (timed_out) {
      t.error = fmt::format("timed out after {:.1f} s ({} tokens)", o.timeout_s, t.token_t_ns.size());
    } else if (!sent) {
      t.error = fmt::format("{} after {} tokens (disconnected or timed out)", httplib::to_string(err), t.token_t_ns.size());
    } else if (!sse.done()) {
      t.error = fmt::format("stream ended without 'data: [DONE]' after {} tokens (disconnected mid-stream)", t.token_t_ns.size());
    } else if (t.token_t_ns.empty()) {
      t.error = "no output tokens in the stream";
    } else {
      t.ok = true;
    }
    t.usage_completion_tokens = sse.usage_completion_tokens();
    t.usage_prompt_tokens = sse.usage_prompt_tokens();
  } catch (const std::exception& e) {
    t.ok = false;
    t.error = std::string("client error: ") + e.what();
    if (t.t_finish_ns == 0) t.t_finish_ns = clock.now_ns();
  }
  return t;
}

std::vector<int64_t> arrival_offsets_ns(std::size_t n, double rate_per_s, uint64_t seed) {
  std::vector<int64_t> out(n, 0);
  if (rate_per_s <= 0) return out;
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate_per_s);
  double t_s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) t_s += gap(rng);  // the first request at t = 0
    out[i] = static_cast<int64_t>(t_s * 1e9);
  }
  return out;
}

std::vector<RequestTimeline> run_load(std::span<const BenchRequest> requests, const ServerOptions& server,
                                      const LoadOptions& load, Clock& clock) {
  const auto offsets = arrival_offsets_ns(requests.size(), load.rate_per_s, load.seed);
  std::vector<RequestTimeline> out(requests.size());
  std::vector<std::thread> threads;
  threads.reserve(requests.size());
  const int64_t t0 = clock.now_ns();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    threads.emplace_back([&, i] {
      clock.sleep_until_ns(t0 + offsets[i]);
      out[i] = run_request(requests[i], i, server, clock);
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace wattlab::infer
