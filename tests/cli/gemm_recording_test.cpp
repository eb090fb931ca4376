// The run of a `wattlab gemm` command (cli::GemmRecording: a wattlab::Recording attached to the
// executor's meter) on the SIMULATED executor: the run's facts, its points, and its end with a
// status on success, on a failing executor and when the command throws.
#include "cli/gemm_recording.h"

#include <gtest/gtest.h>

#include <sstream>

#include "lab/temp_db.h"
#include "lab/plan.h"
#include "lab/sim_executor.h"
#include "record/host.h"

namespace wattlab::cli {
namespace {

using Db = lab::test::TempDb;

lab::SweepPlan plan() {
  lab::PlanRequest r;
  r.experiments = {"E11"};
  r.engines = {lab::Engine::bf16};
  r.shapes = {lab::Shape{64, 64, 64}};
  r.seeds = {1};
  r.max_values = 3;
  r.reference_every = 2;
  auto p = lab::make_plan(r);
  EXPECT_TRUE(p) << p.error().message();
  return *p;
}

GemmMeasureOptions fast() {
  GemmMeasureOptions o;
  o.protocol.window_s = 2;
  o.protocol.first_warmup_min_s = 5;
  o.protocol.warmup_min_s = 1;
  o.protocol.warmup_max_s = 20;
  o.protocol.slope_window_s = 5;
  return o;
}

std::unique_ptr<lab::GemmExecutor> sim_for(const lab::SweepPlan& p) {
  auto exec = lab::make_sim_executor(lab::specs_to_run(p.points, 0));
  EXPECT_TRUE(exec) << exec.error().message();
  return std::move(*exec);
}

// The SIMULATED executor whose prepare() fails from the `fail_at`-th call on (0-based): a GPU
// that stops answering in the middle of a sweep.
class FailingExecutor final : public lab::GemmExecutor {
 public:
  FailingExecutor(std::unique_ptr<lab::GemmExecutor> inner, int fail_at) : inner_(std::move(inner)), fail_at_(fail_at) {}
  bool simulated() const override { return inner_->simulated(); }
  std::string description() const override { return inner_->description(); }
  Meter& meter() override { return inner_->meter(); }
  Clock& clock() override { return inner_->clock(); }
  std::vector<DeviceProperties> devices() const override { return inner_->devices(); }
  Result<lab::Prepared> prepare(const lab::GemmSpec& spec, double target_replay_s) override {
    if (prepared_++ >= fail_at_) return Error{ErrorKind::unavailable, "the GPU stopped answering", ""};
    return inner_->prepare(spec, target_replay_s);
  }
  Status launch(int64_t replays) override { return inner_->launch(replays); }
  Status synchronize() override { return inner_->synchronize(); }
  WindowResult window_result(WindowId id) override { return inner_->window_result(id); }

 private:
  std::unique_ptr<lab::GemmExecutor> inner_;
  int fail_at_;
  int prepared_ = 0;
};

struct Streams {
  std::ostringstream out, err;
  Io io{out, err};
};

GemmRunMeta meta() { return {"sim", {"wattlab", "gemm", "sweep", "--experiment", "E11"}, {{"gemm.command", "sweep"}}}; }

TEST(GemmRecording, StoresTheRunsFactsItsPointsAndItsStatus) {
  Db db;
  auto store = Store::open(db.path);
  ASSERT_TRUE(store);
  const auto p = plan();
  auto exec = sim_for(p);
  Streams s;
  RunId id = 0;
  {
    GemmRecording run(*exec, *store, meta(), s.io);
    id = run.run_id();
    auto out = run.measure(p, p.points, fast());
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ(out->measured, p.points.size());
    const auto stored = run.stored_points();
    ASSERT_EQ(stored.size(), p.points.size());
    EXPECT_EQ(stored.front().point.sweep, p.sweep_id);
    EXPECT_EQ(stored.front().window.name, "gemm_point " + std::to_string(stored.front().point.point));
    run.end(0);
    run.end(3);  // the first status stays
  }
  auto rec = store->load_run(id);
  ASSERT_TRUE(rec) << rec.error().message();
  EXPECT_TRUE(rec->info.simulated);
  EXPECT_EQ(rec->info.host, host_name());
  EXPECT_EQ(rec->info.command, meta().command);
  EXPECT_EQ(rec->info.device_selection, "sim");
  EXPECT_EQ(rec->info.tags.at("gemm.command"), "sweep");
  EXPECT_EQ(rec->info.tags.at("gemm.executor"), exec->description());
  EXPECT_EQ(rec->info.devices.size(), exec->devices().size());
  EXPECT_EQ(rec->domains.size(), exec->meter().domains().size());
  EXPECT_EQ(rec->windows.size(), p.points.size());
  EXPECT_GT(rec->reading_count, 0);  // the end drained the readings left in the meter
  ASSERT_TRUE(rec->complete());
  EXPECT_EQ(rec->exit_status, 0);
  EXPECT_EQ(s.err.str(), "");
}

TEST(GemmRecording, AFailingExecutorEndsTheRunAsFailedWithThePointsBeforeIt) {
  Db db;
  auto store = Store::open(db.path);
  ASSERT_TRUE(store);
  const auto p = plan();
  ASSERT_GE(p.points.size(), 2u);
  FailingExecutor exec(sim_for(p), 1);
  Streams s;
  RunId id = 0;
  {
    GemmRecording run(exec, *store, meta(), s.io);
    id = run.run_id();
    auto out = run.measure(p, p.points, fast());
    ASSERT_FALSE(out);
    EXPECT_NE(out.error().what.find("the GPU stopped answering"), std::string::npos) << out.error().what;
    EXPECT_TRUE(run.recording().ended());  // measure() ended it; the command only reports
    run.end(0);                            // too late: the failure's status stays
  }
  auto rec = store->load_run(id);
  ASSERT_TRUE(rec) << rec.error().message();
  ASSERT_TRUE(rec->complete());
  EXPECT_EQ(rec->exit_status, kExitFailure);
  EXPECT_EQ(rec->windows.size(), 1u);  // the point measured before the failure
}

TEST(GemmRecording, ACommandThatThrowsEndsItsRunAsFailed) {
  Db db;
  auto store = Store::open(db.path);
  ASSERT_TRUE(store);
  const auto p = plan();
  auto exec = sim_for(p);
  Streams s;
  RunId id = 0;
  try {
    GemmRecording run(*exec, *store, meta(), s.io);
    id = run.run_id();
    throw WattlabError(Error{ErrorKind::internal, "the command failed", ""});
  } catch (const WattlabError&) {
  }
  auto rec = store->load_run(id);
  ASSERT_TRUE(rec) << rec.error().message();
  ASSERT_TRUE(rec->complete());
  EXPECT_EQ(rec->exit_status, Recording::kAbandonedStatus);
}

}  // namespace
}  // namespace wattlab::cli
