#include "wattlab/core/clock.h"

#include <stdexcept>
#include <string>
#include <time.h>

namespace wattlab {

int64_t MonotonicClock::now_ns() const {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void MonotonicClock::sleep_until_ns(int64_t t_ns) {
  timespec ts{};
  ts.tv_sec = t_ns / 1'000'000'000;
  ts.tv_nsec = t_ns % 1'000'000'000;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

void MonotonicClock::spend_ns(int64_t dur_ns) {
  const int64_t end = now_ns() + dur_ns;
  while (now_ns() < end) {
  }
}

MonotonicClock& MonotonicClock::instance() {
  static MonotonicClock clock;
  return clock;
}

void VirtualClock::sleep_until_ns(int64_t t_ns) {
  int64_t cur = t_ns_.load(std::memory_order_acquire);
  while (cur < t_ns && !t_ns_.compare_exchange_weak(cur, t_ns, std::memory_order_acq_rel)) {
  }
}

void VirtualClock::advance_ns(int64_t dur_ns) {
  if (dur_ns < 0) throw std::invalid_argument("VirtualClock cannot go back: " + std::to_string(dur_ns));
  t_ns_.fetch_add(dur_ns, std::memory_order_acq_rel);
}

void VirtualClock::set_ns(int64_t t_ns) {
  if (t_ns < now_ns()) throw std::invalid_argument("VirtualClock::set_ns would go back in time");
  t_ns_.store(t_ns, std::memory_order_release);
}

}  // namespace wattlab
