// A fake /sys/class/powercap in a temporary folder, with scripted counter values.
// Tests run as root, where a mode-000 file stays readable: permission errors are injected through
// RaplConfig::fault / discover_zones' hook (fault_eacces below), and an energy_uj that is a folder
// stands in for an unreadable file that fails for real (EISDIR).
#pragma once
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "sensors/rapl/rapl_zones.h"

namespace wattlab::rapl::testing {

class FakePowercap {
 public:
  FakePowercap() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "wattlab-powercap-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    root_ = tmpl;
  }
  ~FakePowercap() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakePowercap(const FakePowercap&) = delete;
  FakePowercap& operator=(const FakePowercap&) = delete;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path dir(const std::string& zone) const { return root_ / zone; }

  // A zone folder the way /sys/class/powercap lists them (flat: intel-rapl:0, intel-rapl:0:1).
  void add_zone(const std::string& zone, const std::string& name, uint64_t max_range_uj, uint64_t energy_uj = 0,
                std::optional<uint64_t> max_power_uw = std::nullopt) {
    std::filesystem::create_directories(dir(zone));
    write(zone, "name", name + "\n");
    write(zone, "max_energy_range_uj", std::to_string(max_range_uj) + "\n");
    write(zone, "enabled", "1\n");
    set_energy(zone, energy_uj);
    if (max_power_uw) {
      write(zone, "constraint_0_name", "long_term\n");
      write(zone, "constraint_0_max_power_uw", std::to_string(*max_power_uw) + "\n");
      write(zone, "constraint_0_power_limit_uw", std::to_string(*max_power_uw / 2) + "\n");
    }
  }
  // A server socket: package-N with core, uncore and dram subzones.
  void add_socket(int n, uint64_t max_range_uj = 262143328850ULL) {
    const std::string z = "intel-rapl:" + std::to_string(n);
    add_zone(z, "package-" + std::to_string(n), max_range_uj, 1000, 250'000'000);
    add_zone(z + ":0", "core", max_range_uj, 100);
    add_zone(z + ":1", "uncore", max_range_uj, 200);
    add_zone(z + ":2", "dram", 65712999613ULL, 300);
  }
  void set_energy(const std::string& zone, uint64_t energy_uj) {
    write(zone, "energy_uj", std::to_string(energy_uj) + "\n");
  }
  void write(const std::string& zone, const std::string& file, const std::string& content) {
    std::ofstream out(dir(zone) / file, std::ios::trunc);
    out << content;
    if (!out) throw std::runtime_error("cannot write " + (dir(zone) / file).string());
  }
  void remove_zone(const std::string& zone) { std::filesystem::remove_all(dir(zone)); }

  // Paths that fail with EACCES, as on a kernel with the Platypus fix for a non-root user.
  std::set<std::string> denied;
  FaultHook fault_eacces() const {
    return [this](const std::filesystem::path& p) {
      return denied.count(p.filename().string() == "energy_uj" ? p.parent_path().filename().string() : "") ? EACCES
                                                                                                           : 0;
    };
  }

 private:
  std::filesystem::path root_;
};

}  // namespace wattlab::rapl::testing
