// The RAPL backend: one Domain per powercap zone, read from sysfs (README.md beside this file).
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "../backend.h"
#include "rapl_zones.h"
#include "wattlab/core/clock.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab::rapl {

struct RaplConfig {
  std::filesystem::path root = kDefaultPowercapRoot;
  // Where the CPU vendor and model are read from; empty: not read (vendor from the control type).
  std::filesystem::path cpuinfo = "/proc/cpuinfo";
  Clock* clock = nullptr;  // timestamps of readings; null: the monotonic clock
  FaultHook fault;         // tests only: inject errno on chosen paths
};

// The root open_rapl uses: options.powercap_root, or WATTLAB_POWERCAP_ROOT when the option is the
// default and the variable is set.
std::filesystem::path powercap_root(const BackendOptions& options);

class RaplSensor final : public Sensor {
 public:
  // Zones as discover_zones() found them; each becomes one domain, in that order.
  RaplSensor(std::vector<Zone> zones, RaplConfig config);

  std::string backend() const override { return "rapl"; }
  const std::vector<Domain>& domains() const override { return domains_; }
  // energy_counter_j: the raw counter (energy_uj / 1e6) in J. It wraps at the model's wrap_range;
  // the meter unwraps it (core's counter_step). power_limit_w: constraint_0_power_limit_uw in W.
  Status read(std::size_t domain_index, ReadingKind kind, std::vector<Reading>& out) override;
  std::vector<std::pair<std::string, std::string>> properties() const override;

  const std::vector<Zone>& zones() const { return zones_; }

 private:
  std::vector<Zone> zones_;
  std::vector<Domain> domains_;
  RaplConfig config_;
  Clock* clock_;
  std::string vendor_;
  std::string cpu_model_;
};

// Discovery plus the status text the registry shows ("loaded: ..." or "not loaded because ...").
detail::BackendLoad open_rapl_with(const RaplConfig& config);

}  // namespace wattlab::rapl
