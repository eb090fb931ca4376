// The C++ marks client never hurts the measured program: a reader that is gone makes a mark return
// false without SIGPIPE (whose default action kills the process), and a pipe that stays full makes
// it return false instead of blocking; the marks that did not get through are counted.
#include "wattlab/marks.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

namespace {

bool sigpipe_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  return sigismember(&pending, SIGPIPE) == 1;
}

TEST(MarksClientSafety, AReaderThatIsGoneIsNotFatal) {
  ASSERT_NE(::signal(SIGPIPE, SIG_DFL), SIG_ERR);  // death by SIGPIPE, as in a program that restores it
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  wattlab::marks::Client c(fds[1]);
  EXPECT_FALSE(c.open("w", {{"batch", "8"}}));
  EXPECT_FALSE(c.close("w", {{"tokens", 1}}));
  EXPECT_FALSE(sigpipe_pending());
  ::close(fds[1]);
}

TEST(MarksClientSafety, AFullPipeDropsTheMarkInsteadOfBlocking) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int flags = ::fcntl(fds[1], F_GETFL);
  ASSERT_EQ(::fcntl(fds[1], F_SETFL, flags | O_NONBLOCK), 0);
  const std::string block(4096, 'x');
  while (::write(fds[1], block.data(), block.size()) > 0) {
  }
  ASSERT_EQ(::fcntl(fds[1], F_SETFL, flags), 0);  // the client sees a blocking pipe, as under wattlab
  wattlab::marks::Client c(fds[1]);
  EXPECT_FALSE(c.open("w"));
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(MarksClientSafety, AReaderThatStopsReadingMakesMarksDroppedAndCounted) {
  ASSERT_NE(::signal(SIGPIPE, SIG_DFL), SIG_ERR);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  wattlab::marks::Client c(fds[1]);
  // The reader never reads: the pipe fills, then every further mark is dropped, counted, and
  // returns without waiting (a thousand marks that each waited 100 ms would take 100 s; the test's
  // timeout is far shorter).
  uint64_t sent = 0;
  for (int i = 0; i < 5000; ++i) sent += c.open("a window name long enough to fill the pipe soon", {{"i", std::to_string(i)}}) ? 1 : 0;
  EXPECT_GT(sent, 0u);
  EXPECT_LT(sent, 5000u);
  EXPECT_EQ(c.dropped(), 5000u - sent);
  // Then the reader goes away entirely: still no SIGPIPE, still counted.
  ::close(fds[0]);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(c.count("w", {{"tokens", 1}}));
  EXPECT_EQ(c.dropped(), 5100u - sent);
  EXPECT_FALSE(sigpipe_pending());
  ::close(fds[1]);
}

TEST(MarksClientSafety, ADrainedPipeTakesMarksAgain) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  wattlab::marks::Client c(fds[1]);
  while (c.open("fill")) {
  }
  const uint64_t dropped = c.dropped();
  EXPECT_GE(dropped, 1u);
  char buf[65536];
  const int flags = ::fcntl(fds[0], F_GETFL);
  ASSERT_EQ(::fcntl(fds[0], F_SETFL, flags | O_NONBLOCK), 0);
  while (::read(fds[0], buf, sizeof buf) > 0) {
  }
  EXPECT_TRUE(c.open("after"));
  EXPECT_EQ(c.dropped(), dropped);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(MarksClientSafety, APendingSigpipeOfTheProgramIsLeftAlone) {
  sigset_t pipe_only, old_mask;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask), 0);
  ASSERT_EQ(::raise(SIGPIPE), 0);  // the program's own, pending before the mark
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  wattlab::marks::Client c(fds[1]);
  EXPECT_FALSE(c.open("w"));
  EXPECT_TRUE(sigpipe_pending());
  const timespec zero{0, 0};
  EXPECT_EQ(sigtimedwait(&pipe_only, nullptr, &zero), SIGPIPE);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &old_mask, nullptr), 0);
  ::close(fds[1]);
}

}  // namespace
