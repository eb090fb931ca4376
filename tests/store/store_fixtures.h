// Shared by the store tests: a unique temporary folder, and a small run with every field set.
#pragma once
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>

#include "wattlab/store/run_record.h"

namespace wattlab::test {

// A fresh folder under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("wattlab-store-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path file(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline RunInfo sample_run_info() {
  RunInfo info;
  info.command = {"python", "train.py", "--lr", "3e-4", "a b \"quoted\""};
  info.host = "node-7";
  info.start_utc = "2025-06-01T12:00:00.123Z";
  info.start_t_ns = 1'000'000'000;
  info.simulated = true;
  info.device_selection = "sim";
  info.devices = {{"sim", {{"driver_version", "sim-1.0"}, {"gpus", "2"}, {"a_key_after", "z"}}}};
  return info;
}

inline Domain sample_domain(const std::string& id, const std::string& parent = "") {
  Domain d;
  d.id = id;
  d.vendor = "wattlab-sim";
  d.name = "Simulated H200";
  d.uuid = "GPU-sim-" + id;
  d.scope = parent.empty() ? "gpu" : "memory";
  d.simulated = true;
  d.parent = parent;
  d.model.gain_tolerance = 0.05;
  d.model.unseen_power_w = 1.5;
  d.model.source = "sim defaults";
  d.model.readings = {
      {ReadingKind::energy_counter_j, 100'000'000, 0, 0.001, 4'200'000, 0, "counter"},
      {ReadingKind::power_instant_w, 100'000'000, 25'000'000, 0.001, 2'000, 0, "25 ms of 100"},
      {ReadingKind::sm_clock_mhz, 0, 0, 1, 1'000, 0, ""},
  };
  return d;
}

inline DomainEnergy sample_energy(const std::string& domain_id) {
  DomainEnergy e;
  e.domain_id = domain_id;
  e.simulated = true;
  e.available = true;
  e.energy_j = 123.456;
  e.uncertainty_j = 1.25;
  e.systematic_j = 6.17;
  e.mean_power_w = 411.5;
  e.peak_power_w = 699.0;
  e.estimator = Estimator::counter_instant;
  e.cross_check_j = 122.9;
  e.cross_check_estimator = Estimator::integrated_instant;
  e.readings_used = 42;
  e.issues = {"power cap reached", "window shorter than 1 s average"};
  e.telemetry.mean_sm_clock_mhz = 1980;
  e.telemetry.temperature_begin_c = 41;
  e.telemetry.power_capped_fraction = 0.25;
  e.telemetry.max_memory_used_bytes = 8.0e10;
  e.telemetry.clock_event_reasons_seen = 0x8000'0000'0000'0004ull;  // high bit: no double on the way
  return e;
}

inline WindowResult sample_window(WindowId id, const std::string& name, bool final) {
  WindowResult w;
  w.id = id;
  w.name = name;
  w.t_begin_ns = 2'000'000'000;
  w.t_end_ns = 3'500'000'000;
  w.final = final;
  w.domains = {sample_energy("gpu:0"), sample_energy("gpu:0/memory")};
  w.domains[1].available = false;
  w.domains[1].cross_check_j.reset();
  w.domains[1].telemetry = {};
  w.domains[1].issues = {"no memory power reading on this GPU"};
  return w;
}

}  // namespace wattlab::test
