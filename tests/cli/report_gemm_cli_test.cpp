// End-to-end: a SIMULATED GEMM study stored by the lab's sweep runner in two runs (a resumed
// sweep), then `wattlab report --gemm` as a user runs it: text, Markdown, SVG plots, HTML, and the
// usage errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/shell.h"
#include "lab/runner.h"
#include "lab/sim_executor.h"

namespace {
namespace fs = std::filesystem;
using namespace wattlab;  // Store, RunInfo
using wattlab::testing::shell;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ReportGemmCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wattlab_report_gemm_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = dir_ / "study.db";
  }
  void TearDown() override { if (!std::getenv("KEEP")) fs::remove_all(dir_); }

  wattlab::testing::Ran cli(const std::string& args) { return shell(wattlab::testing::wattlab_bin() + " " + args); }

  // E11 and E2 on bf16 and fp32 at 256^3 plus the X1 control, two seeds, window 1 s; the first
  // run stops after `first` points and a second run resumes the sweep.
  void store_study(std::size_t first) {
    lab::PlanRequest req;
    req.experiments = {"E11", "E2", "X1"};
    req.engines = {lab::Engine::bf16, lab::Engine::fp32};
    req.shapes = {lab::Shape{256, 256, 256}};
    req.seeds = {1, 2};
    req.max_values = 3;
    req.reference_every = 3;
    req.control_bytes = 1 << 20;
    auto plan = lab::make_plan(req);
    ASSERT_TRUE(plan) << plan.error().message();
    lab::ProtocolOptions opt;
    opt.window_s = 1;
    opt.first_warmup_min_s = 2;
    opt.warmup_min_s = 1;
    opt.warmup_max_s = 5;
    opt.slope_window_s = 2;
    auto store = Store::open(db_);
    ASSERT_TRUE(store) << store.error().message();
    for (int part = 0; part < 2; ++part) {
      auto done = lab::completed_points(*store, plan->sweep_id);
      ASSERT_TRUE(done);
      const auto rest = lab::remaining_points(*plan, *done);
      std::vector<lab::GemmSpec> specs;
      for (const auto& p : rest) specs.push_back(p.spec);
      auto exec = lab::make_sim_executor(specs, {15, 1, 1 << 12});
      ASSERT_TRUE(exec) << exec.error().message();
      RunInfo info;
      info.simulated = (*exec)->simulated();
      info.device_selection = "sim";
      info.devices = (*exec)->devices();
      auto run = store->begin_run(info);
      ASSERT_TRUE(run);
      ASSERT_TRUE(store->add_domains(*run, (*exec)->meter().domains()));
      auto out = lab::run_sweep(*plan, rest, **exec, *store, *run, opt, nullptr, nullptr, part == 0 ? first : 0);
      ASSERT_TRUE(out) << out.error().message();
      ASSERT_TRUE(store->end_run(*run, (*exec)->clock().now_ns(), 0));
    }
    points_ = plan->points.size();
    sweep_ = plan->sweep_id;
  }

  fs::path dir_, db_;
  std::size_t points_ = 0;
  std::string sweep_;
};

TEST_F(ReportGemmCli, MarkdownPlotsTextAndHtmlOverEveryRun) {
  store_study(7);
  ASSERT_GT(points_, 20u);
  const auto plots = dir_ / "plots";
  auto md = cli("report --gemm --db " + db_.string() + " --format md --plots-dir " + plots.string());
  ASSERT_EQ(md.rc, 0) << md.out;
  // Both runs' points form one sweep.
  EXPECT_NE(md.out.find("### GEMM sweep " + sweep_ + " (SIMULATED): " + std::to_string(points_) + " points from runs 1, 2"),
            std::string::npos)
      << md.out;
  for (const char* title : {"#### Reference points per shape and engine (SIMULATED)",
                            "#### Effects per experiment and engine, next to the original study (SIMULATED)",
                            "#### E2 over mean: each value against the reference (SIMULATED)",
                            "#### E11 over fraction: each value against the reference (SIMULATED)",
                            "#### Controls X1-X3 against idle (SIMULATED)"})
    EXPECT_NE(md.out.find(title), std::string::npos) << title << "\n" << md.out;
  EXPECT_NE(md.out.find("| 256x256x256 | bf16 | 2 |"), std::string::npos) << md.out;  // reference row, 2 seeds
  EXPECT_NE(md.out.find("big 90 -> 100 % step"), std::string::npos);  // the original's E11 result
  // The sim draws less with zeros: E11 at fraction 1 is well below the reference.
  EXPECT_NE(md.out.find("| E11 | 256x256x256 | bf16 | 3 | 2 |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("wrote 5 plots to " + plots.string()), std::string::npos) << md.out;
  // E2 and E11 energy per GEMM and power, X1 power: every file exists and says SIMULATED.
  std::size_t svgs = 0;
  for (const auto& f : fs::directory_iterator(plots)) {
    ++svgs;
    EXPECT_EQ(f.path().extension(), ".svg");
    const auto svg = slurp(f.path());
    EXPECT_NE(svg.find("SIMULATED"), std::string::npos) << f.path();
    EXPECT_NE(svg.find("reference"), std::string::npos) << f.path();
  }
  EXPECT_EQ(svgs, 5u);
  for (const char* name : {"_E11_256x256x256_energy.svg", "_E11_256x256x256_power.svg", "_E2_256x256x256_energy.svg",
                           "_E2_256x256x256_power.svg", "_X1_control_power.svg"})
    EXPECT_TRUE(fs::exists(plots / ("gemm_" + sweep_ + name))) << name;

  auto text = cli("report --gemm all --db " + db_.string());
  ASSERT_EQ(text.rc, 0) << text.out;
  EXPECT_NE(text.out.find("== GEMM sweep " + sweep_ + " (SIMULATED)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Reference points per shape and engine (SIMULATED)"), std::string::npos);

  // latest: the resumed run alone.
  auto latest = cli("report --gemm latest --db " + db_.string());
  ASSERT_EQ(latest.rc, 0) << latest.out;
  EXPECT_NE(latest.out.find(std::to_string(points_ - 7) + " points from run 2"), std::string::npos) << latest.out;

  const auto html = dir_ / "study.html";
  auto h = cli("report --gemm --db " + db_.string() + " --html " + html.string());
  ASSERT_EQ(h.rc, 0) << h.out;
  const auto page = slurp(html);
  EXPECT_NE(page.find("<title>wattlab GEMM study (SIMULATED)</title>"), std::string::npos);
  EXPECT_NE(page.find("<table class=\"gemm\">"), std::string::npos);
  std::size_t figs = 0;
  for (auto at = page.find("<svg class=\"plot\""); at != std::string::npos; at = page.find("<svg class=\"plot\"", at + 1)) ++figs;
  EXPECT_EQ(figs, svgs);
  EXPECT_EQ(page.find("<script"), std::string::npos);

  // --format html: the same page on stdout.
  auto out_page = cli("report --gemm --db " + db_.string() + " --format html");
  ASSERT_EQ(out_page.rc, 0) << out_page.out.substr(0, 400);
  EXPECT_TRUE(out_page.out.starts_with("<!DOCTYPE html>\n")) << out_page.out.substr(0, 200);
  EXPECT_NE(out_page.out.find("<title>wattlab GEMM study (SIMULATED)</title>"), std::string::npos);
  EXPECT_NE(out_page.out.find("<table class=\"gemm\">"), std::string::npos);

  // The per-run page carries the normalized plots too.
  auto run_page = cli("report 1 --db " + db_.string() + " --html " + (dir_ / "run1.html").string());
  ASSERT_EQ(run_page.rc, 0) << run_page.out;
  EXPECT_NE(slurp(dir_ / "run1.html").find("/ reference vs"), std::string::npos);
}

TEST_F(ReportGemmCli, UsageErrors) {
  store_study(0);
  const std::string db = " --db " + db_.string();
  EXPECT_EQ(cli("report --gemm --format xml" + db).rc, 2);
  EXPECT_EQ(cli("report --format md" + db).rc, 2);             // md without --gemm
  EXPECT_EQ(cli("report --gemm --format html --plots-dir " + dir_.string() + db).rc, 2);
  EXPECT_EQ(cli("report --gemm --format html --html " + (dir_ / "x.html").string() + db).rc, 2);
  EXPECT_EQ(cli("report --plots-dir " + dir_.string() + db).rc, 2);
  EXPECT_EQ(cli("report all" + db).rc, 2);                     // 'all' without --gemm
  EXPECT_EQ(cli("report --gemm --json" + db).rc, 2);
  EXPECT_EQ(cli("report --gemm --format json" + db).rc, 2);
  EXPECT_EQ(cli("report --gemm 99" + db).rc, 2);               // no such run
  EXPECT_EQ(cli("report --gemm x1" + db).rc, 2);
  auto none = cli("report --gemm --sweep nosuchsweep" + db);
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.out.find("no gemm_point windows"), std::string::npos) << none.out;
  // A run without GEMM points.
  const auto plain = dir_ / "plain.db";
  ASSERT_EQ(cli("run --device sim --db " + plain.string() + " -- true").rc, 0);
  EXPECT_EQ(cli("report --gemm --db " + plain.string()).rc, 2);
}

}  // namespace
