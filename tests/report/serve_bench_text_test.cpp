// What `wattlab infer serve-bench` prints, from a hand-built result.
#include "report/serve_bench_text.h"

#include <gtest/gtest.h>

#include <sstream>

namespace wattlab::report {
namespace {

infer::BenchResult result() {
  infer::BenchResult r;
  r.simulated = true;
  r.base_url = "http://127.0.0.1:8000/v1";
  r.model = "m";
  r.batch_cap = 2;
  r.bench_dur_s = 30;
  r.requests.resize(3);
  r.requests[0].ok = r.requests[1].ok = true;
  r.requests[2].index = 2;
  r.requests[2].id = "late";
  r.requests[2].error = "HTTP 500";
  r.succeeded = {r.requests[0], r.requests[1]};
  r.energy_domains = "gpu:0";
  auto& s = r.steady;
  s.window.found = true;
  s.window.t_begin_ns = 0;
  s.window.t_end_ns = 25'000'000'000;
  s.window.n_requests = 2;
  s.window.batch_cap = 2;
  s.tokens = 500;
  s.energy.available = true;
  s.energy.energy_j = 7500;
  s.energy.uncertainty_j = 75;
  s.energy.systematic_j = 375;
  s.energy_per_token_j = 15;
  s.avg_power_w = 300;
  s.stability.window_long_enough = true;
  s.stability.energy_positive = true;
  s.stability.flags = {"mean running 1.2 of B = 2 (0.6 < 0.85)"};
  return r;
}

TEST(ServeBenchText, SaysSimulatedFailuresEnergyAndTheFilter) {
  std::ostringstream out;
  print_serve_bench(out, result());
  const std::string s = out.str();
  EXPECT_EQ(s.rfind("SIMULATED: energy numbers come from wattlab's simulated GPU, not hardware\n", 0), 0u) << s;
  EXPECT_NE(s.find("3 requests to http://127.0.0.1:8000/v1 (model m), batch cap 2, all sent at t = 0"), std::string::npos) << s;
  EXPECT_NE(s.find("2 succeeded, 1 failed"), std::string::npos) << s;
  EXPECT_NE(s.find("failed #2 'late': HTTP 500"), std::string::npos) << s;
  EXPECT_NE(s.find("energy (gpu:0): 7500 J ± 75 J (95%) ± 375 J gain"), std::string::npos) << s;
  EXPECT_NE(s.find("mean power: 300 W ± 3 W (95%) ± 15 W gain"), std::string::npos) << s;
  EXPECT_NE(s.find("UNSTABLE: the study would drop this run"), std::string::npos) << s;
  EXPECT_NE(s.find("FLAG: mean running 1.2 of B = 2"), std::string::npos) << s;
}

TEST(ServeBenchText, NoSteadyWindowSaysWhy) {
  auto r = result();
  r.simulated = false;
  r.steady.window.found = false;
  r.steady.window.reason = "2 requests < 2 x batch cap";
  std::ostringstream out;
  print_serve_bench(out, r);
  EXPECT_EQ(out.str().find("SIMULATED"), std::string::npos);
  EXPECT_NE(out.str().find("steady state: none (2 requests < 2 x batch cap)"), std::string::npos) << out.str();
}

TEST(ServeBenchText, ASeriesShowsTheWorkloadThePilotsAndTheInterval) {
  infer::SeriesResult s;
  s.requests_per_run = 120;
  infer::SeriesRun pilot;
  pilot.pilot = true;
  pilot.index = 1;
  pilot.requests = 14;
  pilot.seed = 1;
  pilot.sizing_tok_s = 850;
  pilot.m.result = result();
  s.runs.push_back(pilot);
  for (int i = 1; i <= 3; ++i) {
    infer::SeriesRun r;
    r.index = i;
    r.requests = 120;
    r.seed = static_cast<uint64_t>(1 + i);
    r.m.result = result();
    s.runs.push_back(r);
  }
  s.included = {1, 2, 3};
  s.energy_per_token_j = infer::mean_ci95(std::vector<double>{0.10, 0.12, 0.14});
  s.mean_u95_energy_per_token_j = 0.0015;
  infer::SeriesDescription d;
  d.spec = infer::WorkloadSpec{};
  d.spec->input = {infer::LengthKind::geometric, 256, 1, 8192};
  d.spec->output = {infer::LengthKind::geometric, 396.6, 1, 4096};
  d.spec->source = "output mean 396.6 tokens = mean avg_output_len of 11 rows of chat.json";
  std::ostringstream out;
  print_serve_bench_series(out, s, d);
  const std::string t = out.str();
  EXPECT_NE(t.find("workload: synthetic chat requests, output mean 396.6 tokens = mean avg_output_len"), std::string::npos) << t;
  EXPECT_NE(t.find("output lengths geometric around a mean of 396.6 tokens (capped at 4096)"), std::string::npos) << t;
  EXPECT_NE(t.find("== pilot 1: 14 requests, seed 1 (window too short: the next run is sized from 850 tok/s)"),
            std::string::npos) << t;
  EXPECT_NE(t.find("== repeat 3: 120 requests, seed 4\n"), std::string::npos) << t;
  EXPECT_NE(t.find("over 3 of 3 repeats (120 requests each"), std::string::npos) << t;
  EXPECT_NE(t.find("mean 0.12 J, 95% CI 0.0703172..0.169683 J (Student t over repeats, 2 df, t = 4.30265; sd 0.02 J)"),
            std::string::npos) << t;
  EXPECT_NE(t.find("own measurement U95: 0.0015 J"), std::string::npos) << t;
}

}  // namespace
}  // namespace wattlab::report
