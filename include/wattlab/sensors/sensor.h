// The sensor interface every backend implements (nvml/, rapl/, sim/), and the domain it measures.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wattlab/core/error.h"
#include "wattlab/sensors/process_usage.h"
#include "wattlab/sensors/reading.h"

namespace wattlab {

// How one reading of one domain behaves. Defaults come from vendor documentation and
// docs/sensors.md; `wattlab sensors --characterize` measures them.
struct ReadingModel {
  ReadingKind kind = ReadingKind::power_instant_w;
  int64_t update_period_ns = 0;   // how often the sensor publishes a new value (0: continuous)
  int64_t averaging_window_ns = 0;  // what a published value averages over (0: unknown)
  double resolution = 0;          // smallest step, in the reading's unit
  int64_t read_cost_ns = 0;       // CPU time one read costs the caller
  int64_t max_safe_interval_ns = 0;  // read at least this often (counter wrap, buffer depth); 0: none
  std::string note;               // provenance of these numbers
  double wrap_range = 0;          // counter value at which it wraps (in the reading's unit), 0: no wrap
  // kCount: read on its own schedule. Otherwise the meter reads it right after each read of that
  // kind, which pays for both (NVML's four GPM metrics come from one pair of GPM samples).
  ReadingKind read_with = ReadingKind::kCount;
};

struct SensorModel {
  std::vector<ReadingModel> readings;  // only the readings this domain supports
  double gain_tolerance = 0;           // systematic relative error of power/energy (0.05 = ±5%)
  double unseen_power_w = 0;           // power the sensor cannot see (e.g. the 3.3 V rail)
  std::string source;                  // where the model came from ("NVIDIA docs + H200 measurement")

  const ReadingModel* find(ReadingKind kind) const;
  bool supports(ReadingKind kind) const { return find(kind) != nullptr; }
};

struct Domain {
  std::string id;       // "gpu:0", "gpu:0/memory", "cpu:0/package", "cpu:0/dram"
  std::string vendor;   // "NVIDIA", "Intel", "wattlab-sim"
  std::string name;     // "NVIDIA H200"
  std::string uuid;     // device UUID or serial, where known
  std::string scope;    // "gpu", "memory", "module", "package", "core", "uncore", "dram", "psys"
  bool simulated = false;  // SIMULATED data: labelled in every output
  std::string parent;   // id of the domain that contains this one ("" if none): never add them up
  SensorModel model;
};

// One backend instance: it owns a set of domains and reads them. Discovery happens when the backend
// is opened (see registry.h); read() is the per-sample call and is only ever called by the meter's
// sampler thread, never on a caller's path.
class Sensor {
 public:
  virtual ~Sensor() = default;
  virtual std::string backend() const = 0;  // "nvml", "rapl", "sim"
  virtual const std::vector<Domain>& domains() const = 0;
  // Append the readings of `kind` for domain `domain_index` to `out`. Most kinds give one reading;
  // power_sample_w gives every buffered sample newer than the last call. An error says why none.
  virtual Status read(std::size_t domain_index, ReadingKind kind, std::vector<Reading>& out) = 0;
  // Static facts about the device (driver version, persistence, MIG mode...), as key/value text.
  virtual std::vector<std::pair<std::string, std::string>> properties() const { return {}; }
  // Per-process use of the GPU that domain `domain_index` measures, for backends that know it
  // (NVML). Safe to call from any thread; `status`, if given, receives why the list is empty or partial.
  virtual bool reports_processes(std::size_t /*domain_index*/) const { return false; }
  virtual std::vector<ProcessUsage> processes(std::size_t /*domain_index*/, Status* /*status*/ = nullptr) const {
    return {};
  }
};

using SensorPtr = std::unique_ptr<Sensor>;

}  // namespace wattlab
