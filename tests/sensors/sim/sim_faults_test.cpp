#include "sensors/sim/sim_faults.h"

#include <gtest/gtest.h>

#include "wattlab/core/error.h"

namespace wattlab::sim {

TEST(Faults, ParsesEveryKind) {
  auto f = Faults::parse("read-error energy_counter_j 2s-2500ms; read-error 5s-6s; counter-reset 3s; gpu-lost 10s");
  EXPECT_TRUE(f.read_fails(ReadingKind::energy_counter_j, 2'100'000'000));
  EXPECT_FALSE(f.read_fails(ReadingKind::power_instant_w, 2'100'000'000));
  EXPECT_TRUE(f.read_fails(ReadingKind::power_instant_w, 5'100'000'000));
  EXPECT_FALSE(f.read_fails(ReadingKind::energy_counter_j, 2'500'000'000));
  EXPECT_EQ(f.last_reset_before(2'000'000'000), -1);
  EXPECT_EQ(f.last_reset_before(4'000'000'000), 3'000'000'000);
  EXPECT_FALSE(f.lost(9'999'999'999));
  EXPECT_TRUE(f.lost(10'000'000'000));
}

TEST(Faults, RejectsBadScripts) {
  EXPECT_THROW(Faults::parse("explode 3s"), UsageError);
  EXPECT_THROW(Faults::parse("read-error bogus_kind 1s-2s"), UsageError);
  EXPECT_THROW(Faults::parse("read-error 2s-1s"), UsageError);
  EXPECT_NO_THROW(Faults::parse(""));
}

}  // namespace wattlab::sim
