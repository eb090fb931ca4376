#include "sensors/sim/sim_faults.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

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

TEST(Faults, ParsesTheNewerKindsAndTimeZero) {
  auto f = Faults::parse("counter-reset 0s; stuck power_sample_w 1s-2s; garbage 3s-4s; slow-read energy_counter_j 5s-6s 200ms; "
                         "unsupported power_instant_w 7s; gpu-lost 8s-9s");
  EXPECT_EQ(f.last_reset_before(0), 0);
  ASSERT_NE(Faults::find(f.stuck, ReadingKind::power_sample_w, 1'500'000'000), nullptr);
  EXPECT_EQ(Faults::find(f.stuck, ReadingKind::energy_counter_j, 1'500'000'000), nullptr);
  EXPECT_NE(Faults::find(f.garbage, ReadingKind::energy_counter_j, 3'500'000'000), nullptr);
  EXPECT_EQ(f.slow_ns(ReadingKind::energy_counter_j, 5'500'000'000), 200'000'000);
  EXPECT_EQ(f.slow_ns(ReadingKind::power_instant_w, 5'500'000'000), 0);
  EXPECT_FALSE(f.unsupported_at(ReadingKind::power_instant_w, 6'999'999'999));
  EXPECT_TRUE(f.unsupported_at(ReadingKind::power_instant_w, 100'000'000'000));
  EXPECT_TRUE(f.lost(8'500'000'000));
  EXPECT_FALSE(f.lost(9'000'000'000));  // recovered
  EXPECT_TRUE(std::isnan(garbage_value(ReadingKind::power_sample_w, 0)));
  EXPECT_LT(garbage_value(ReadingKind::energy_counter_j, 1), 0);
}

TEST(Faults, ABadTimeNamesTheFaultNotTheWorkload) {
  try {
    Faults::parse("counter-reset -1s");
    FAIL() << "accepted a negative time";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("sim faults 'counter-reset -1s'"), std::string::npos) << m;
    EXPECT_EQ(m.find("workload"), std::string::npos) << m;
  }
  EXPECT_THROW(Faults::parse("slow-read 1s-2s 0s"), UsageError);
  EXPECT_THROW(Faults::parse("unsupported 3s"), UsageError);
}

TEST(Faults, RejectsBadScripts) {
  EXPECT_THROW(Faults::parse("explode 3s"), UsageError);
  EXPECT_THROW(Faults::parse("read-error bogus_kind 1s-2s"), UsageError);
  EXPECT_THROW(Faults::parse("read-error 2s-1s"), UsageError);
  EXPECT_NO_THROW(Faults::parse(""));
}

// A bad time's error names the fault and the duration parser's reason, never the workload parser
// (fuzz/fuzz_sim_faults.cpp holds every fault error to name the fault).
TEST(Faults, BadTimesNameTheFault) {
  auto msg = [](const char* s) {
    try {
      Faults::parse(s);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg("gpu-lost 0s"), "no error");  // zero is the moment the device opens
  EXPECT_EQ(msg("idle 1s; counter-reset 1e30s"),
            "sim faults 'idle 1s': use 'read-error [KIND] FROM-TO', 'counter-reset AT', 'gpu-lost AT|FROM-TO', "
            "'stuck [KIND] FROM-TO', 'garbage [KIND] FROM-TO', 'slow-read [KIND] FROM-TO DUR' or 'unsupported KIND AT'");
  EXPECT_EQ(msg("counter-reset 1e30s"),
            "sim faults 'counter-reset 1e30s': '1e30s' is not a time (duration '1e30s' is longer than 10^7 s): "
            "a number >= 0 with a unit (s, ms, us or ns), e.g. 2s");
  EXPECT_EQ(msg("read-error 1s-2"),
            "sim faults 'read-error 1s-2': '2' is not a time (duration '2' needs a unit: s, ms, us or ns): "
            "a number >= 0 with a unit (s, ms, us or ns), e.g. 2s");
}

}  // namespace wattlab::sim
