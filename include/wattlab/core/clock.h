// Time sources. Everything in wattlab reads time through a Clock so tests can run on virtual time.
#pragma once
#include <atomic>
#include <cstdint>

namespace wattlab {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic nanoseconds. Same epoch as CLOCK_MONOTONIC for MonotonicClock.
  virtual int64_t now_ns() const = 0;
  // Block (real clock) or jump (virtual clock) until t_ns.
  virtual void sleep_until_ns(int64_t t_ns) = 0;
  // Spend `dur_ns` of the calling thread's time: a busy loop on the real clock (the way a sensor
  // read burns CPU), an advance on the virtual one.
  virtual void spend_ns(int64_t dur_ns) = 0;
  virtual bool is_virtual() const = 0;
};

// CLOCK_MONOTONIC: the clock marks, the sampler and child processes agree on.
class MonotonicClock final : public Clock {
 public:
  int64_t now_ns() const override;
  void sleep_until_ns(int64_t t_ns) override;
  void spend_ns(int64_t dur_ns) override;
  bool is_virtual() const override { return false; }
  static MonotonicClock& instance();
};

// Virtual time for deterministic tests: it moves only when told to.
class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(int64_t start_ns = 0) : t_ns_(start_ns) {}
  int64_t now_ns() const override { return t_ns_.load(std::memory_order_acquire); }
  void sleep_until_ns(int64_t t_ns) override;  // jumps forward, never back
  void spend_ns(int64_t dur_ns) override { advance_ns(dur_ns); }
  bool is_virtual() const override { return true; }
  void advance_ns(int64_t dur_ns);
  void set_ns(int64_t t_ns);  // must not go back

 private:
  std::atomic<int64_t> t_ns_;
};

}  // namespace wattlab
