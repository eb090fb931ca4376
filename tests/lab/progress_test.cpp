#include "lab/progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace wattlab::lab {
namespace {

TEST(Progress, PlainLinesWithoutATerminal) {
  std::ostringstream out;
  Progress p(out, false, 4, 1, 10.0, true);
  p.start("E3 bf16 n=16", 0);
  p.finish(20'000'000'000);
  p.done();
  const std::string s = out.str();
  EXPECT_NE(s.find("resuming: 1 of 4 points already in the store, 3 left"), std::string::npos);
  EXPECT_NE(s.find("2/4 done, 2 left, ETA 40s (SIMULATED time) | finished E3 bf16 n=16"), std::string::npos) << s;
  EXPECT_EQ(s.find('\r'), std::string::npos);
}

TEST(Progress, RedrawsOnATerminal) {
  std::ostringstream out;
  Progress p(out, true, 2, 0, 5.0, false);
  p.start("E1 fp16", 0);
  p.finish(1'000'000'000);
  p.done();
  const std::string s = out.str();
  EXPECT_NE(s.find("\r\x1b[K[#"), std::string::npos);
  EXPECT_NE(s.find("0/2 done, 2 left, ETA 10s | running E1 fp16"), std::string::npos) << s;
  EXPECT_EQ(s.back(), '\n');
  EXPECT_EQ(format_duration(3725), "1h02m");
  EXPECT_EQ(format_duration(185), "3m05s");
}

}  // namespace
}  // namespace wattlab::lab
