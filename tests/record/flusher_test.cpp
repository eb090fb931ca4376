// The flush thread: finish() stops it at once and flushes once more on the caller's thread; an
// exception in a flush never escapes its thread.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

#include "wattlab/record/flusher.h"

namespace wattlab {
namespace {

constexpr int64_t kHourNs = 3'600'000'000'000;

TEST(Flusher, FinishDoesNotSleepOutTheIntervalAndFlushesOnceMoreOnTheCaller) {
  std::atomic<int> calls{0};
  std::thread::id last;
  Flusher f([&] {
    ++calls;
    last = std::this_thread::get_id();
  }, kHourNs);
  f.finish();  // an hour's interval: a finish that waited it out would hit the test's timeout
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(last, std::this_thread::get_id());
  f.finish();
  EXPECT_EQ(calls.load(), 1) << "idempotent";
}

TEST(Flusher, AnExceptionInAFlushGoesToOnError) {
  std::string error;
  {
    Flusher f([] { throw std::runtime_error("disk full"); }, kHourNs, [&](std::string_view e) { error = e; });
  }  // the destructor finishes
  EXPECT_EQ(error, "disk full");
}

}  // namespace
}  // namespace wattlab
