// How soon a closed window's result is final (virtual time): a caller that waits for each result
// (the GEMM lab does, point after point) waits this long per window.
#include <gtest/gtest.h>

#include "sim_fixture.h"

namespace wattlab {
namespace {

// A domain like NVML's gpu:0/memory: only a 1 s power average, nothing the meter can integrate.
class AverageOnlySensor : public Sensor {
 public:
  explicit AverageOnlySensor(Clock& clock) : clock_(clock) {
    Domain d;
    d.id = "gpu:0/memory";
    d.scope = "memory";
    d.parent = "gpu:0";
    d.simulated = true;
    ReadingModel m;
    m.kind = ReadingKind::power_average_w;
    m.update_period_ns = 100'000'000;
    m.averaging_window_ns = 1'000'000'000;
    d.model.readings.push_back(m);
    domains_.push_back(d);
  }
  std::string backend() const override { return "sim"; }
  const std::vector<Domain>& domains() const override { return domains_; }
  Status read(std::size_t, ReadingKind kind, std::vector<Reading>& out) override {
    if (kind != ReadingKind::power_average_w) return Error{ErrorKind::not_supported, "average only", ""};
    Reading r;
    r.t_ns = clock_.now_ns();
    r.kind = kind;
    r.value = 50.0;
    out.push_back(r);
    return {};
  }

 private:
  Clock& clock_;
  std::vector<Domain> domains_;
};

// Seconds from close until each of `n` 0.6 s windows (0.7 s apart) is final.
std::vector<double> finalization_s(bool with_average_only_domain, int n) {
  VirtualClock clock{1'000'000'000};
  std::vector<SensorPtr> s;
  s.push_back(std::make_unique<sim::SimGpu>(testing::exact_board("step 400W 60s; loop"), clock));
  if (with_average_only_domain) s.push_back(std::make_unique<AverageOnlySensor>(clock));
  Meter m(std::move(s), clock, MeterOptions{});
  m.advance_to(clock.now_ns() + 12'000'000'000);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    const WindowId id = m.open("w");
    m.advance_to(clock.now_ns() + 600'000'000);
    m.close(id);
    const int64_t closed_ns = clock.now_ns();
    while (!m.result(id)) m.advance_to(clock.now_ns() + 10'000'000);
    out.push_back(static_cast<double>(clock.now_ns() - closed_ns) * 1e-9);
    EXPECT_TRUE(m.result(id)->domains.at(0).available);
    m.advance_to(clock.now_ns() + 700'000'000);
  }
  return out;
}

}  // namespace

TEST(MeterLatency, ResultsAreFinalWithinTwoCounterIntervals) {
  // Counter read every 1 s and the sample buffer every 1 s: final at most ~2 s after close.
  for (double s : finalization_s(false, 8)) EXPECT_LE(s, 2.1);
}

TEST(MeterLatency, DomainWithoutEnergyReadingsDoesNotHoldResultsBack) {
  // Before the fix every window here waited for the end timeout (4 counter intervals).
  for (double s : finalization_s(true, 8)) EXPECT_LE(s, 2.1);
}

}  // namespace wattlab
