// The NVML total energy counter read directly, as Zeus-like tools do at each window edge: the
// reference wattlab's windows are checked against (docs/results/nvml-h200.md).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "nvml/nvml_loader.h"

namespace wattlab::device {

struct CounterRead {
  uint64_t energy_mj = 0;  // nvmlDeviceGetTotalEnergyConsumption, mJ since the driver loaded
  int64_t t_begin_ns = 0;  // CLOCK_MONOTONIC just before the call
  int64_t t_end_ns = 0;    // and just after it
};

// An edge aligned on a counter update: the counter was read until its value changed, so the
// update happened between `before.t_begin_ns` and `after.t_end_ns` (the bracket).
struct UpdateEdge {
  CounterRead before;  // the last read still showing the old value
  CounterRead after;   // the first read showing the new one
  int reads = 0;       // reads it took
  int64_t bracket_ns() const { return after.t_end_ns - before.t_begin_ns; }
};

class DirectCounter {
 public:
  // The NVML device whose UUID is `uuid` ("GPU-..."), else index 0. Throws WattlabError.
  explicit DirectCounter(const std::string& uuid);
  CounterRead read() const;  // throws WattlabError when the read fails
  // Reads back to back until the value changes (the counter publishes every ~100 ms on an H200),
  // for at most `max_wait_ms`. Throws WattlabError when the counter does not change in that time.
  UpdateEdge read_at_update(int max_wait_ms = 2000) const;
  const std::string& uuid() const { return uuid_; }
  const std::string& library_path() const { return lib_->path(); }
  // The loaded NVML and the device, for other read-only queries of the same GPU.
  const nvml::Library& library() const { return *lib_; }
  nvml::nvmlDevice_t handle() const { return dev_; }

 private:
  std::shared_ptr<nvml::Library> lib_;
  nvml::nvmlDevice_t dev_ = nullptr;
  std::string uuid_;
};

}  // namespace wattlab::device
