// A meter over simulated GPUs on virtual time, and its live view, for the export tests.
#pragma once
#include <memory>

#include "sensors/sim/sim_gpu.h"
#include "export/live.h"
#include "wattlab/meter/meter.h"

namespace wattlab::testing {

struct LiveSim {
  VirtualClock clock{1'000'000'000};
  sim::SimGpu* gpu = nullptr;
  std::unique_ptr<Meter> meter;
  std::unique_ptr<LiveMeter> live;

  explicit LiveSim(sim::SimConfig cfg) {
    auto g = std::make_unique<sim::SimGpu>(std::move(cfg), clock);
    gpu = g.get();
    std::vector<SensorPtr> s;
    s.push_back(std::move(g));
    meter = std::make_unique<Meter>(std::move(s), clock);
    live = std::make_unique<LiveMeter>(*meter);
  }
  // Run the sampler to t0 + t_s and take a live sample.
  MeterSnapshot at(double t_s) {
    meter->advance_to(gpu->origin_ns() + static_cast<int64_t>(t_s * 1e9));
    return live->sample();
  }
};

}  // namespace wattlab::testing
