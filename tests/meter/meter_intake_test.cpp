// The caller never waits for the sampler: open(), close() and add_window() complete while another
// thread holds the meter's lock (here, a result reader stopped inside the clock), which is where
// the sampler builds results and files its reads.
#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "sim_fixture.h"

namespace wattlab::testing {
namespace {

// Virtual time whose now_ns() stops the one thread it is told to stop until released.
class GatedClock final : public Clock {
 public:
  int64_t now_ns() const override {
    std::unique_lock lk(mu_);
    if (std::this_thread::get_id() == gated_ && closed_) {
      waiting_ = true;
      cv_.notify_all();
      cv_.wait(lk, [&] { return !closed_; });
    }
    return inner_.now_ns();
  }
  void sleep_until_ns(int64_t t_ns) override { inner_.sleep_until_ns(t_ns); }
  void spend_ns(int64_t dur_ns) override { inner_.spend_ns(dur_ns); }
  bool is_virtual() const override { return true; }

  void gate_this_thread() {
    std::lock_guard lk(mu_);
    gated_ = std::this_thread::get_id();
    closed_ = true;
  }
  void wait_until_gated() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return waiting_; });
  }
  void release() {
    std::lock_guard lk(mu_);
    closed_ = false;
    cv_.notify_all();
  }

 private:
  VirtualClock inner_{1'000'000'000};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::thread::id gated_;
  bool closed_ = false;
  mutable bool waiting_ = false;
};

TEST(MeterIntake, OpenAndCloseCompleteWhileTheMeterIsLocked) {
  GatedClock clock;
  std::vector<SensorPtr> s;
  s.push_back(std::make_unique<sim::SimGpu>(exact_board("step 300W 60s; loop"), clock));
  Meter m(std::move(s), clock);
  m.advance_to(clock.now_ns() + 3'000'000'000);
  const WindowId busy = m.open("busy");
  // A reader builds the open window's provisional result under the meter's lock and stops inside
  // the clock, holding the lock.
  std::thread reader([&] {
    clock.gate_this_thread();
    const WindowResult r = m.provisional_result(busy);
    EXPECT_FALSE(r.final);
  });
  clock.wait_until_gated();
  auto caller = std::async(std::launch::async, [&] {
    const WindowId a = m.open("a");
    m.close(a);
    const WindowId b = m.add_window("b", clock.now_ns() - 1'000'000'000, clock.now_ns() - 500'000'000);
    m.close(busy);
    return std::make_pair(a, b);
  });
  // Instant without the lock; with it, the caller would wait until the reader is released. The
  // bound only keeps a broken meter from hanging the test.
  const bool returned = caller.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  clock.release();
  reader.join();
  EXPECT_TRUE(returned) << "open/close/add_window waited for the meter's lock";
  const auto [a, b] = caller.get();
  m.advance_to(clock.now_ns() + 3'000'000'000);
  for (WindowId id : {busy, a, b}) {
    const auto r = m.result(id);
    ASSERT_TRUE(r.has_value()) << id;
    EXPECT_TRUE(r->final);
    EXPECT_NEAR(r->domains.at(0).energy_j, 300.0 * r->dur_s(), 0.01 * 300.0 * r->dur_s() + 0.01);
  }
}

}  // namespace
}  // namespace wattlab::testing
