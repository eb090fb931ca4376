#include <fmt/format.h>

#include <ostream>

#include "report/serve_bench_text.h"

namespace wattlab::report {
namespace {

std::string num(double v) { return fmt::format("{:.6g}", v); }

std::string lengths(const infer::LengthDistribution& d) {
  std::string s = fmt::format("{} around a mean of {} tokens (capped at {}", to_string(d.kind), num(d.mean), d.cap);
  if (d.kind == infer::LengthKind::lognormal) s += fmt::format(", sigma {}", num(d.sigma));
  return s + ")";
}

}  // namespace

void print_serve_bench_series(std::ostream& out, const infer::SeriesResult& s, const infer::SeriesDescription& d) {
  if (d.spec) {
    out << fmt::format("workload: synthetic {} requests, {}\n", d.spec->api == infer::Api::chat ? "chat" : "completion",
                       d.spec->source);
    out << "  input lengths " << lengths(d.spec->input) << "\n  output lengths " << lengths(d.spec->output)
        << " (max_tokens of each request, sent with ignore_eos)\n";
  } else {
    out << "workload: the request file " << d.request_file << "\n";
  }
  const auto& p = d.plan;
  if (p.fixed_requests)
    out << fmt::format("requests per run: {} (fixed)\n", *p.fixed_requests);
  else
    out << fmt::format("requests per run: sized for a steady window of {} x {} s (N = B + 1 + ceil(margin x window x "
                       "throughput / mean output)){}\n",
                       num(p.margin), num(p.min_steady_s),
                       p.expect_tok_s ? fmt::format(", first from {} tok/s expected", num(*p.expect_tok_s))
                                      : std::string(", first from a pilot"));
  for (const auto& run : s.runs) {
    out << fmt::format("\n== {} {}: {} requests, seed {}{}\n", run.pilot ? "pilot" : "repeat", run.index, run.requests,
                       run.seed,
                       run.pilot ? fmt::format(" (window too short: the next run is sized from {} tok/s)",
                                               num(run.sizing_tok_s))
                                 : std::string());
    print_serve_bench(out, run.m.result);
  }
  out << "\n";
  if (!s.failure.empty()) out << "SERIES FAILED: " << s.failure << "\n";
  const auto& c = s.energy_per_token_j;
  const int repeats = static_cast<int>(s.included.size() + s.excluded.size());
  out << fmt::format("energy per output token over {} of {} repeats ({} requests each; stable repeats only):\n", c.n,
                     repeats, s.requests_per_run);
  for (const auto& [i, why] : s.excluded) out << fmt::format("  repeat {} left out: {}\n", i, why);
  if (c.n == 0) {
    out << "  none: no repeat passed the study's run filter\n";
  } else if (!c.has_interval()) {
    out << fmt::format("  {} J from one repeat: no interval (it needs 2 or more); its own U95 is {} J\n", num(c.mean),
                       num(s.mean_u95_energy_per_token_j));
  } else {
    out << fmt::format("  mean {} J, 95% CI {}..{} J (Student t over repeats, {} df, t = {}; sd {} J)\n", num(c.mean),
                       num(c.low), num(c.high), c.n - 1, num(c.t), num(c.sd));
    out << fmt::format("  each repeat's own measurement U95: {} J on average (not in the interval above, which is "
                       "run-to-run spread)\n",
                       num(s.mean_u95_energy_per_token_j));
  }
}

}  // namespace wattlab::report
