#include "infer/metrics_scrape.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "infer/client.h"

namespace wattlab::infer {

std::map<std::string, double> parse_prometheus_text(std::string_view text, const std::vector<std::string>& names) {
  std::map<std::string, double> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (l.empty() || l.front() == '#') continue;
    const auto name_end = l.find_first_of("{ ");
    if (name_end == std::string_view::npos) continue;
    const std::string name(l.substr(0, name_end));
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    std::size_t value_at = name_end;
    if (l[name_end] == '{') {
      const auto close = l.find('}', name_end);  // label values may hold '}' only quoted; rare
      if (close == std::string_view::npos) continue;
      value_at = close + 1;
    }
    std::string_view rest = l.substr(value_at);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const auto sp = rest.find(' ');  // an optional timestamp follows
    const std::string v(rest.substr(0, sp));
    try {
      std::size_t used = 0;
      const double d = std::stod(v, &used);
      if (used == v.size() && std::isfinite(d)) out[name] += d;
    } catch (const std::exception&) {
    }
  }
  // A sum past double's range is no number: the metric is left out, as one the server did not send.
  std::erase_if(out, [](const auto& kv) { return !std::isfinite(kv.second); });
  return out;
}

MetricsSample sample_from(const std::map<std::string, double>& values, int64_t t_ns) {
  MetricsSample s;
  s.t_ns = t_ns;
  auto get = [&](const char* k) -> std::optional<double> {
    auto it = values.find(k);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
  s.running = get("vllm:num_requests_running");
  s.waiting = get("vllm:num_requests_waiting");
  s.kv_cache_usage = get("vllm:kv_cache_usage_perc");
  if (!s.kv_cache_usage) s.kv_cache_usage = get("vllm:gpu_cache_usage_perc");
  return s;
}

MetricsMeans mean_over(const std::vector<MetricsSample>& samples, int64_t t0_ns, int64_t t1_ns) {
  MetricsMeans m;
  double r = 0, w = 0, k = 0;
  int nr = 0, nw = 0, nk = 0;
  for (const auto& s : samples) {
    if (s.t_ns < t0_ns || s.t_ns > t1_ns) continue;
    ++m.samples;
    if (s.running) r += *s.running, ++nr;
    if (s.waiting) w += *s.waiting, ++nw;
    if (s.kv_cache_usage) k += *s.kv_cache_usage, ++nk;
  }
  if (nr) m.running = r / nr;
  if (nw) m.waiting = w / nw;
  if (nk) m.kv_cache_usage = k / nk;
  return m;
}

MetricsScraper::MetricsScraper(std::string url, Clock& clock, int64_t period_ns)
    : url_(std::move(url)), clock_(clock), period_ns_(period_ns) {}

MetricsScraper::~MetricsScraper() { stop(); }

void MetricsScraper::start() {
  const SplitUrl u = split_url(url_);  // a bad URL is a usage error before the run starts
  thread_ = std::thread([this, u] {
    httplib::Client cli(u.scheme_host_port);
    cli.set_connection_timeout(std::chrono::milliseconds(500));
    cli.set_read_timeout(std::chrono::milliseconds(900));
    int64_t next = clock_.now_ns();
    while (!stop_.load()) {
      try {
        auto res = cli.Get(u.path.empty() ? "/metrics" : u.path);
        const int64_t t = clock_.now_ns();
        std::string why;
        if (!res) why = httplib::to_string(res.error());
        else if (res->status != 200) why = fmt::format("HTTP {}", res->status);
        if (why.empty()) {
          samples_.push_back(sample_from(parse_prometheus_text(res->body, vllm_metric_names()), t));
        } else {
          if (failures_++ == 0) first_failure_ = why;
        }
      } catch (const std::exception& e) {
        if (failures_++ == 0) first_failure_ = e.what();
      }
      next += period_ns_;
      // Sleep in short steps so stop() is prompt.
      while (!stop_.load() && clock_.now_ns() < next)
        clock_.sleep_until_ns(std::min(next, clock_.now_ns() + 50'000'000));
    }
  });
}

void MetricsScraper::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace wattlab::infer
