// The points CSV read back: RFC 4180 records (quotes, commas and line breaks in fields), every
// row decoded through the GemmPointRecord codec into the same points as the store's windows, and
// bad input named by column or line. The study's committed points.csv reads and analyzes.
#include "report/gemm_points_csv.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "report/csv_records.h"
#include "report/gemm_analysis.h"
#include "store/gemm_point_record.h"

namespace wattlab::report {
namespace {

TEST(CsvRecords, QuotesCommasLineBreaksAndCrlf) {
  const auto r = parse_csv("a,b,c\r\n1,\"x, y\",\"say \"\"hi\"\"\"\n\n2,\"two\nlines\",\n3,,", "t.csv");
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[1].fields, (std::vector<std::string>{"1", "x, y", "say \"hi\""}));
  EXPECT_EQ((*r)[1].line, 2u);
  EXPECT_EQ((*r)[2].fields, (std::vector<std::string>{"2", "two\nlines", ""}));
  EXPECT_EQ((*r)[2].line, 4u);
  EXPECT_EQ((*r)[3].line, 6u);  // the quoted line break counts
  EXPECT_EQ((*r)[3].fields, (std::vector<std::string>{"3", "", ""}));
}

TEST(CsvRecords, MalformedQuotingNamesTheLine) {
  auto err = [](std::string_view text) { return parse_csv(text, "p.csv").error().what; };
  EXPECT_EQ(err("a,b\n1,x\"y\n"), "p.csv line 2: field 2 has a quote but does not start with one");
  EXPECT_EQ(err("a,b\n1,\"x\"y\n"), "p.csv line 2: field 2 has text after its closing quote");
  EXPECT_EQ(err("a,b\n1,2\n3,\"open\n\n"), "p.csv line 3: a quoted field is not closed before the end of the file");
}

// Two points as the lab stores them, and the CSV python/bench/gemm_points_csv.py writes of them.
std::vector<WindowResult> windows() {
  std::vector<WindowResult> out;
  for (int i = 0; i < 2; ++i) {
    GemmPointRecord r;
    r.sweep = "abc";
    r.experiment = i == 0 ? "ref" : "E3";
    r.engine = "bf16";
    r.m = r.n = r.k = 256;
    r.recipe_a = r.recipe_b = i == 0 ? "normal(mean=0, std=1024)" : "normal(mean=0, std=1024) | distinct(n=4)";
    r.seed = 2;
    r.param = i == 0 ? "reference" : "n";
    r.param_value = i == 0 ? "baseline" : "4";
    r.reference = i == 0;
    r.point = i;
    r.simulated = true;
    r.counts.energy_per_gemm_j = i == 0 ? 1.1568816041179661 : 0.8829489777256916;
    r.counts.mean_power_w = 512.25;
    r.counts.gemms = 1242;
    r.counts.rel_error = 4.01e-07;
    r.counts.input_stats["a_zero_fraction"] = 0.1;
    WindowResult w;
    w.id = static_cast<WindowId>(i + 1);
    w.name = "gemm_point " + std::to_string(i);
    w.t_begin_ns = 1000 + 100 * i;
    w.t_end_ns = 1090 + 100 * i;
    w.final = true;
    r.encode(w);
    out.push_back(w);
  }
  return out;
}

const char* kHeader =
    "run_id,window_id,t_begin_ns,t_end_ns,window_s,final,label.K,label.M,label.N,label.engine,label.experiment,label.kind,"
    "label.param,label.param_value,label.point,label.recipe_a,label.recipe_b,label.reference,label.seed,label.simulated,"
    "label.sweep,count.energy_per_gemm_j,count.gemms,count.input_a_zero_fraction,count.mean_power_w,count.rel_error,"
    "energy_j,uncertainty_j,systematic_j,mean_power_w,peak_power_w,estimator,available,simulated,readings_used,issues_json\n";

std::string csv() {
  return std::string(kHeader) +
         "3,1,1000,1090,9e-08,1,256,256,256,bf16,ref,gemm_point,reference,baseline,0,\"normal(mean=0, std=1024)\","
         "\"normal(mean=0, std=1024)\",1,2,1,abc,1.1568816041179661,1242.0,0.1,512.25,4.01e-07,"
         "1.5,0.01,0.02,510.0,600.0,counter+samples,1,1,12,\"[\"\"an issue, quoted\"\"]\"\n"
         "3,2,1100,1190,9e-08,1,256,256,256,bf16,E3,gemm_point,n,4,1,\"normal(mean=0, std=1024) | distinct(n=4)\","
         "\"normal(mean=0, std=1024) | distinct(n=4)\",0,2,1,abc,0.8829489777256916,1242.0,0.1,512.25,4.01e-07,"
         ",,,,,,,,,\n";
}

TEST(GemmPointsCsv, RowsDecodeToTheStoredPoints) {
  const auto runs = read_gemm_points_csv(csv(), "points.csv");
  ASSERT_TRUE(runs) << runs.error().message();
  ASSERT_EQ(runs->size(), 1u);
  const RunRecord& run = (*runs)[0];
  EXPECT_EQ(run.run_id, 3);
  EXPECT_TRUE(run.info.simulated);
  const auto stored = windows();
  ASSERT_EQ(run.windows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const WindowResult& w = run.windows[i];
    EXPECT_EQ(w.id, stored[i].id);
    EXPECT_EQ(w.name, stored[i].name);
    EXPECT_EQ(w.t_begin_ns, stored[i].t_begin_ns);
    EXPECT_EQ(w.t_end_ns, stored[i].t_end_ns);
    EXPECT_TRUE(w.final);
    EXPECT_EQ(w.labels, stored[i].labels);
    EXPECT_EQ(w.counts, stored[i].counts);  // doubles exactly, as Python's repr wrote them
    EXPECT_EQ(*GemmPointRecord::decode(w), *GemmPointRecord::decode(stored[i]));
  }
  ASSERT_EQ(run.windows[0].domains.size(), 1u);
  EXPECT_EQ(run.windows[0].domains[0].domain_id, "gpu:0");
  EXPECT_DOUBLE_EQ(run.windows[0].domains[0].energy_j, 1.5);
  EXPECT_EQ(run.windows[0].domains[0].readings_used, 12u);
  EXPECT_TRUE(run.windows[1].domains.empty());  // no energy in that row
  const auto pts = gemm_measurements(*runs);
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_EQ(pts[1].t_ns, 1145);
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(GemmPointsCsv, BadInputNamesTheColumnOrTheLine) {
  auto err = [](const std::string& text) {
    auto r = read_gemm_points_csv(text, "points.csv");
    EXPECT_FALSE(r);
    return r ? std::string() : r.error().what;
  };
  EXPECT_EQ(err(replace(csv(), "label.seed,", "label.sed,")), "points.csv: no column 'label.seed' in the header (line 1)");
  EXPECT_EQ(err(""), "points.csv: empty, not even a header line");
  EXPECT_EQ(err(replace(csv(), ",12,", ",12,extra,")), "points.csv line 2: 37 fields, the header has 36");
  EXPECT_EQ(err(replace(csv(), "0.8829489777256916,1242.0,0.1,512.25", "0.8829489777256916,1242.0,0.1,fast")),
            "points.csv line 3: column 'count.mean_power_w': 'fast' is not a number");
  EXPECT_EQ(err(replace(csv(), "3,2,1100", "3,1,1100")), "points.csv line 3: run 3 window 1 appears twice");
  EXPECT_EQ(err(replace(csv(), "3,2,1100", "x,2,1100")), "points.csv line 3: column 'run_id': 'x' is not a positive run id");
  EXPECT_EQ(err(replace(csv(), ",0,2,1,abc,0.88", ",0,two,1,abc,0.88")),
            "points.csv line 3: gemm_point window 'gemm_point 1': label 'seed' = 'two' is not a non-negative integer");
  EXPECT_EQ(err(replace(csv(), "gemm_point,n,4", "other,n,4")),
            "points.csv line 3: column 'label.kind': 'other', every row must be a gemm_point window");
  const auto missing = load_gemm_points_csv("/nonexistent/points.csv");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
}

// The study's committed points (bf16, 8192^3, seed 1) read and analyze; its E4 and E5 points whose
// output was Inf/NaN are labelled, not compared silently.
TEST(GemmPointsCsv, TheCommittedStudyPointsRead) {
  const auto runs = load_gemm_points_csv(std::string(WATTLAB_SOURCE_DIR) + "/docs/results/gemm-h200-study/points.csv");
  ASSERT_TRUE(runs) << runs.error().message();
  const auto pts = gemm_measurements(*runs);
  EXPECT_GE(pts.size(), 26u);
  std::size_t flagged = 0;
  for (const auto& p : pts) {
    if (!p.output_nonfinite) {
      EXPECT_EQ(p.nonfinite, GemmNonfinite::none);
      continue;
    }
    ++flagged;
    EXPECT_TRUE(p.nonfinite == GemmNonfinite::inputs || p.nonfinite == GemmNonfinite::overflow) << p.nonfinite_label;
    EXPECT_TRUE(p.experiment == "E4" || p.experiment == "E5") << p.experiment;
  }
  EXPECT_GE(flagged, 3u);
  const auto a = analyze_gemm(pts);
  ASSERT_FALSE(a.empty());
  EXPECT_FALSE(a[0].rows.empty());
}

}  // namespace
}  // namespace wattlab::report
