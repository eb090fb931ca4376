#include "rapl/rapl_sensor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

#include "core/units.h"

namespace wattlab::rapl {
namespace fs = std::filesystem;

namespace {

// RAPL publishes a new value about every millisecond (Intel SDM vol. 3B, "Platform Specific Power Management Support"; AMD alike).
constexpr int64_t kUpdatePeriodNs = 1'000'000;
// Typical energy status unit, 2^-16 J; powercap does not expose it (some parts use 2^-14 J).
constexpr double kTypicalEnergyUnitJ = 1.0 / 65536.0;
// RAPL is a model-based estimate, not a shunt; no vendor tolerance is published. wattlab carries
// +-10 % (DRAM +-15 %: on many servers an energy-per-access model) as a systematic uncertainty.
constexpr double kGainTolerance = 0.10;
constexpr double kDramGainTolerance = 0.15;

std::string fmt_double(double v, const char* f = "%.3g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Median wall time of a few reads of `path`, measured on the real clock whatever the config's is.
int64_t measure_read_cost_ns(const fs::path& path, const FaultHook& hook) {
  std::vector<int64_t> ns;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    (void)read_uint_file(path, hook);
    const auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  }
  std::sort(ns.begin(), ns.end());
  return std::max<int64_t>(ns[ns.size() / 2], 1);
}

void read_cpuinfo(const fs::path& path, std::string& vendor, std::string& model) {
  if (path.empty()) return;
  std::ifstream in(path);
  std::string line;
  auto value = [](const std::string& l) {
    const auto c = l.find(':');
    if (c == std::string::npos) return std::string();
    const auto b = l.find_first_not_of(" \t", c + 1);
    return b == std::string::npos ? std::string() : l.substr(b);
  };
  while (std::getline(in, line) && (vendor.empty() || model.empty())) {
    if (vendor.empty() && line.rfind("vendor_id", 0) == 0) {
      const std::string v = value(line);
      vendor = v == "GenuineIntel" ? "Intel" : v == "AuthenticAMD" || v == "HygonGenuine" ? "AMD" : v;
    } else if (model.empty() && line.rfind("model name", 0) == 0) {
      model = value(line);
    }
  }
}

Error with_domain(Error e, const Zone& z) {
  e.what = z.domain_id + " (" + z.sysfs_name + "): " + e.what;
  if (e.kind == ErrorKind::not_found) {
    e.kind = ErrorKind::device_lost;
    e.hint = "the powercap zone disappeared mid-run (driver unloaded, CPU package offlined, "
             "container remount); the other domains go on; reopen the sensors to measure it again";
  }
  return e;
}

}  // namespace

fs::path powercap_root(const BackendOptions& options) {
  const std::string& opt = options.powercap_root;
  if (opt.empty() || opt == kDefaultPowercapRoot) {
    const char* env = std::getenv("WATTLAB_POWERCAP_ROOT");
    if (env && *env) return env;
    return kDefaultPowercapRoot;
  }
  return opt;
}

RaplSensor::RaplSensor(std::vector<Zone> zones, RaplConfig config)
    : zones_(std::move(zones)), config_(std::move(config)),
      clock_(config_.clock ? config_.clock : &MonotonicClock::instance()) {
  read_cpuinfo(config_.cpuinfo, vendor_, cpu_model_);
  for (const Zone& z : zones_) {
    Domain d;
    d.id = z.domain_id;
    d.vendor = !vendor_.empty() ? vendor_
               : z.control_type.find("amd") != std::string::npos ? "AMD"
                                                                  : "unknown (" + z.control_type + ")";
    d.name = z.name;
    d.scope = z.scope;
    d.parent = z.parent_id;

    const fs::path energy_file = z.dir / "energy_uj";
    const double p_w = assumed_max_power_w(z);
    ReadingModel e;
    e.kind = ReadingKind::energy_counter_j;
    e.update_period_ns = kUpdatePeriodNs;
    e.resolution = kTypicalEnergyUnitJ;
    e.read_cost_ns = measure_read_cost_ns(energy_file, config_.fault);
    e.wrap_range = uj_to_j(static_cast<double>(z.max_energy_range_uj));
    e.max_safe_interval_ns = max_safe_interval_ns(z);
    e.note = energy_file.string() + " (uJ, raw counter in J, not unwrapped: the meter unwraps at wrap_range = " +
             "max_energy_range_uj " + std::to_string(z.max_energy_range_uj) + " uJ). Wraps in " +
             fmt_double(ns_to_s(wrap_time_ns(z)), "%.1f") + " s at " + fmt_double(p_w, "%.0f") + " W (" +
             (z.max_power_uw ? "the larger of constraint max_power " +
                                   fmt_double(static_cast<double>(*z.max_power_uw) * 1e-6, "%.0f") +
                                   " W and the default 500 W"
                             : std::string("no constraint_*_max_power_uw: default 500 W")) +
             "); read at least every " + fmt_double(ns_to_s(e.max_safe_interval_ns), "%.1f") +
             " s. Update ~1 ms (Intel SDM); resolution 2^-16 J typical (not exposed by powercap); "
             "read cost: median of 5 reads at open";
    d.model.readings.push_back(e);
    if (z.power_limit_file) {
      ReadingModel l;
      l.kind = ReadingKind::power_limit_w;
      l.resolution = 1e-6;
      l.read_cost_ns = measure_read_cost_ns(*z.power_limit_file, config_.fault);
      l.note = z.power_limit_file->string() + " (uW -> W): the long-term limit (PL1)";
      d.model.readings.push_back(l);
    }
    d.model.gain_tolerance = z.scope == "dram" ? kDramGainTolerance : kGainTolerance;
    d.model.source = "Linux powercap (" + z.control_type +
                     ") sysfs; RAPL is a model-based estimate, gain tolerance is wattlab's "
                     "conservative assumption (no vendor figure); see src/sensors/rapl/README.md";
    domains_.push_back(std::move(d));
  }
}

Status RaplSensor::read(std::size_t domain_index, ReadingKind kind, std::vector<Reading>& out) {
  if (domain_index >= zones_.size())
    return Error{ErrorKind::invalid_argument,
                 "rapl: domain index " + std::to_string(domain_index) + " out of range (" +
                     std::to_string(zones_.size()) + " domains)",
                 "pass an index below domains().size()", 0};
  const Zone& z = zones_[domain_index];
  fs::path file;
  double scale = 1e-6;  // uJ -> J, uW -> W
  if (kind == ReadingKind::energy_counter_j) {
    file = z.dir / "energy_uj";
  } else if (kind == ReadingKind::power_limit_w && z.power_limit_file) {
    file = *z.power_limit_file;
  } else {
    return Error{ErrorKind::not_supported,
                 z.domain_id + ": rapl has no " + std::string(to_string(kind)) + " reading",
                 "ask for the readings in the domain's sensor model", 0};
  }
  const int64_t t0_ns = clock_->now_ns();
  auto v = read_uint_file(file, config_.fault);
  const int64_t t1_ns = clock_->now_ns();
  if (!v) return with_domain(v.error(), z);
  if (kind == ReadingKind::energy_counter_j && *v > z.max_energy_range_uj)
    return with_domain(Error{ErrorKind::parse,
                             file.string() + " holds " + std::to_string(*v) + ", above max_energy_range_uj " +
                                 std::to_string(z.max_energy_range_uj),
                             "a counter past its wrap point is not a RAPL reading; this sample is dropped", 0},
                       z);
  Reading r;
  r.t_ns = t0_ns + (t1_ns - t0_ns) / 2;
  r.kind = kind;
  r.value = static_cast<double>(*v) * scale;
  r.read_dur_ns = t1_ns - t0_ns;
  out.push_back(r);
  return Status::success();
}

std::vector<std::pair<std::string, std::string>> RaplSensor::properties() const {
  std::vector<std::pair<std::string, std::string>> p;
  p.emplace_back("powercap_root", config_.root.string());
  if (!vendor_.empty()) p.emplace_back("cpu_vendor", vendor_);
  if (!cpu_model_.empty()) p.emplace_back("cpu_model", cpu_model_);
  for (const Zone& z : zones_)
    p.emplace_back(z.domain_id, z.sysfs_name + " name=" + z.name +
                                    " max_energy_range_uj=" + std::to_string(z.max_energy_range_uj) +
                                    (z.max_power_uw ? " max_power_uw=" + std::to_string(*z.max_power_uw) : ""));
  return p;
}

detail::BackendLoad open_rapl_with(const RaplConfig& config) {
  detail::BackendLoad load;
  load.status.backend = "rapl";
  Discovery d = discover_zones(config.root, config.fault);
  if (d.zones.empty() && d.skipped.empty()) {
    load.status.detail = "no powercap zones under " + config.root.string() +
                         " (a VM or container without /sys/class/powercap): CPU energy unavailable";
    return load;
  }
  std::string skipped;
  std::set<std::string> hints;
  for (const SkippedZone& s : d.skipped) {
    skipped += (skipped.empty() ? "" : "; ") + s.sysfs_name + (s.zone_name.empty() ? "" : " (" + s.zone_name + ")") +
               ": " + s.error.what;
    if (!s.error.hint.empty()) hints.insert(s.error.hint);
  }
  for (const std::string& h : hints) skipped += ". Fix: " + h;
  std::string notes;
  for (const std::string& n : d.notes) notes += "; " + n;

  if (d.zones.empty()) {
    load.status.detail = "no readable RAPL zone under " + config.root.string() + ": CPU energy unavailable. " +
                         skipped + notes;
    return load;
  }
  std::set<int> sockets;
  std::string list;
  for (const Zone& z : d.zones) {
    if (z.socket >= 0) sockets.insert(z.socket);
    list += (list.empty() ? "" : ", ") + z.domain_id + " (" + z.sysfs_name + ")";
  }
  load.status.loaded = true;
  auto plural = [](std::size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  load.status.detail = plural(d.zones.size(), "zone") + " on " + plural(sockets.size(), "socket") +
                       " under " + config.root.string() + ": " + list;
  if (!skipped.empty()) load.status.detail += ". Not measured: " + skipped;
  load.status.detail += notes;
  load.sensor = std::make_unique<RaplSensor>(std::move(d.zones), config);
  return load;
}

}  // namespace wattlab::rapl

namespace wattlab::detail {

BackendLoad open_rapl(const BackendOptions& options) {
  rapl::RaplConfig c;
  c.root = rapl::powercap_root(options);
  c.clock = options.clock;
  return rapl::open_rapl_with(c);
}

}  // namespace wattlab::detail
