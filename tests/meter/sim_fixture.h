// A meter over one simulated GPU on virtual time, with the ground truth at hand.
#pragma once
#include <memory>

#include "sensors/sim/sim_gpu.h"
#include "wattlab/meter/meter.h"

namespace wattlab::testing {

struct SimMeter {
  VirtualClock clock{1'000'000'000};
  sim::SimGpu* gpu = nullptr;
  std::unique_ptr<Meter> meter;

  explicit SimMeter(sim::SimConfig cfg, MeterOptions opt = {}) {
    auto g = std::make_unique<sim::SimGpu>(std::move(cfg), clock);
    gpu = g.get();
    std::vector<SensorPtr> s;
    s.push_back(std::move(g));
    meter = std::make_unique<Meter>(std::move(s), clock, opt);
  }
  int64_t t0() const { return gpu->origin_ns(); }
  // A window over [t0 + a_s, t0 + b_s], measured the way a caller would.
  WindowResult window(double a_s, double b_s) {
    meter->advance_to(t0() + s_to_ns(a_s));
    const WindowId id = meter->open("w");
    meter->advance_to(t0() + s_to_ns(b_s));
    meter->close(id);
    meter->advance_to(clock.now_ns() + 2'500'000'000);
    return meter->wait_result(id);
  }
  double truth(const WindowResult& r) const { return gpu->true_energy_j(r.t_begin_ns, r.t_end_ns); }

  static int64_t s_to_ns(double s) { return static_cast<int64_t>(s * 1e9); }
};

inline sim::SimConfig exact_board(std::string workload, uint64_t seed = 1) {
  sim::SimConfig c;
  c.workload = std::move(workload);
  c.gain_error = 0;
  c.seed = seed;
  return c;
}

}  // namespace wattlab::testing
