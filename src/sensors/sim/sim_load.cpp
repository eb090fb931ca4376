// The simulated GPU's scripted load (device_load.h): what stands in for the CUDA kernel.
#include <cstdio>

#include "sim_gpu.h"
#include "sensors/device_load.h"

namespace wattlab {
namespace {

class SimLoad final : public DeviceLoad {
 public:
  SimLoad(sim::SimGpu& gpu, std::size_t domain_index, std::string script)
      : gpu_(gpu), domain_index_(domain_index), script_(std::move(script)) {
    sim::Workload::parse(script_);  // a bad script is bad usage: say so before anything runs
  }
  std::string describe() const override {
    return "SIMULATED scripted load '" + script_ + "' on " + gpu_.domains().at(domain_index_).id;
  }
  bool simulated() const override { return true; }
  Status start(int64_t dur_ns) override {
    dur_ns_ = dur_ns;
    gpu_.start_load(domain_index_, script_, dur_ns);
    return {};
  }
  Status finish(std::string& report) override {
    char buf[96];
    std::snprintf(buf, sizeof buf, "SIMULATED load ran %.3f s on the sim's clock", static_cast<double>(dur_ns_) * 1e-9);
    report = buf;
    return {};
  }

 private:
  sim::SimGpu& gpu_;
  std::size_t domain_index_;
  std::string script_;
  int64_t dur_ns_ = 0;
};

}  // namespace

std::unique_ptr<DeviceLoad> make_sim_load(Sensor& sensor, std::size_t domain_index, std::string script) {
  auto* gpu = dynamic_cast<sim::SimGpu*>(&sensor);
  if (gpu == nullptr || domain_index >= gpu->domains().size()) return nullptr;
  return std::make_unique<SimLoad>(*gpu, domain_index, std::move(script));
}

}  // namespace wattlab
