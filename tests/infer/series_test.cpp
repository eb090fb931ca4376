// A series against the fake server, with windows whose energy is a known 300 W: pilots sized by
// the rule from what they measured, repeats at one count, labels on the windows, and giving up.
#include "infer/series.h"

#include <gtest/gtest.h>

#include <map>

#include "infer/fake_openai_server.h"
#include "wattlab/core/clock.h"

namespace wattlab::infer {
namespace {

// Windows of a board drawing 300 W: energy = 300 W x duration, final at once.
class Windows300W final : public BenchWindows {
 public:
  explicit Windows300W(Clock& c) : clock_(c) {}
  WindowId open(std::string_view name) override { return add(name, clock_.now_ns(), 0); }
  void close(WindowId id) override { w_[id].t_end_ns = clock_.now_ns(); }
  WindowId add_window(std::string_view name, int64_t b, int64_t e) override { return add(name, b, e); }
  WindowResult result(WindowId id) override {
    WindowResult r = w_[id];
    DomainEnergy d;
    d.domain_id = "gpu:0";
    d.available = true;
    d.energy_j = 300 * r.dur_s();
    d.uncertainty_j = 0.01 * d.energy_j;
    r.domains = {d};
    r.final = true;
    return r;
  }
  void annotate(WindowId id, const std::map<std::string, std::string>& labels,
                const std::map<std::string, double>& counts) override {
    for (const auto& [k, v] : labels) w_[id].labels[k] = v;
    for (const auto& [k, v] : counts) w_[id].counts[k] = v;
  }
  std::map<WindowId, WindowResult> w_;

 private:
  WindowId add(std::string_view name, int64_t b, int64_t e) {
    const WindowId id = w_.size() + 1;
    w_[id] = WindowResult{id, std::string(name), b, e};
    return id;
  }
  Clock& clock_;
};

struct Fixture {
  testing::FakeOpenAiServer srv{{.tokens = 0, .token_delay_ms = 2, .max_concurrent = 4}};
  Clock& clock = MonotonicClock::instance();
  Windows300W windows{clock};
  WorkloadSpec spec;
  ServeBenchOptions o;
  RequestSource source;
  Fixture() {
    spec.input = {LengthKind::fixed, 5, 1, 100};
    spec.output = {LengthKind::fixed, 6, 1, 100};
    o.server.base_url = srv.base_url();
    o.server.model = "fake";
    o.server.timeout_s = 30;
    o.batch_cap = 4;
    o.load.seed = 10;
    // Poisson arrivals 2 ms apart on average: the fake server (httplib) accepts with a backlog of 5,
    // which a burst at t = 0 overflows (SYN retries of 1 s); a real server has a deep backlog.
    o.load.rate_per_s = 500;
    source = [this](std::size_t n, uint64_t seed) { return synthetic_requests(spec, n, seed); };
  }
};

TEST(Series, PilotsAreSizedByTheRuleAndRepeatsShareOneCount) {
  Fixture f;
  SeriesPlan plan;
  plan.repeats = 2;
  // 3 s: a pilot of 14 requests (~0.05 s of work) stays short even when the loaded machine delays a
  // connection by a SYN retry (1 s).
  plan.min_steady_s = 3;
  f.o.min_steady_s = plan.min_steady_s;
  const SeriesResult s = measure_series(f.windows, f.clock, f.source, 6, f.o, plan);
  ASSERT_TRUE(s.failure.empty()) << s.failure;
  ASSERT_GE(s.runs.size(), 3u);
  // The first run is a pilot of 3B + 2: its window (14 requests of 6 tokens at 2 ms) is ~0.05 s.
  EXPECT_TRUE(s.runs[0].pilot);
  EXPECT_EQ(s.runs[0].requests, 14);
  int repeats = 0;
  for (std::size_t k = 0; k < s.runs.size(); ++k) {
    const auto& run = s.runs[k];
    EXPECT_EQ(run.seed, 10 + k);
    if (run.pilot) {
      // The next run is sized from this one's measured throughput and output length.
      ASSERT_LT(k + 1, s.runs.size());
      EXPECT_EQ(s.runs[k + 1].requests, next_request_count(run.requests, 4, run.mean_output_tokens, run.sizing_tok_s, plan));
      EXPECT_NEAR(run.mean_output_tokens, 6, 1e-12);
      EXPECT_NEAR(run.mean_input_tokens, 5, 1e-12);
    } else {
      EXPECT_EQ(run.index, ++repeats);
      EXPECT_EQ(run.requests, s.requests_per_run);
    }
  }
  EXPECT_EQ(repeats, 2);
  // Labels: every window says its run; a pilot's steady window is phase=pilot, no configuration.
  int pilots_seen = 0, repeats_seen = 0;
  for (const auto& [id, w] : f.windows.w_) {
    ASSERT_TRUE(w.labels.count(kRunLabel)) << w.name;
    const std::string role = w.labels.at(kRoleLabel);
    if (w.name.rfind("steady", 0) != 0) continue;
    if (role == "pilot") {
      ++pilots_seen;
      EXPECT_EQ(w.labels.at("phase"), kPilotPhase);
      EXPECT_FALSE(w.labels.count(kRepeatLabel));
    } else {
      ++repeats_seen;
      EXPECT_EQ(w.labels.at("phase"), "steady");
      EXPECT_EQ(w.name, "steady run" + w.labels.at(kRunLabel));
    }
  }
  EXPECT_EQ(repeats_seen, 2);
  EXPECT_GE(pilots_seen, 1);
  // The interval is over the stable repeats' J/token, whatever their number.
  std::vector<double> ept;
  for (const auto& run : s.runs)
    for (int i : s.included)
      if (!run.pilot && run.index == i) ept.push_back(run.m.result.steady.energy_per_token_j);
  EXPECT_EQ(s.included.size() + s.excluded.size(), 2u);
  EXPECT_DOUBLE_EQ(s.energy_per_token_j.mean, mean_ci95(ept).mean);
}

TEST(Series, AFixedCountRunsNoPilots) {
  Fixture f;
  SeriesPlan plan;
  plan.repeats = 3;
  plan.fixed_requests = 12;
  const SeriesResult s = measure_series(f.windows, f.clock, f.source, 6, f.o, plan);
  ASSERT_EQ(s.runs.size(), 3u);
  for (const auto& run : s.runs) {
    EXPECT_FALSE(run.pilot);
    EXPECT_EQ(run.requests, 12);
    EXPECT_EQ(run.m.result.succeeded.size(), 12u);
  }
  // Every repeat is under 20 s, so none passes the study's filter: no interval, each one says why.
  EXPECT_EQ(s.energy_per_token_j.n, 0u);
  ASSERT_EQ(s.excluded.size(), 3u);
  EXPECT_NE(s.excluded[0].second.find("unstable"), std::string::npos);
}

TEST(Series, TooManyShortRunsEndTheSeries) {
  Fixture f;
  SeriesPlan plan;
  plan.min_steady_s = 30;
  plan.max_pilots = 0;
  SeriesResult s = measure_series(f.windows, f.clock, f.source, 6, f.o, plan);
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_TRUE(s.runs[0].pilot);
  EXPECT_NE(s.failure.find("after 1 pilot runs"), std::string::npos) << s.failure;
  EXPECT_EQ(s.energy_per_token_j.n, 0u);
  // A window so long that the sizing asks for more requests than a run may send: no second run.
  plan.min_steady_s = 1e5;
  plan.max_pilots = 3;
  plan.max_requests = 1000;
  s = measure_series(f.windows, f.clock, f.source, 6, f.o, plan);
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_NE(s.failure.find("more than the 1000 a run may send"), std::string::npos) << s.failure;
}

}  // namespace
}  // namespace wattlab::infer
