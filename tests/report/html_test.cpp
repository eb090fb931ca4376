// The HTML report of a run built in a temporary store: escaping, inlined SVG, GEMM sweeps, frontier.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "report/sample_store.h"
#include "report/gemm_plots.h"
#include "report/html.h"
#include "report/html_report.h"

using namespace wattlab;
using namespace wattlab::report;

TEST(Html, EscapesText) { EXPECT_EQ(html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"); }

TEST(Html, InlineSvgDropsPrologAndPrefixesIds) {
  const std::string svg = "<?xml version=\"1.0\"?>\n<svg viewBox=\"0 0 1 1\"><title>Gnuplot</title><defs><path id='gpPt1'/></defs>"
                          "<use xlink:href='#gpPt1'/><g id=\"gnuplot_plot_1\"></g><rect fill='url(#g1)'/></svg>";
  const auto s = inline_svg(svg, "p7-", "a<b");
  EXPECT_EQ(s.rfind("<svg class=\"plot\" data-plot=\"a&lt;b\"", 0), 0u) << s;
  EXPECT_NE(s.find("id='p7-gpPt1'"), std::string::npos);
  EXPECT_NE(s.find("href='#p7-gpPt1'"), std::string::npos);
  EXPECT_NE(s.find("id=\"p7-gnuplot_plot_1\""), std::string::npos);
  EXPECT_NE(s.find("url(#p7-g1)"), std::string::npos);
  EXPECT_NE(s.find("<title>a&lt;b</title>"), std::string::npos);
  EXPECT_EQ(s.find("<?xml"), std::string::npos);
}

class HtmlReport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-html-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    auto s = Store::open(dir_ / "t.db");
    ASSERT_TRUE(s.ok());
    store_.emplace(std::move(*s));
    run_ = sample::write_sample_run(*store_);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::optional<Store> store_;
  RunId run_ = 0;
};

TEST_F(HtmlReport, GroupsGemmPointsPerExperimentAndEngine) {
  const auto run = store_->load_run(run_).value();
  const auto sweeps = gemm_sweeps(run);
  ASSERT_EQ(sweeps.size(), 2u);
  EXPECT_EQ(sweeps[0].experiment, "E1");
  EXPECT_EQ(sweeps[0].param, "k");
  EXPECT_TRUE(sweeps[0].numeric);
  ASSERT_EQ(sweeps[0].engines.size(), 2u);
  EXPECT_EQ(sweeps[0].engines[1].first, "fp8");
  ASSERT_EQ(sweeps[0].engines[0].second.size(), 3u);
  EXPECT_DOUBLE_EQ(sweeps[0].engines[0].second[2].x, 4096);
  EXPECT_DOUBLE_EQ(*sweeps[0].engines[0].second[2].energy_per_gemm_j, 2e-6 * 4096);
  EXPECT_FALSE(sweeps[1].numeric);
  EXPECT_EQ(sweeps[1].categories, (std::vector<std::string>{"zeros", "gaussian", "uniform"}));
  const auto p = gemm_energy_plot(sweeps[0], true);
  EXPECT_NE(p.title.find("SIMULATED"), std::string::npos);
  EXPECT_EQ(p.series[0].style, Style::errorlines);
  EXPECT_DOUBLE_EQ(p.series[0].points[0].y_err, 0.05 * 2e-6 * 256);
  EXPECT_EQ(gemm_power_plot(sweeps[1], true).x_tics.size(), 3u);
}

TEST_F(HtmlReport, WritesOneSelfContainedPageWithEveryPlot) {
  if (!find_gnuplot()) GTEST_FAIL() << "gnuplot not installed (scripts/install-deps.sh installs gnuplot-nox)";
  auto html = html_report(*store_, run_);
  ASSERT_TRUE(html.ok()) << html.error().message();
  const std::string& h = *html;
  // Power + 3 telemetry groups + 2 x 2 GEMM + 1 frontier.
  std::size_t n = 0;
  for (auto at = h.find("<svg class=\"plot\""); at != std::string::npos; at = h.find("<svg class=\"plot\"", at + 1)) ++n;
  EXPECT_EQ(n, 9u) << h.substr(0, 2000);
  for (const char* s : {"SIMULATED", "Power: gpu:0", "Clocks: gpu:0", "Temperature: gpu:0", "Utilization and activity: gpu:0",
                        "GEMM E1: energy per GEMM vs k", "GEMM E2: mean power vs distribution",
                        "Time-energy frontier: test/llm-8b", "python3 bench.py --size &lt;4096&gt;", "counter+samples",
                        "energy_per_gemm_j = ", "param_value = 4096"})
    EXPECT_NE(h.find(s), std::string::npos) << s;
  // Text from the store never becomes markup; nothing is fetched.
  EXPECT_EQ(h.find(sample::kNastyWindow), std::string::npos);
  EXPECT_NE(h.find("&lt;b&gt;warm&amp;up&quot;&lt;/b&gt;"), std::string::npos);
  EXPECT_FALSE(std::regex_search(h, std::regex(R"((src|href)\s*=\s*["']?(https?:|//))"))) << "an external reference";
  EXPECT_EQ(h.find("<script"), std::string::npos);
  EXPECT_EQ(h.find("<link"), std::string::npos);
  EXPECT_EQ(h.find("@import"), std::string::npos);
}

TEST_F(HtmlReport, UnknownRunIsNotFound) {
  auto html = html_report(*store_, run_ + 41);
  ASSERT_FALSE(html.ok());
  EXPECT_EQ(html.error().kind, ErrorKind::not_found);
}

// The study writes swept values as "2^-5" and "0xFF": the plots place them by value, as the tables do.
TEST(GemmSweeps, PowersOfTwoAndHexArePlottedByValue) {
  RunRecord run;
  for (const char* v : {"2^4", "2^-1", "0x10"}) {
    WindowResult w;
    w.name = std::string("gemm_point ") + v;
    GemmPointRecord p;
    p.experiment = "E1";
    p.engine = "bf16";
    p.m = p.n = p.k = 64;
    p.param = "std";
    p.param_value = v;
    p.counts.energy_per_gemm_j = 1.0;
    p.encode(w);
    run.windows.push_back(w);
  }
  const auto sweeps = gemm_sweeps(run);
  ASSERT_EQ(sweeps.size(), 1u);
  EXPECT_TRUE(sweeps[0].numeric);
  const auto& pts = sweeps[0].engines.at(0).second;
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_DOUBLE_EQ(pts[0].x, 0.5);
  EXPECT_DOUBLE_EQ(pts[1].x, 16);
  EXPECT_DOUBLE_EQ(pts[2].x, 16);
}

// A gemm_point window that does not decode is an error naming it, never a point with made-up labels.
TEST(GemmSweeps, AMalformedPointIsAnErrorNamingIt) {
  RunRecord run;
  run.run_id = 7;
  WindowResult w;
  w.name = "gemm_point 3";
  w.labels = {{"kind", "gemm_point"}, {"experiment", "E1"}, {"engine", "bf16"}};
  run.windows.push_back(w);
  try {
    gemm_sweeps(run);
    FAIL() << "no error";
  } catch (const WattlabError& e) {
    EXPECT_NE(std::string(e.what()).find("run 7: gemm_point window 'gemm_point 3'"), std::string::npos) << e.what();
  }
  WindowResult other;
  other.name = "step";
  RunRecord no_points;
  no_points.windows.push_back(other);
  EXPECT_TRUE(gemm_sweeps(no_points).empty());
}
