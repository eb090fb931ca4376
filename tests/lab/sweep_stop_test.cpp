// The sweep's stop rule (SweepStop) and the accuracy check (check_accuracy, on a scripted
// executor). The run a GEMM command stores its points in: tests/cli/gemm_recording_test.cpp.
#include "lab/sweep_stop.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "lab/accuracy_check.h"

namespace wattlab::lab {
namespace {

TEST(SweepStop, ASignalStopsFirstThenTheBudget) {
  TimeModel m;
  m.window_s = 10;
  m.warmup_s = 2;
  m.first_warmup_s = 10;
  m.prepare_s = 1;
  double now_s = 0;
  bool signal = false;
  SweepStop stop(m, 60, [&] { return now_s; }, [&] { return signal; });
  EXPECT_FALSE(stop());  // 0 + 21 s (the model's first point) <= 60
  now_s = 20;
  EXPECT_FALSE(stop());  // 20 + 20 s (the mean so far) <= 60
  now_s = 40;
  EXPECT_FALSE(stop());  // 40 + 20 s (two points in 40 s) is not past 60
  now_s = 46;
  EXPECT_TRUE(stop());  // 46 + 15.3 s (three points in 46 s) > 60
  EXPECT_EQ(stop.why(), SweepStop::Why::budget);
  signal = true;
  EXPECT_TRUE(stop());
  EXPECT_EQ(stop.why(), SweepStop::Why::signal);

  SweepStop unbounded(m, 0, [&] { return 1e9; }, {});
  EXPECT_FALSE(unbounded());
  EXPECT_EQ(unbounded.why(), SweepStop::Why::none);
  SweepStop too_short(m, 20, [&] { return 0.0; }, {});
  EXPECT_TRUE(too_short());  // the first point alone (21 s) would pass 20 s
}

// An executor whose prepare() returns what a test scripted per engine: the accuracy rules alone.
class ScriptedExecutor final : public GemmExecutor {
 public:
  std::map<Engine, Result<Prepared>> script;
  bool simulated() const override { return false; }
  std::string description() const override { return "scripted"; }
  Meter& meter() override { std::abort(); }
  Clock& clock() override { return clock_; }
  std::vector<DeviceProperties> devices() const override { return {}; }
  Result<Prepared> prepare(const GemmSpec& s, double) override {
    EXPECT_EQ(s.recipe_a, s.engine == Engine::int8 ? "normal(mean=0, std=20)" : "normal(mean=0, std=1)");
    return script.at(s.engine);
  }
  Status launch(int64_t) override { return {}; }
  Status synchronize() override { return {}; }
  WindowResult window_result(WindowId) override { return {}; }

 private:
  VirtualClock clock_{0};
};

TEST(AccuracyCheck, EachRuleGivesItsVerdict) {
  ScriptedExecutor exec;
  auto prepared = [](std::optional<double> rel, double nonfinite) {
    Prepared p;
    p.rel_error = rel;
    p.nonfinite_fraction = nonfinite;
    return Result<Prepared>(p);
  };
  exec.script.emplace(Engine::bf16, prepared(1e-3, 0));                   // bound 1e-2: pass
  exec.script.emplace(Engine::fp16, prepared(1e-3, 0.01));                // inf/NaN in C
  exec.script.emplace(Engine::fp32, prepared(std::nullopt, 0));           // no spot check
  exec.script.emplace(Engine::tf32, prepared(std::nan(""), 0));           // error not finite
  exec.script.emplace(Engine::int8, prepared(1e-9, 0));                   // bound 0: above it
  exec.script.emplace(Engine::fp8e4m3, Result<Prepared>(Error{ErrorKind::unavailable, "no FP8 here", ""}));
  std::vector<Engine> seen;
  const auto checks = check_accuracy(exec, {Engine::bf16, Engine::fp16, Engine::fp32, Engine::tf32, Engine::int8,
                                            Engine::fp8e4m3},
                                     {Shape{256, 256, 256}}, 7, [&](const AccuracyCheck& c) { seen.push_back(c.engine); });
  ASSERT_EQ(checks.size(), 6u);
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(checks[0].verdict, CheckVerdict::pass);
  EXPECT_TRUE(checks[0].passed());
  EXPECT_EQ(checks[1].verdict, CheckVerdict::nonfinite_output);
  EXPECT_EQ(checks[2].verdict, CheckVerdict::no_spot_check);
  EXPECT_EQ(checks[3].verdict, CheckVerdict::nonfinite_error);
  EXPECT_EQ(checks[4].verdict, CheckVerdict::above_bound);
  EXPECT_EQ(checks[5].verdict, CheckVerdict::error);
  ASSERT_TRUE(checks[5].error);
  EXPECT_EQ(checks[5].error->what, "no FP8 here");
}

}  // namespace
}  // namespace wattlab::lab
