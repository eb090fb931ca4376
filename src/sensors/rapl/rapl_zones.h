// Discovery and reading of Linux powercap RAPL zones (private to the sensors layer).
// Which sysfs file maps to which reading: README.md beside this file.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wattlab/core/error.h"

namespace wattlab::rapl {

inline constexpr const char* kDefaultPowercapRoot = "/sys/class/powercap";

// Test hook: for a path about to be read, an errno to fail with (0: read it for real). Tests run
// as root, where a mode-000 file is still readable, so EACCES is injected here instead.
using FaultHook = std::function<int(const std::filesystem::path&)>;

// One powercap zone or subzone, as found under the root.
struct Zone {
  std::filesystem::path dir;     // <root>/intel-rapl:0:1
  std::string sysfs_name;        // "intel-rapl:0:1"
  std::string control_type;      // "intel-rapl", "amd-rapl", "intel-rapl-mmio"
  int index = 0;                 // N of <type>:N[:M]
  int sub_index = -1;            // M, or -1 for a top-level zone
  std::string name;              // contents of `name`: "package-0", "core", "uncore", "dram", "psys"
  std::string scope;             // "package", "core", "uncore", "dram", "psys", else the name
  int socket = -1;               // from "package-N" (subzones: the parent's); -1: not a socket (psys)
  int die = -1;                  // from "package-N-die-D", else -1
  std::string domain_id;         // "cpu:0/package", "cpu:0/dram", "cpu/psys"
  std::string parent_id;         // the domain that contains this one, "" for none
  uint64_t max_energy_range_uj = 0;             // the counter wraps here
  std::optional<uint64_t> max_power_uw;         // largest constraint_*_max_power_uw, when given
  std::optional<std::filesystem::path> power_limit_file;  // constraint_0_power_limit_uw, if readable
};

// A zone that was found but is not measured, and why.
struct SkippedZone {
  std::string sysfs_name;
  std::string zone_name;         // "package-0" where known
  Error error;
};

struct Discovery {
  std::filesystem::path root;
  bool root_exists = false;
  std::vector<Zone> zones;             // readable zones, in a stable order (type, N, M)
  std::vector<SkippedZone> skipped;    // unreadable, malformed or duplicate zones
  std::vector<std::string> notes;      // "intel-rapl-mmio:0 duplicates intel-rapl:0 (package-0)"
  bool any_permission_denied() const;
};

// Walks <root>/<type>:N and <type>:N:M (flat, as /sys/class/powercap shows them, or nested, as
// /sys/devices/virtual/powercap does) for every control type whose name contains "rapl".
// Probes each zone's energy_uj once; a zone that cannot be read is skipped, not measured as 0.
Discovery discover_zones(const std::filesystem::path& root, const FaultHook& hook = {});

// Reads a small sysfs file whole. Errors name the file, the errno and what to do.
Result<std::string> read_text_file(const std::filesystem::path& path, const FaultHook& hook = {});
// A decimal unsigned integer with optional surrounding whitespace; anything else is a parse Error
// that quotes the content.
Result<uint64_t> parse_uint(const std::filesystem::path& path, const std::string& text);
Result<uint64_t> read_uint_file(const std::filesystem::path& path, const FaultHook& hook = {});

// What to do when energy_uj is not readable: root-only since the Platypus fix (CVE-2020-8694).
std::string permission_hint();

// Conservative power assumed when a zone advertises no constraint_*_max_power_uw, in W.
inline constexpr double kDefaultMaxPowerW = 500.0;
// The power the wrap interval is computed for: the larger of the zone's advertised maximum and
// kDefaultMaxPowerW (advertised maxima are long-term limits that PL2/PL4 bursts exceed).
double assumed_max_power_w(const Zone& zone);
// How long the counter takes to wrap at assumed_max_power_w, and the read interval that can never
// miss a wrap (half of that), in ns.
int64_t wrap_time_ns(const Zone& zone);
int64_t max_safe_interval_ns(const Zone& zone);

}  // namespace wattlab::rapl
