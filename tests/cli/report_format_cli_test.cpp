// End-to-end: `wattlab report --format text|json|html` on a stored SIMULATED run: each format is
// the same output as the flag it stands for, HTML goes to stdout, and the combinations that do not
// go together exit 2 with a message naming them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/shell.h"

namespace {
namespace fs = std::filesystem;
using wattlab::testing::shell;

class ReportFormatCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("wattlab_report_format_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const auto r = cli("run --device sim --db " + (dir_ / "runs.db").string() + " -- true");
    ASSERT_EQ(r.rc, 0) << r.out;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static wattlab::testing::Ran cli(const std::string& args) { return shell(wattlab::testing::wattlab_bin() + " " + args); }
  static wattlab::testing::Ran report(const std::string& args) {
    return cli("report " + args + " --db " + (dir_ / "runs.db").string());
  }

  static fs::path dir_;
};
fs::path ReportFormatCli::dir_;

TEST_F(ReportFormatCli, FormatsMatchTheirFlags) {
  const auto text = report("latest");
  ASSERT_EQ(text.rc, 0) << text.out;
  EXPECT_NE(text.out.find("SIMULATED"), std::string::npos) << text.out;
  const auto as_text = report("latest --format text");
  ASSERT_EQ(as_text.rc, 0) << as_text.out;
  EXPECT_EQ(as_text.out, text.out);

  const auto json = report("latest --json");
  ASSERT_EQ(json.rc, 0) << json.out;
  const auto as_json = report("latest --format json");
  ASSERT_EQ(as_json.rc, 0) << as_json.out;
  EXPECT_EQ(as_json.out, json.out);
  EXPECT_EQ(nlohmann::json::parse(as_json.out)["run_id"], 1);
}

TEST_F(ReportFormatCli, HtmlToStdout) {
  const auto page = report("latest --format html");
  ASSERT_EQ(page.rc, 0) << page.out.substr(0, 400);
  EXPECT_TRUE(page.out.starts_with("<!DOCTYPE html>\n")) << page.out.substr(0, 200);
  EXPECT_NE(page.out.find("<svg class=\"plot\""), std::string::npos);
  EXPECT_TRUE(page.out.ends_with("</html>\n")) << page.out.substr(page.out.size() - 200);
}

TEST_F(ReportFormatCli, UsageErrorsNameTheProblem) {
  auto r = report("latest --format xml");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("--format: 'xml' is not a format of 'report'; give text, json, md or html"), std::string::npos) << r.out;
  r = report("latest --format md");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("--format md goes with --gemm"), std::string::npos) << r.out;
  r = report("latest --json --format text");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("contradicts --json"), std::string::npos) << r.out;
  const auto file = (dir_ / "x.html").string();
  r = report("latest --format html --html " + file);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("give one of them"), std::string::npos) << r.out;
  r = report("latest --json --html " + file);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("--format json does not go with it"), std::string::npos) << r.out;
  r = report("latest --gemm --format json");
  EXPECT_EQ(r.rc, 2);
  EXPECT_FALSE(fs::exists(file));
}

}  // namespace
