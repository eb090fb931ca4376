// StopSignal: the flag for loops, and the watcher action for commands that block in the library.
#include <gtest/gtest.h>
#include <signal.h>

#include <future>

#include "cli/stop_signal.h"

namespace wattlab::cli {
namespace {

TEST(StopSignal, ASignalSetsTheFlagAndRunsTheActionOnTheWatcherThread) {
  std::promise<int> got;
  std::thread::id watcher;
  {
    StopSignal stop([&](int sig) {
      watcher = std::this_thread::get_id();
      got.set_value(sig);
    });
    EXPECT_FALSE(stop.requested());
    ::raise(SIGTERM);
    EXPECT_EQ(got.get_future().get(), SIGTERM);
    EXPECT_TRUE(stop.requested());
  }
  EXPECT_NE(watcher, std::this_thread::get_id());
}

TEST(StopSignal, WithoutASignalTheWatcherEndsQuietlyAndTheOldHandlersReturn) {
  struct sigaction mine {}, seen{};
  mine.sa_handler = SIG_IGN;
  sigemptyset(&mine.sa_mask);
  struct sigaction before {};
  sigaction(SIGINT, &mine, &before);
  bool ran = false;
  { StopSignal stop([&](int) { ran = true; }); }
  sigaction(SIGINT, nullptr, &seen);
  EXPECT_EQ(seen.sa_handler, SIG_IGN);
  EXPECT_FALSE(ran);
  sigaction(SIGINT, &before, nullptr);
}

}  // namespace
}  // namespace wattlab::cli
