#include "diagnose/population.h"

#include "test_data.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

TEST(Population, CurveOfLlama8bOnOneH100) {
  const Rows rows = rows_of(chat());
  Filter f;
  f.model = "meta-llama/Llama-3.1-8B-Instruct";
  f.gpu_model = "H100";
  f.num_gpus = 1;
  const Rows sel = filter(rows, f);
  ASSERT_EQ(sel.size(), 11u);
  const Rows c = curve_of(*sel.front(), rows);
  ASSERT_EQ(c.size(), 11u);
  EXPECT_EQ(c.front()->batch(), 8);
  EXPECT_EQ(c.back()->batch(), 768);
  EXPECT_EQ(min_energy(c)->batch(), 512);
  EXPECT_EQ(min_latency(c)->batch(), 8);
  f.min_batch = 16;
  f.deadline_ms = 20;
  EXPECT_EQ(filter(rows, f).size(), 5u);  // 16..128
}

TEST(Population, Median) {
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 2, 3}), 2.5);
  EXPECT_THROW(median_of({}), std::invalid_argument);
}
