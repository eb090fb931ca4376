// The serve-bench pieces that need no server: summing a window's energy as the study sums GPUs,
// and cycling a request set to a run's count.
#include "infer/serve_bench.h"

#include <gtest/gtest.h>

namespace wattlab::infer {
namespace {

DomainEnergy domain(const std::string& id, double energy_j, double uncertainty_j, bool available = true) {
  DomainEnergy d;
  d.domain_id = id;
  d.available = available;
  d.energy_j = energy_j;
  d.uncertainty_j = uncertainty_j;
  d.systematic_j = 0.05 * energy_j;
  if (!available) d.issues = {"read errors since t=3 s"};
  return d;
}

TEST(ServeBench, SumsTheGpusOnlyWithIndependentUncertainties) {
  WindowResult w;
  w.final = true;
  w.domains = {domain("gpu:0", 100, 3), domain("gpu:0/memory", 10, 1), domain("gpu:1", 200, 4),
               domain("cpu:0/package", 50, 1)};
  std::string ids;
  const WindowEnergy e = summed_energy(w, ids);
  EXPECT_EQ(ids, "gpu:0+gpu:1");
  EXPECT_TRUE(e.available);
  EXPECT_DOUBLE_EQ(e.energy_j, 300);
  EXPECT_DOUBLE_EQ(e.uncertainty_j, 5);  // sqrt(3^2 + 4^2)
  EXPECT_DOUBLE_EQ(e.systematic_j, 15);  // gain biases add
  EXPECT_TRUE(e.issue.empty());

  w.final = false;
  ids.clear();
  EXPECT_EQ(summed_energy(w, ids).issue, "provisional: the timeline did not cover the window's end");
}

TEST(ServeBench, WithoutGpusEveryDomainCountsAndAGapSaysWhere) {
  WindowResult w;
  w.final = true;
  w.domains = {domain("cpu:0/package", 50, 1), domain("cpu:0/dram", 5, 1, false)};
  std::string ids;
  const WindowEnergy e = summed_energy(w, ids);
  EXPECT_EQ(ids, "cpu:0/package+cpu:0/dram");
  EXPECT_FALSE(e.available);
  EXPECT_EQ(e.issue, "cpu:0/dram: read errors since t=3 s");

  ids.clear();
  EXPECT_EQ(summed_energy(WindowResult{}, ids).issue, "no domain measured");
}

TEST(ServeBench, CycledRequestSetsAreNumberedOnceTheyRepeat) {
  std::vector<BenchRequest> base(2);
  base[0].id = "a";
  base[1].id = "b";
  const auto part = cycle_requests(base, 1);
  ASSERT_EQ(part.size(), 1u);
  EXPECT_EQ(part[0].id, "a");
  const auto once = cycle_requests(base, 2);
  ASSERT_EQ(once.size(), 2u);
  EXPECT_EQ(once[1].id, "b");
  const auto more = cycle_requests(base, 5);
  ASSERT_EQ(more.size(), 5u);
  EXPECT_EQ(more[0].id, "a #1");
  EXPECT_EQ(more[3].id, "b #2");
  EXPECT_EQ(more[4].id, "a #3");
  EXPECT_TRUE(cycle_requests({}, 3).empty());
}

}  // namespace
}  // namespace wattlab::infer
