#include "report/plot.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace wattlab::report;

namespace {
Plot sample() {
  Plot p;
  p.title = "t";
  p.subtitle = "source: test";
  p.x = {"median ITL (ms)", 10, std::nullopt, std::nullopt};
  p.y = {"energy per token (J)", 2, 0.01, std::nullopt};
  p.series.push_back({"H100 x1", Style::linespoints, {{8, 0.45, 0, "8"}, {512, 0.07, 0, "512"}}, "#1f77b4", true});
  p.series.push_back({"bars", Style::range_bars, {{1, 2, 1, "x2"}}, "", false});
  p.vline_x = 20;
  return p;
}
}  // namespace

TEST(Plot, ScriptHasAxesLogScalesAndSeries) {
  const auto s = gnuplot_script(sample(), "/d", "svg", "/o.svg");
  EXPECT_NE(s.find("set xlabel 'median ITL (ms)'"), std::string::npos);
  EXPECT_NE(s.find("set logscale x 10"), std::string::npos);
  EXPECT_NE(s.find("set logscale y 2"), std::string::npos);
  EXPECT_NE(s.find("set yrange [0.01:*]"), std::string::npos);
  EXPECT_NE(s.find("'/d/series0.dat' using 1:2 with linespoints"), std::string::npos);
  EXPECT_NE(s.find("with labels"), std::string::npos);
  EXPECT_NE(s.find("with boxxyerror"), std::string::npos);
  EXPECT_NE(s.find("set output '/o.svg'"), std::string::npos);
  EXPECT_EQ(series_data(sample().series[0]), "8 0.45 0 \"8\"\n512 0.07 0 \"512\"\n");
  Plot q;
  q.title = "it's";
  EXPECT_NE(gnuplot_script(q, "/d", "svg", "/o'x.svg").find("'/o''x.svg'"), std::string::npos);
}

TEST(Plot, RendersSvgWithGnuplotOrSaysItIsMissing) {
  const auto dir = std::filesystem::temp_directory_path() / "wattlab-plot-test";
  std::filesystem::create_directories(dir);
  const auto svg = (dir / "p.svg").string();
  std::filesystem::remove(svg);
  if (!find_gnuplot()) GTEST_SKIP() << "gnuplot not installed (scripts/install-deps.sh installs gnuplot-nox)";
  auto r = render(sample(), svg);
  ASSERT_TRUE(r.ok()) << r.error().message();
  std::ifstream in(svg);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("<svg"), std::string::npos);
  EXPECT_NE(ss.str().find("H100 x1"), std::string::npos);
  // A missing gnuplot is an error with the package to install, never a hand-drawn plot.
  ::setenv("WATTLAB_GNUPLOT", "/nonexistent/gnuplot", 1);
  auto missing = render(sample(), (dir / "q.svg").string());
  ::unsetenv("WATTLAB_GNUPLOT");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, wattlab::ErrorKind::unavailable);
  EXPECT_NE(missing.error().hint.find("gnuplot-nox"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "q.svg"));
  std::filesystem::remove_all(dir);
}
