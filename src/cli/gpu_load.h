// The built-in GPU load for cmd_sensors.cpp, which includes "gpu_load.h" and wraps
// gpu_load::FmaLoad into a DeviceLoad. The load lives in the lab (wattlab/lab/gpu_load.h:
// lab::FmaLoad, already a DeviceLoad); this adapter keeps the former interface (bool results, the
// error as text) until cmd_sensors.cpp uses lab::FmaLoad directly, then it goes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "wattlab/lab/gpu_load.h"

namespace wattlab::gpu_load {

class FmaLoad {
 public:
  // Null with `error` set when there is no such CUDA device, or no CUDA in this build.
  static std::unique_ptr<FmaLoad> open(const std::string& uuid, const std::string& pci_bus_id, std::string& error) {
    auto load = lab::FmaLoad::open(uuid, pci_bus_id);
    if (!load) {
      error = load.error().what;
      return nullptr;
    }
    return std::unique_ptr<FmaLoad>(new FmaLoad(std::move(*load)));
  }
  std::string describe() const { return load_->describe(); }
  bool prepare(std::string& error) { return ok(load_->prepare(), error); }
  bool start(int64_t dur_ns, std::string& error) { return ok(load_->start(dur_ns), error); }
  bool finish(std::string& report, std::string& error) { return ok(load_->finish(report), error); }

 private:
  explicit FmaLoad(std::unique_ptr<lab::FmaLoad> load) : load_(std::move(load)) {}
  static bool ok(const Status& st, std::string& error) {
    if (!st) error = st.error().what;
    return st.ok();
  }
  std::unique_ptr<lab::FmaLoad> load_;
};

}  // namespace wattlab::gpu_load
