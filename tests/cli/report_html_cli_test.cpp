// End-to-end: `wattlab report --html` as a user runs it, and the page opened in headless Chromium,
// which must draw every plot (nonzero size, data drawn). Chromium is required: scripts/install-deps.sh
// installs it, so a missing browser fails this test instead of skipping it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "report/sample_store.h"

namespace {
namespace fs = std::filesystem;

struct Ran {
  int rc = -1;
  std::string out;
};

Ran shell(const std::string& cmd) {
  Ran r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = ::pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}
Ran wattlab(const std::string& args) { return shell(std::string(std::getenv("WATTLAB_BIN")) + " " + args); }

std::string chromium() {
  if (const char* c = std::getenv("WATTLAB_CHROMIUM"); c && *c) return c;
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (::access(c, X_OK) == 0) return c;
  return "";
}

// On load, every plot's size, its drawn data paths (gnuplot's per-series groups) and shaded
// spans go into an attribute that --dump-dom prints.
constexpr const char* kProbe = R"(<script>
window.addEventListener('load', function () {
  var out = [];
  document.querySelectorAll('svg.plot').forEach(function (s) {
    var b = s.getBoundingClientRect(), drawn = 0;
    s.querySelectorAll('g[id*="gnuplot_plot_"] path').forEach(function (p) {
      var r = p.getBoundingClientRect();
      if (r.width > 0 || r.height > 0) drawn++;
    });
    out.push([s.getAttribute('data-plot'), Math.round(b.width), Math.round(b.height), drawn,
              s.querySelectorAll('polygon[fill-opacity]').length].join('|'));
  });
  document.body.setAttribute('data-probe', out.join(';;'));
});
</script>)";

struct Drawn {
  int width = 0, height = 0, paths = 0, spans = 0;
};

// Opens `html` (with the probe added) in headless Chromium; plot title -> what it drew.
std::map<std::string, Drawn> render_in_chromium(const fs::path& html, const fs::path& dir) {
  std::ifstream in(html);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string page = ss.str();
  const auto body_end = page.rfind("</body>");
  EXPECT_NE(body_end, std::string::npos);
  page.insert(body_end, kProbe);
  const auto probe = dir / "probe.html";
  std::ofstream(probe) << page;
  const auto r = shell("timeout 60 " + chromium() + " --headless --no-sandbox --disable-gpu --window-size=1200,1600 " +
                       "--user-data-dir=" + (dir / "chromium-profile").string() + " --dump-dom file://" + probe.string());
  std::smatch m;
  EXPECT_TRUE(std::regex_search(r.out, m, std::regex("data-probe=\"([^\"]*)\""))) << r.out.substr(0, 3000);
  std::map<std::string, Drawn> plots;
  if (m.empty()) return plots;
  const std::string all = m[1];
  std::size_t at = 0;
  while (at < all.size()) {
    auto end = all.find(";;", at);
    if (end == std::string::npos) end = all.size();
    std::stringstream f(all.substr(at, end - at));
    std::string name, w, h, p, s;
    std::getline(f, name, '|');
    std::getline(f, w, '|');
    std::getline(f, h, '|');
    std::getline(f, p, '|');
    std::getline(f, s, '|');
    plots[name] = {std::stoi(w), std::stoi(h), std::stoi(p), std::stoi(s)};
    at = end + 2;
  }
  return plots;
}

class ReportHtmlCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wattlab-report-html-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string db_;
};

TEST_F(ReportHtmlCli, ChromiumDrawsEveryPlotOfTheReport) {
  ASSERT_FALSE(chromium().empty()) << "chromium not found: scripts/install-deps.sh installs the Debian package chromium "
                                      "(or set WATTLAB_CHROMIUM)";
  {
    auto store = wattlab::Store::open(db_);
    ASSERT_TRUE(store.ok());
    wattlab::sample::write_sample_run(*store);
  }
  const auto html = dir_ / "report.html";
  const auto r = wattlab("report latest --db " + db_ + " --html " + html.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto plots = render_in_chromium(html, dir_);
  ASSERT_EQ(plots.size(), 9u);
  for (const auto& [name, d] : plots) {
    EXPECT_GT(d.width, 300) << name;
    EXPECT_GT(d.height, 100) << name;
    EXPECT_GT(d.paths, 0) << name << ": no data drawn";
  }
  for (const char* name : {"Power: gpu:0 (wattlab simulated GPU) SIMULATED", "GEMM E1: energy per GEMM vs k (SIMULATED)",
                           "GEMM E2: mean power vs distribution (SIMULATED)", "Time-energy frontier: test/llm-8b"})
    EXPECT_EQ(plots.count(name), 1u) << name;
  // Every window but the whole-run one is shaded on the power timeline.
  EXPECT_EQ(plots.at("Power: gpu:0 (wattlab simulated GPU) SIMULATED").spans, 1 + 6 + 3 + 3);
  if (const char* shot = std::getenv("WATTLAB_REPORT_SCREENSHOT")) {  // docs/images/report-html.png
    EXPECT_EQ(shell("timeout 60 " + chromium() + " --headless --no-sandbox --disable-gpu --hide-scrollbars "
                    "--window-size=1200,1600 --user-data-dir=" + (dir_ / "shot-profile").string() +
                    " --screenshot=" + shot + " file://" + html.string()).rc, 0);
  }
}

TEST_F(ReportHtmlCli, SimulatedRunGetsPowerAndTelemetryPlots) {
  ASSERT_FALSE(chromium().empty()) << "chromium not found: scripts/install-deps.sh installs the Debian package chromium";
  ASSERT_EQ(wattlab("run --device sim --sim-workload 'step 400W 10s' --db " + db_ + " -- sleep 0.5").rc, 0);
  const auto html = dir_ / "sim.html";
  const auto r = wattlab("report latest --db " + db_ + " --html " + html.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto plots = render_in_chromium(html, dir_);
  ASSERT_GE(plots.size(), 2u);  // power, and at least one telemetry group
  bool power = false;
  for (const auto& [name, d] : plots) {
    power = power || name.rfind("Power: gpu:0", 0) == 0;
    EXPECT_GT(d.width, 300) << name;
    EXPECT_GT(d.paths, 0) << name;
  }
  EXPECT_TRUE(power);
}

TEST_F(ReportHtmlCli, BadPathOrUnknownRunExitsTwo) {
  {
    auto store = wattlab::Store::open(db_);
    ASSERT_TRUE(store.ok());
    wattlab::sample::write_sample_run(*store);
  }
  auto r = wattlab("report 99 --db " + db_ + " --html " + (dir_ / "x.html").string());
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("99"), std::string::npos) << r.out;
  r = wattlab("report latest --db " + db_ + " --html /no/such/folder/x.html");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("/no/such/folder"), std::string::npos) << r.out;
  r = wattlab("report latest --db " + db_ + " --html " + dir_.string());
  EXPECT_EQ(r.rc, 2) << r.out;
  r = wattlab("report latest --db " + (dir_ / "missing.db").string() + " --html " + (dir_ / "x.html").string());
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "x.html"));
}

}  // namespace
