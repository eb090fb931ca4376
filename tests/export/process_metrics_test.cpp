// Per-process energy counters: exact exposition text, accumulation over intervals, labels kept
// for a process that ended, and series dropped after the forget time.
#include "export/process_metrics.h"

#include <gtest/gtest.h>

namespace wattlab {
namespace {

constexpr int64_t kS = 1'000'000'000;

GpuAttribution interval(double e42, double e7) {
  GpuAttribution a;
  a.gpu_id = "gpu:1";
  a.split.idle_energy_j = 100;
  a.split.idle_uncertainty_j = 5;
  a.split.unattributed_energy_j = 10;
  a.split.unattributed_uncertainty_j = 2;
  ProcessRow r;
  r.pid = 42;
  r.comm = "vllm";
  r.ids.container_id = "abc";
  r.ids.pod_uid = "1a2b";
  r.share.energy_j = e42;
  r.share.uncertainty_j = 3;
  a.rows.push_back(r);
  ProcessRow s;
  s.pid = 7;
  s.comm = "python3";
  s.ids.slurm_job_id = "99";
  s.share.energy_j = e7;
  s.share.uncertainty_j = 1;
  a.rows.push_back(s);
  return a;
}

TEST(ProcessEnergyCounters, NothingBeforeTheFirstInterval) { EXPECT_EQ(ProcessEnergyCounters().format("h"), ""); }

TEST(ProcessEnergyCounters, AccumulatesAndLabelsEachProcess) {
  ProcessEnergyCounters c(60 * kS);
  c.add(interval(200, 50), 1 * kS);
  GpuAttribution second = interval(300, 25);
  second.rows[0].comm = "";  // gone by now: keeps the labels it had
  c.add(second, 2 * kS);
  EXPECT_EQ(c.format("n1"),
            "# HELP wattlab_gpu_process_energy_joules_total GPU energy split to a process by its SM time after the idle "
            "share (a model: on an H100 right for one process, indicative only for processes sharing the GPU; "
            "docs/per-process.md)\n"
            "# TYPE wattlab_gpu_process_energy_joules_total counter\n"
            "wattlab_gpu_process_energy_joules_total{host=\"n1\",gpu=\"1\",pid=\"7\",comm=\"python3\",container=\"\",pod=\"\","
            "slurm_job=\"99\"} 75\n"
            "wattlab_gpu_process_energy_joules_total{host=\"n1\",gpu=\"1\",pid=\"42\",comm=\"vllm\",container=\"abc\","
            "pod=\"1a2b\",slurm_job=\"\"} 500\n"
            "# HELP wattlab_gpu_process_energy_u95_joules Sum of the 95 % uncertainties of the intervals that make "
            "wattlab_gpu_process_energy_joules_total\n"
            "# TYPE wattlab_gpu_process_energy_u95_joules gauge\n"
            "wattlab_gpu_process_energy_u95_joules{host=\"n1\",gpu=\"1\",pid=\"7\",comm=\"python3\",container=\"\",pod=\"\","
            "slurm_job=\"99\"} 2\n"
            "wattlab_gpu_process_energy_u95_joules{host=\"n1\",gpu=\"1\",pid=\"42\",comm=\"vllm\",container=\"abc\","
            "pod=\"1a2b\",slurm_job=\"\"} 6\n"
            "# HELP wattlab_gpu_idle_energy_joules_total GPU energy of the idle power over the split intervals (idle power "
            "given or measured with no process)\n"
            "# TYPE wattlab_gpu_idle_energy_joules_total counter\n"
            "wattlab_gpu_idle_energy_joules_total{host=\"n1\",gpu=\"1\"} 200\n"
            "# HELP wattlab_gpu_idle_energy_u95_joules Sum of the idle share's 95 % uncertainties\n"
            "# TYPE wattlab_gpu_idle_energy_u95_joules gauge\n"
            "wattlab_gpu_idle_energy_u95_joules{host=\"n1\",gpu=\"1\"} 10\n"
            "# HELP wattlab_gpu_unattributed_energy_joules_total Active GPU energy of busy time that no listed process "
            "accounts for\n"
            "# TYPE wattlab_gpu_unattributed_energy_joules_total counter\n"
            "wattlab_gpu_unattributed_energy_joules_total{host=\"n1\",gpu=\"1\"} 20\n"
            "# HELP wattlab_gpu_unattributed_energy_u95_joules Sum of the unattributed share's 95 % uncertainties\n"
            "# TYPE wattlab_gpu_unattributed_energy_u95_joules gauge\n"
            "wattlab_gpu_unattributed_energy_u95_joules{host=\"n1\",gpu=\"1\"} 4\n"
            "# HELP wattlab_gpu_process_split_intervals_total Intervals split per process\n"
            "# TYPE wattlab_gpu_process_split_intervals_total counter\n"
            "wattlab_gpu_process_split_intervals_total{host=\"n1\",gpu=\"1\"} 2\n"
            "# HELP wattlab_gpu_process_series_dropped_total Process series dropped after 60 s without energy\n"
            "# TYPE wattlab_gpu_process_series_dropped_total counter\n"
            "wattlab_gpu_process_series_dropped_total{host=\"n1\"} 0\n");
}

// Given the time now, each GPU's split age is how long before it the newest split interval ends.
TEST(ProcessEnergyCounters, SaysHowFarBehindNowTheSplitEnds) {
  ProcessEnergyCounters c(60 * kS);
  c.add(interval(200, 50), 1 * kS);
  c.add(interval(300, 25), 2 * kS);
  const std::string text = c.format("n1", 2 * kS + 1'500'000'000);
  EXPECT_NE(text.find("# TYPE wattlab_gpu_process_split_age_seconds gauge\n"
                      "wattlab_gpu_process_split_age_seconds{host=\"n1\",gpu=\"1\"} 1.5\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(c.format("n1").find("split_age"), std::string::npos);  // without the time, no age
}

TEST(ProcessEnergyCounters, ForgetsProcessesGoneForLongerThanTheForgetTime) {
  ProcessEnergyCounters c(60 * kS);
  c.add(interval(1, 1), 1 * kS);
  GpuAttribution later = interval(1, 1);
  later.rows.pop_back();  // pid 7 ended
  c.add(later, 50 * kS);
  c.forget(55 * kS);
  EXPECT_EQ(c.series(), 2u);
  c.forget(62 * kS);
  EXPECT_EQ(c.series(), 1u);
  const std::string text = c.format("n1");
  EXPECT_EQ(text.find("pid=\"7\""), std::string::npos) << text;
  EXPECT_NE(text.find("wattlab_gpu_process_series_dropped_total{host=\"n1\"} 1\n"), std::string::npos) << text;
}

TEST(ProcessEnergyCounters, LabelValuesAreEscaped) {
  ProcessEnergyCounters c;
  GpuAttribution a = interval(1, 1);
  a.rows[0].comm = "a\"b\\c";
  c.add(a, kS);
  EXPECT_NE(c.format("h").find("comm=\"a\\\"b\\\\c\""), std::string::npos);
}

}  // namespace
}  // namespace wattlab
