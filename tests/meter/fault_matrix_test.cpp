// The fault matrix (docs/reliability.md): every fault the simulated GPU can script, at several
// spacings, under windows of many lengths and placements. For each window the meter either gives
// an energy within its stated 95 % uncertainty of the truth the simulator knows, or says the window
// is unavailable and why. The boards are exact (no gain error): the gain is a systematic error the
// result states apart (systematic_j), the same with or without faults.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim_fixture.h"

namespace wattlab::testing {
namespace {

struct FaultCase {
  std::string name;    // test name suffix
  std::string script;  // --sim-faults
};

// The windows each case measures (seconds since the simulated GPU opened): the whole run, windows of
// a second or more, a few hundred ms, and shorter than a counter update.
const std::vector<std::pair<double, double>> kWindows = {
    {0.5, 9.5}, {1.0, 1.05}, {1.5, 2.2}, {2.9, 3.35}, {3.2, 6.8}, {4.0, 5.2},
    {5.5, 5.6}, {6.1, 8.9}, {7.3, 7.45}, {8.0, 9.4}, {2.05, 4.45}, {0.9, 3.1}};

// Fault `make(t, d)` every `spacing_s` from 1 s to 9 s, each lasting d = spacing / 2.
template <class F>
std::string repeated(double spacing_s, F make) {
  std::string s;
  for (double t = 1.0; t < 9.0; t += spacing_s) s += make(t, spacing_s / 2) + "; ";
  return s;
}

std::string ms(double s) { return fmt::format("{}ms", static_cast<long>(std::llround(s * 1000))); }
std::string span(double t, double d) { return ms(t) + "-" + ms(t + d); }

std::vector<FaultCase> all_cases() {
  std::vector<FaultCase> c;
  for (double sp : {0.05, 0.15, 0.6, 1.0, 2.5}) {
    const std::string tag = fmt::format("every{}ms", static_cast<long>(sp * 1000));
    c.push_back({"counter_reset_" + tag, repeated(sp, [](double t, double) { return "counter-reset " + ms(t); })});
    if (sp < 0.1) continue;  // spans shorter than a read are the same as no fault
    for (const std::string kind : {"energy_counter_j", "power_sample_w", "power_instant_w", ""}) {
      const std::string k = kind.empty() ? "all" : kind;
      const std::string word = kind.empty() ? "" : kind + " ";
      c.push_back({"read_error_" + k + "_" + tag,
                   repeated(sp, [&](double t, double d) { return "read-error " + word + span(t, d); })});
      c.push_back({"stuck_" + k + "_" + tag, repeated(sp, [&](double t, double d) { return "stuck " + word + span(t, d); })});
      c.push_back({"garbage_" + k + "_" + tag,
                   repeated(sp, [&](double t, double d) { return "garbage " + word + span(t, d); })});
    }
    for (double delay : {0.05, 0.2, 0.5}) {
      const std::string dtag = fmt::format("{}ms", static_cast<long>(delay * 1000));
      c.push_back({"slow_counter_" + dtag + "_" + tag, repeated(sp, [&](double t, double d) {
                     return "slow-read energy_counter_j " + span(t, d) + " " + ms(delay);
                   })});
      c.push_back({"slow_all_" + dtag + "_" + tag,
                   repeated(sp, [&](double t, double d) { return "slow-read " + span(t, d) + " " + ms(delay); })});
    }
  }
  c.push_back({"counter_reset_at_0s", "counter-reset 0s; counter-reset 1s; counter-reset 2s"});
  c.push_back({"counter_reset_1s_and_2s", "counter-reset 1s; counter-reset 2s"});
  c.push_back({"counter_reset_twice_600ms_apart", "counter-reset 3s; counter-reset 3600ms"});
  c.push_back({"gpu_lost_and_recovered", "gpu-lost 4s-5s"});
  c.push_back({"gpu_lost", "gpu-lost 6s"});
  c.push_back({"counter_unsupported_midrun", "unsupported energy_counter_j 4s"});
  c.push_back({"samples_unsupported_midrun", "unsupported power_sample_w 4s"});
  c.push_back({"instant_unsupported_midrun", "unsupported power_instant_w 4s"});
  c.push_back({"counter_and_samples_unsupported", "unsupported energy_counter_j 4s; unsupported power_sample_w 5s"});
  c.push_back({"everything_at_once", "counter-reset 2s; garbage energy_counter_j 3s-3300ms; stuck power_sample_w 4s-4500ms; "
                                     "slow-read 5s-6s 300ms; read-error 7s-7200ms; counter-reset 7500ms"});
  return c;
}

class FaultMatrix : public ::testing::TestWithParam<FaultCase> {};

TEST_P(FaultMatrix, EveryWindowIsRightWithinItsUncertaintyOrSaysWhyNot) {
  auto cfg = exact_board("idle 1s; step 450W 2s; periodic 690W 120W period=80ms duty=0.5 3s; gemm 0.95 3s; idle 1s; loop");
  cfg.faults = GetParam().script;
  SimMeter m(cfg);
  // Open and close every window in time order on one meter.
  struct Edge {
    double t_s;
    bool open;
    std::size_t i;
  };
  std::vector<Edge> edges;
  for (std::size_t i = 0; i < kWindows.size(); ++i) {
    edges.push_back({kWindows[i].first, true, i});
    edges.push_back({kWindows[i].second, false, i});
  }
  std::stable_sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t_s < b.t_s; });
  std::vector<WindowId> ids(kWindows.size());
  for (const Edge& e : edges) {
    m.meter->advance_to(m.t0() + SimMeter::s_to_ns(e.t_s));
    if (e.open) ids[e.i] = m.meter->open("w" + std::to_string(e.i));
    else m.meter->close(ids[e.i]);
  }
  m.meter->advance_to(m.clock.now_ns() + 4'000'000'000);
  std::string events;  // what the meter saw, shown beside a failure
  for (const MeterEvent& e : m.meter->events())
    events += fmt::format("\n  event {:.3f} s {} {}: {}", static_cast<double>(e.t_ns - m.t0()) * 1e-9, e.reading, e.kind,
                          e.message);
  int available = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const WindowResult r = m.meter->wait_result(ids[i]);
    ASSERT_EQ(r.domains.size(), 1u);
    const DomainEnergy& d = r.domains[0];
    const std::string where = fmt::format("window [{}, {}] s under '{}'", kWindows[i].first, kWindows[i].second,
                                          GetParam().script);
    if (!d.available) {
      EXPECT_FALSE(d.issues.empty()) << where << ": unavailable without a reason";
      continue;
    }
    ++available;
    const double truth = m.truth(r);
    std::string issues;
    for (const auto& s : d.issues) issues += "\n  " + s;
    EXPECT_TRUE(std::isfinite(d.energy_j) && std::isfinite(d.uncertainty_j)) << where;
    EXPECT_LE(std::abs(d.energy_j - truth), d.uncertainty_j)
        << where << ": " << d.energy_j << " +- " << d.uncertainty_j << " J (" << to_string(d.estimator)
        << ") against a true " << truth << " J" << issues << events;
  }
  // A fault that leaves the device readable never makes every window unavailable.
  if (GetParam().script.find("gpu-lost") == std::string::npos) {
    EXPECT_GT(available, 0);
  }
}

// Cases the meter does not yet get right or unavailable (docs/reliability.md, "Not yet covered"):
// they run with --gtest_also_run_disabled_tests.
bool known_gap(const std::string& name) {
  static const std::vector<std::string> gaps = {
      "stuck_all_every1000ms",
      "stuck_all_every150ms",
      "stuck_all_every2500ms",
      "stuck_energy_counter_j_every1000ms",
      "stuck_energy_counter_j_every150ms"};
  return std::find(gaps.begin(), gaps.end(), name) != gaps.end();
}

std::vector<FaultCase> cases(bool gaps) {
  std::vector<FaultCase> out;
  for (auto& c : all_cases())
    if (known_gap(c.name) == gaps) out.push_back(c);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultMatrix, ::testing::ValuesIn(cases(false)),
                         [](const ::testing::TestParamInfo<FaultCase>& i) { return i.param.name; });
INSTANTIATE_TEST_SUITE_P(DISABLED_KnownGaps, FaultMatrix, ::testing::ValuesIn(cases(true)),
                         [](const ::testing::TestParamInfo<FaultCase>& i) { return i.param.name; });

}  // namespace
}  // namespace wattlab::testing
