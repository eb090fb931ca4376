#include "report/serve_bench_text.h"

#include <fmt/format.h>

#include <ostream>

namespace wattlab::report {
namespace {

std::string num(double v) { return fmt::format("{:.6g}", v); }
std::string ms(const infer::Quantile& q) {
  if (q.n == 0) return "n/a (no samples)";
  return fmt::format("{} ms (95% CI {}..{} ms, n={})", num(q.value * 1e3), num(q.lo * 1e3), num(q.hi * 1e3), q.n);
}

}  // namespace

void print_serve_bench(std::ostream& out, const infer::BenchResult& r) {
  const auto& s = r.steady;
  if (r.simulated) out << "SIMULATED: energy numbers come from wattlab's simulated GPU, not hardware\n";
  out << fmt::format("serve-bench: {} requests to {} (model {}), batch cap {}, {}\n", r.requests.size(), r.base_url,
                     r.model, r.batch_cap,
                     r.rate_per_s > 0 ? fmt::format("Poisson arrivals at {} req/s (seed {})", num(r.rate_per_s), r.seed)
                                      : std::string("all sent at t = 0"));
  const std::size_t failed = r.requests.size() - r.succeeded.size();
  out << fmt::format("  requests: {} succeeded, {} failed (excluded from every number below); benchmark {} s\n",
                     r.succeeded.size(), failed, num(r.bench_dur_s));
  int shown = 0;
  for (const auto& t : r.requests)
    if (!t.ok && shown++ < 10) out << fmt::format("    failed #{} '{}': {}\n", t.index, t.id, t.error);
  if (failed > 10) out << fmt::format("    ... and {} more (see --json)\n", failed - 10);
  const auto& tk = r.tokens;
  out << fmt::format("  output tokens: {} stream chunks; server usage {} tokens over {} requests that reported it "
                     "(chunks for those: {}); {} without usage; {} requests differ\n",
                     tk.chunk_tokens, tk.usage_tokens, tk.requests_with_usage, tk.chunk_tokens_with_usage,
                     tk.requests_without_usage, tk.differences.size());
  for (std::size_t i = 0; i < tk.differences.size() && i < 5; ++i)
    out << fmt::format("    #{} '{}': {} chunks vs usage {}\n", tk.differences[i].index, tk.differences[i].id,
                       tk.differences[i].chunks, tk.differences[i].usage);
  const auto& l = r.latency;
  out << "  latency (exact sample statistics; CI = 95% order-statistic interval):\n";
  out << "    TTFT median " << ms(l.ttft_median_s) << "; p90 " << ms(l.ttft_p90_s) << "\n";
  out << "    ITL  median " << ms(l.itl_median_s) << "; p90 " << ms(l.itl_p90_s) << "\n";
  out << "         p95 " << ms(l.itl_p95_s) << "; p99 " << ms(l.itl_p99_s) << "\n";
  out << "    end-to-end median " << ms(l.e2e_median_s) << "\n";
  if (!s.window.found) {
    out << "  steady state: none (" << s.window.reason << ")\n";
  } else {
    out << fmt::format("  steady state (B-th first token to (N-B-1)-th finish, N={}, B={}): {} s (edges are client-side "
                       "arrival times of stream chunks; the lag behind the server is not included)\n",
                       s.window.n_requests, s.window.batch_cap, num(s.window.dur_s()));
    out << fmt::format("    tokens in window {} (exact count), requests active {}, finished {}; throughput {} tok/s\n",
                       s.tokens, s.requests_active, s.requests_finished, num(s.throughput_tok_s));
    out << fmt::format("    mean running requests: client {}{}\n", num(s.avg_running_client),
                       s.avg_running_server ? fmt::format(", server {}", num(*s.avg_running_server)) : "");
    if (s.energy.available) {
      const double d = s.window.dur_s();
      out << fmt::format("    energy ({}): {} J ± {} J (95%) ± {} J gain{}\n", r.energy_domains, num(s.energy.energy_j),
                         num(s.energy.uncertainty_j), num(s.energy.systematic_j),
                         s.energy.issue.empty() ? "" : " [" + s.energy.issue + "]");
      out << fmt::format("    energy per output token: {} J ± {} J (95%) ± {} J gain\n", num(s.energy_per_token_j),
                         num(s.energy_per_token_uncertainty_j), num(s.energy_per_token_systematic_j));
      out << fmt::format("    mean power: {} W ± {} W (95%) ± {} W gain\n", num(s.avg_power_w),
                         num(s.energy.uncertainty_j / d), num(s.energy.systematic_j / d));
      double mean_app = 0, mean_tok = 0;
      for (const auto& p : s.per_request) mean_app += p.apportioned_j, mean_tok += p.token_share_j;
      if (!s.per_request.empty()) {
        const double n = static_cast<double>(s.per_request.size());
        const double rel = s.energy.energy_j > 0 ? s.energy.uncertainty_j / s.energy.energy_j : 0;
        out << fmt::format("    energy per request in the window ({} requests; ± {}% (95%) as the window's energy):\n",
                           s.per_request.size(), num(rel * 100));
        out << fmt::format("      apportioned by active time: mean {} J; by token share: mean {} J\n", num(mean_app / n),
                           num(mean_tok / n));
      }
    } else {
      out << "    energy: not available (" << s.energy.issue << ")\n";
    }
    if (r.metrics)
      out << fmt::format("    server metrics over the window ({} samples): running {}, waiting {}, KV-cache use {}\n",
                         r.metrics->samples, r.metrics->running ? num(*r.metrics->running) : "n/a",
                         r.metrics->waiting ? num(*r.metrics->waiting) : "n/a",
                         r.metrics->kv_cache_usage ? num(*r.metrics->kv_cache_usage) : "n/a");
  }
  if (r.metrics_failures) out << fmt::format("  metrics scrape: {} failures (first: {})\n", r.metrics_failures, r.metrics_first_failure);
  const auto& st = s.stability;
  out << fmt::format("  stability (study's run filter): {}\n", st.stable() ? "STABLE" : "UNSTABLE: the study would drop this run");
  for (const auto& f : st.flags) out << "    FLAG: " << f << "\n";
}

}  // namespace wattlab::report
