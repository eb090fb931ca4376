// What `wattlab gemm` prints, from records: the results table, a point's accuracy verdict, the
// accuracy check rows and how a sweep ended.
#include "report/gemm_text.h"

#include <gtest/gtest.h>

#include <sstream>

namespace wattlab::report {
namespace {

GemmPointRecord point(int index, const std::string& engine) {
  GemmPointRecord p;
  p.point = index;
  p.engine = engine;
  p.experiment = engine == "control" ? "X1" : "E11";
  p.m = p.n = p.k = engine == "control" ? 0 : 1024;
  p.seed = 2;
  p.param = "fraction";
  p.param_value = "0.5";
  p.counts.energy_per_gemm_j = 1.25e-3;
  p.counts.energy_per_gemm_u_j = 9e-6;
  p.counts.mean_power_w = 406.4;
  p.counts.tflops = 700;
  p.counts.mean_sm_clock_mhz = 1980;
  return p;
}

TEST(GemmText, AccuracyVerdicts) {
  GemmPointCounts c;
  EXPECT_EQ(accuracy(c, lab::Engine::bf16, true).text, "not checked: the SIMULATED executor computes no GEMM output");
  EXPECT_EQ(accuracy(c, lab::Engine::bf16, false).verdict, Accuracy::unchecked);
  c.rel_error = 1.5e-3;
  EXPECT_EQ(accuracy(c, lab::Engine::bf16, false).text,
            "1.500e-03 (relative Frobenius vs float64) <= bound 1e-02 of bf16: PASS");
  c.rel_error = 2e-2;
  EXPECT_EQ(accuracy(c, lab::Engine::bf16, false).verdict, Accuracy::fail);
  c.rel_error.reset();
  c.rel_error_nonfinite = true;
  EXPECT_EQ(accuracy(c, lab::Engine::bf16, false).text, "the relative error is not finite: FAIL");
  c.nonfinite_fraction = 0.01;
  EXPECT_EQ(accuracy(c, lab::Engine::bf16, false).text, "1 % of C is inf or NaN: FAIL (never passes)");

  auto bad = point(1, "bf16");
  bad.counts.rel_error = 0.5;
  auto control = point(2, "control");
  control.counts.rel_error = 0.5;  // no engine: never judged
  EXPECT_EQ(failed_accuracy({point(0, "bf16"), bad, control}, false), 1u);
}

TEST(GemmText, ResultsTableFromRecords) {
  std::ostringstream out;
  print_results_table(out, {point(3, "bf16"), point(4, "control")}, true);
  const std::string s = out.str();
  EXPECT_EQ(s.rfind("SIMULATED results (not hardware), 2 points measured now", 0), 0u) << s;
  EXPECT_NE(s.find("     3  bf16        1024x1024x1024         2  E11  fraction=0.5"), std::string::npos) << s;
  EXPECT_NE(s.find("1.25 mJ ± 0.009 mJ"), std::string::npos) << s;
  EXPECT_NE(s.find("unchecked"), std::string::npos) << s;
  // A control has no shape, GEMM energy or throughput, and no accuracy verdict.
  EXPECT_NE(s.find("     4  control     -                      2  X1"), std::string::npos) << s;
  EXPECT_NE(s.find("406.4          -      1980  -"), std::string::npos) << s;
}

TEST(GemmText, HowASweepEnded) {
  lab::SweepOutcome o;
  o.measured = 2;
  o.prepare_s = 1;
  o.warmup_s = 4;
  o.window_s = 20;
  o.store_s = 0.5;
  o.warmup_steady = 1;
  SweepEnd e{&o, lab::SweepStop::Why::none, 5, 9, 0, 0, "w.db", "sweep-1", true};
  auto text = [&] {
    std::ostringstream out;
    print_sweep_end(out, e);
    return out.str();
  };
  EXPECT_EQ(text(),
            "time (SIMULATED clock): 2 points, per point 0.50 s preparing, 2.00 s warming up (1 of 2 ended steady), "
            "10.00 s in windows, 0.25 s storing\n"
            "sweep complete: 5 of 9 points stored in w.db (sweep id sweep-1)\n");
  o.stopped = true;
  e.why = lab::SweepStop::Why::signal;
  EXPECT_NE(text().find("stopped by a signal: 5 of 9 points done; run the same command again to resume\n"),
            std::string::npos);
  e.why = lab::SweepStop::Why::budget;
  EXPECT_NE(text().find("stopped at budget: 5 of 9"), std::string::npos);
  e.why = lab::SweepStop::Why::none;
  e.max_points = 2;
  e.failed = 1;
  EXPECT_NE(text().find("stopped after --max-points 2: 5 of 9"), std::string::npos);
  EXPECT_NE(text().find("WARNING: 1 points failed their accuracy check"), std::string::npos);
}

TEST(GemmText, AccuracyCheckRows) {
  std::ostringstream out;
  lab::AccuracyCheck ok;
  ok.engine = lab::Engine::int8;
  ok.shape = {256, 256, 256};
  ok.verdict = lab::CheckVerdict::pass;
  ok.rel_error = 0;
  lab::AccuracyCheck failed = ok;
  failed.engine = lab::Engine::bf16;
  failed.verdict = lab::CheckVerdict::nonfinite_output;
  failed.nonfinite_fraction = 0.25;
  lab::AccuracyCheck error = ok;
  error.verdict = lab::CheckVerdict::error;
  error.error = Error{ErrorKind::unavailable, "cuBLASLt has no algorithm", ""};
  print_accuracy_check(out, ok);
  print_accuracy_check(out, failed);
  print_accuracy_check(out, error);
  print_accuracy_check_total(out, {ok, failed, error});
  const std::string s = out.str();
  EXPECT_NE(s.find("0.000e+00      0 (exact)            0  PASS"), std::string::npos) << s;
  EXPECT_NE(s.find("0.25  FAIL (inf/NaN in C)"), std::string::npos) << s;
  EXPECT_NE(s.find("ERROR: cuBLASLt has no algorithm (unavailable)"), std::string::npos) << s;
  EXPECT_NE(s.find("1 of 3 checks passed\n"), std::string::npos) << s;
}

}  // namespace
}  // namespace wattlab::report
