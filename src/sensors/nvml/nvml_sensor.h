// The NVIDIA backend: one Domain per selected GPU (`gpu:<nvml index>`), plus `gpu:<i>/memory`
// where the memory-scope power field works. Discovery and a capability probe happen in open();
// read() is the sampler's per-sample call and never calls what the probe found unsupported.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nvml/nvml_loader.h"
#include "nvml/nvml_select.h"
#include "wattlab/core/clock.h"
#include "wattlab/sensors/registry.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab::nvml {

using wattlab::ProcessUsage;  // nvmlDeviceGetComputeRunningProcesses merged with nvmlDeviceGetProcessUtilization

class NvmlSensor final : public Sensor {
 public:
  // Loads NVML (options.nvml_library, else WATTLAB_NVML_LIBRARY, else libnvidia-ml.so.1 then .so),
  // selects GPUs (options.gpus, else CUDA_VISIBLE_DEVICES, else all; see nvml_select.h) and probes
  // every reading once. Errors: not_found (no library, no GPU, no GPU selected), unavailable
  // (driver, stub), no_permission, invalid_argument (a --gpus entry that names no GPU).
  static Result<std::unique_ptr<NvmlSensor>> open(const BackendOptions& options);
  ~NvmlSensor() override;

  std::string backend() const override { return "nvml"; }
  const std::vector<Domain>& domains() const override { return domains_; }
  Status read(std::size_t domain_index, ReadingKind kind, std::vector<Reading>& out) override;
  std::vector<std::pair<std::string, std::string>> properties() const override;

  // Per-process GPU use of the GPU of `domain_index` (a memory domain means its GPU). Safe to call
  // from another thread than the sampler's: it touches no state read() keeps. `status`, if given,
  // receives why the list is empty or partial.
  std::vector<ProcessUsage> processes(std::size_t domain_index, Status* status = nullptr) const override;
  // True for GPU domains (not gpu:<i>/memory, whose GPU its gpu:<i> domain already lists).
  bool reports_processes(std::size_t domain_index) const override;

  // "8 GPUs (gpu:0-7), driver 580.159.04, NVML 12.580.159.04, /usr/lib/.../libnvidia-ml.so.1; ..."
  std::string status_detail() const;
  const Selection& selection() const { return selection_; }
  const Library& library() const { return *lib_; }
  // Why each reading the probe rejected is absent, per domain id: ("gpu:0", kind, error).
  struct Unsupported {
    std::string domain_id;
    ReadingKind kind;
    Error error;
  };
  const std::vector<Unsupported>& unsupported() const { return unsupported_; }

  struct Gpu;  // per-GPU state, private to nvml_sensor.cpp

 private:
  NvmlSensor() = default;
  Status read_gpu(Gpu& g, bool memory_scope, ReadingKind kind, std::vector<Reading>& out);
  Status read_power_field(Gpu& g, unsigned field, unsigned scope, ReadingKind kind, std::vector<Reading>& out);
  Status read_samples(Gpu& g, std::vector<Reading>& out);
  Status read_gpm(Gpu& g, ReadingKind kind, std::vector<Reading>& out);
  void probe(Gpu& g);
  int64_t epoch_offset_ns() const;  // CLOCK_REALTIME minus our clock, now

  std::shared_ptr<Library> lib_;
  Clock* clock_ = nullptr;
  std::vector<Domain> domains_;
  struct DomainRef {
    std::size_t gpu = 0;
    bool memory = false;
  };
  std::vector<DomainRef> refs_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::vector<GpuIdentity> all_gpus_;
  unsigned device_count_ = 0;
  Selection selection_;
  std::vector<Unsupported> unsupported_;
  std::vector<std::string> open_notes_;  // GPUs skipped at open and why
};

}  // namespace wattlab::nvml
