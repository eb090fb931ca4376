#include "rapl/rapl_zones.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

namespace wattlab::rapl {
namespace fs = std::filesystem;

namespace {

// "<type>:N" or "<type>:N:M" where <type> contains "rapl".
struct ZoneName {
  std::string type;
  int n = 0;
  int m = -1;
};

bool parse_index(std::string_view s, int& out) {
  if (s.empty() || s.size() > 6) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size();
}

std::optional<ZoneName> parse_zone_name(std::string_view s) {
  const auto c1 = s.find(':');
  if (c1 == std::string_view::npos) return std::nullopt;
  ZoneName z;
  z.type = std::string(s.substr(0, c1));
  if (z.type.find("rapl") == std::string::npos) return std::nullopt;
  const std::string_view rest = s.substr(c1 + 1);
  const auto c2 = rest.find(':');
  if (c2 == std::string_view::npos) {
    if (!parse_index(rest, z.n)) return std::nullopt;
  } else {
    if (!parse_index(rest.substr(0, c2), z.n) || !parse_index(rest.substr(c2 + 1), z.m)) return std::nullopt;
  }
  return z;
}

bool is_mmio(const std::string& type) { return type.find("mmio") != std::string::npos; }

// Order: the MSR interface ("intel-rapl") first, then other control types, MMIO duplicates last.
int type_rank(const std::string& type) {
  if (type == "intel-rapl") return 0;
  return is_mmio(type) ? 2 : 1;
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// Printable quote of file content for error messages: at most 64 characters, escapes shown.
std::string quote(std::string_view s) {
  std::string q = "'";
  std::size_t n = 0;
  for (char c : s) {
    if (++n > 64) {
      q += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      q += "\\n";
    } else if (u < 0x20 || u >= 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      q += "\\x";
      q += kHex[u >> 4];
      q += kHex[u & 0xf];
    } else {
      q += c;
    }
  }
  return q + "'";
}

std::string id_part(std::string_view name) {
  std::string out;
  for (char c : name) {
    const char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    const bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '-' || l == '_';
    out += ok ? l : '_';
  }
  return out.empty() ? "zone" : out;
}

std::string scope_of(const std::string& name) {
  for (const char* s : {"package", "psys", "uncore", "core", "dram"})
    if (name.rfind(s, 0) == 0) return s;
  return id_part(name);
}

// "package-N" or "package-N-die-D".
bool parse_package(const std::string& name, int& socket, int& die) {
  std::string_view s = name;
  if (s.rfind("package-", 0) != 0) return false;
  s.remove_prefix(8);
  const auto d = s.find("-die-");
  if (d == std::string_view::npos) return parse_index(s, socket);
  return parse_index(s.substr(0, d), socket) && parse_index(s.substr(d + 5), die);
}

struct Found {
  fs::path dir;
  std::string sysfs;
  ZoneName zn;
};

// What a top-level zone hands its subzones.
struct Parent {
  std::string prefix;     // "cpu:0", "cpu:0/die:1", "cpu"
  std::string domain_id;  // "cpu:0/package"
  int socket = -1;
  int die = -1;
};

}  // namespace

bool Discovery::any_permission_denied() const {
  return std::any_of(skipped.begin(), skipped.end(),
                     [](const SkippedZone& s) { return s.error.kind == ErrorKind::no_permission; });
}

std::string permission_hint() {
  return "energy_uj is readable by root only on kernels with the Platypus fix (CVE-2020-8694, "
         "Linux 5.10 and the backports). Run wattlab as root (sudo), or make the counters "
         "readable: until reboot `sudo chmod a+r /sys/class/powercap/*/energy_uj`; for good a udev "
         "rule in /etc/udev/rules.d/99-powercap.rules: SUBSYSTEM==\"powercap\", ACTION==\"add\", "
         "RUN+=\"/bin/chmod a+r /sys%p/energy_uj\" (or chgrp a group and chmod g+r). In a "
         "container, bind-mount the tree read-only (docker run -v "
         "/sys/class/powercap:/sys/class/powercap:ro) with readable files. perf_event "
         "(power/energy-pkg/ with CAP_PERFMON or perf_event_paranoid <= 0) is another route";
}

Result<std::string> read_text_file(const fs::path& path, const FaultHook& hook) {
  int err = hook ? hook(path) : 0;
  std::string text;
  if (err == 0) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      err = errno;
    } else {
      char buf[512];
      for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
          if (errno == EINTR) continue;
          err = errno;
          break;
        }
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > 4096) break;  // sysfs attributes are one page at most
      }
      ::close(fd);
    }
  }
  if (err == 0) return text;
  Error e;
  e.vendor_code = err;
  e.what = "reading " + path.string() + " failed: " + std::strerror(err) + " (errno " +
           std::to_string(err) + ")";
  switch (err) {
    case EACCES:
    case EPERM:
      e.kind = ErrorKind::no_permission;
      e.hint = permission_hint();
      break;
    case ENOENT:
    case ENOTDIR:
    case ENODEV:
      e.kind = ErrorKind::not_found;
      e.hint = "the powercap zone is not there (any more): check the powercap root";
      break;
    default:
      e.kind = ErrorKind::io;
      e.hint = "check that the file is a powercap attribute (a regular file with one number)";
  }
  return e;
}

Result<uint64_t> parse_uint(const fs::path& path, const std::string& text) {
  const std::string t = trim(text);
  uint64_t v = 0;
  const char* end = t.data() + t.size();
  auto [p, ec] = std::from_chars(t.data(), end, v);
  if (!t.empty() && ec == std::errc{} && p == end) return v;
  Error e;
  e.kind = ErrorKind::parse;
  e.what = path.string() + " holds " + quote(text) + ", not a decimal unsigned integer";
  if (ec == std::errc::result_out_of_range) e.what += " (out of range for 64 bits)";
  e.hint = "the powercap root may not point at a powercap tree (option powercap_root, "
           "WATTLAB_POWERCAP_ROOT), or the driver wrote a bad value";
  return e;
}

Result<uint64_t> read_uint_file(const fs::path& path, const FaultHook& hook) {
  auto text = read_text_file(path, hook);
  if (!text) return text.error();
  return parse_uint(path, *text);
}

double assumed_max_power_w(const Zone& zone) {
  const double advertised_w = zone.max_power_uw ? static_cast<double>(*zone.max_power_uw) * 1e-6 : 0.0;
  return std::max(advertised_w, kDefaultMaxPowerW);
}

int64_t wrap_time_ns(const Zone& zone) {
  const double range_j = static_cast<double>(zone.max_energy_range_uj) * 1e-6;
  const double t_ns = range_j / assumed_max_power_w(zone) * 1e9;
  constexpr double kMax = static_cast<double>(std::numeric_limits<int64_t>::max() / 4);
  return static_cast<int64_t>(std::min(t_ns, kMax));
}

int64_t max_safe_interval_ns(const Zone& zone) { return wrap_time_ns(zone) / 2; }

Discovery discover_zones(const fs::path& root, const FaultHook& hook) {
  Discovery d;
  d.root = root;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return d;
  d.root_exists = true;

  // Find <type>:N and <type>:N:M, flat under the root and nested inside their parent.
  std::vector<Found> found;
  std::set<std::string> seen;
  auto consider = [&](const fs::path& p, const ZoneName* parent) {
    const std::string name = p.filename().string();
    auto zn = parse_zone_name(name);
    if (!zn || seen.count(name)) return;
    if (parent && (zn->type != parent->type || zn->n != parent->n || zn->m < 0)) return;
    seen.insert(name);
    found.push_back({p, name, *zn});
  };
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) consider(it->path(), nullptr);
  const std::size_t top_count = found.size();
  for (std::size_t i = 0; i < top_count; ++i) {
    if (found[i].zn.m >= 0) continue;
    const ZoneName parent = found[i].zn;
    const fs::path dir = found[i].dir;
    std::error_code ec2;
    for (fs::directory_iterator it(dir, ec2), end; !ec2 && it != end; it.increment(ec2)) consider(it->path(), &parent);
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return std::tuple(type_rank(a.zn.type), a.zn.type, a.zn.n, a.zn.m) <
           std::tuple(type_rank(b.zn.type), b.zn.type, b.zn.n, b.zn.m);
  });

  std::map<std::pair<std::string, int>, Parent> parents;  // (type, N) -> identity of the top zone
  std::set<std::string> ids;
  for (const Found& f : found) {
    Zone z;
    z.dir = f.dir;
    z.sysfs_name = f.sysfs;
    z.control_type = f.zn.type;
    z.index = f.zn.n;
    z.sub_index = f.zn.m;
    auto skip = [&](Error e) { d.skipped.push_back({z.sysfs_name, z.name, std::move(e)}); };

    auto name = read_text_file(f.dir / "name", hook);
    if (!name) {
      skip(name.error());
      continue;
    }
    z.name = trim(*name);
    z.scope = scope_of(z.name);
    if (z.sub_index < 0) {
      Parent p;
      if (z.scope == "package" && parse_package(z.name, p.socket, p.die)) {
        p.prefix = "cpu:" + std::to_string(p.socket);
        if (p.die >= 0) p.prefix += "/die:" + std::to_string(p.die);
        p.domain_id = p.prefix + "/package";
      } else {
        p.prefix = "cpu";
        p.domain_id = "cpu/" + id_part(z.name);
      }
      parents[{z.control_type, z.index}] = p;
      z.socket = p.socket;
      z.die = p.die;
      z.domain_id = p.domain_id;
    } else {
      auto it = parents.find({z.control_type, z.index});
      const Parent p = it != parents.end() ? it->second : Parent{"cpu", "", -1, -1};
      z.socket = p.socket;
      z.die = p.die;
      // sysfs lists dram under the package, but the package domain does not contain DRAM energy
      // (Intel SDM: PKG covers cores and uncore; DRAM is its own domain): it is summed, not nested.
      if (z.scope != "dram") z.parent_id = p.domain_id;
      z.domain_id = p.prefix + "/" + id_part(z.name);
    }
    if (ids.count(z.domain_id)) {
      if (is_mmio(z.control_type)) {
        d.notes.push_back(z.sysfs_name + " (" + z.name + ") is the MMIO view of " + z.domain_id +
                          ", already read through the MSR interface: not added twice");
        continue;
      }
      z.domain_id += "@" + z.sysfs_name;  // two zones with one name: keep both, distinctly
    }

    auto range = read_uint_file(f.dir / "max_energy_range_uj", hook);
    if (!range) {
      skip(range.error());
      continue;
    }
    if (*range == 0) {
      skip(Error{ErrorKind::parse, (f.dir / "max_energy_range_uj").string() + " is 0: the counter's wrap point is unknown",
                 "this zone cannot be unwrapped safely, so it is not measured", 0});
      continue;
    }
    z.max_energy_range_uj = *range;
    auto energy = read_uint_file(f.dir / "energy_uj", hook);
    if (!energy) {
      skip(energy.error());
      continue;
    }
    if (*energy > z.max_energy_range_uj) {
      skip(Error{ErrorKind::parse,
                 (f.dir / "energy_uj").string() + " holds " + std::to_string(*energy) +
                     ", above max_energy_range_uj " + std::to_string(z.max_energy_range_uj),
                 "the zone's files disagree; it is not measured", 0});
      continue;
    }
    for (int k = 0; k < 16; ++k) {
      const fs::path p = f.dir / ("constraint_" + std::to_string(k) + "_max_power_uw");
      if (!fs::exists(p, ec)) continue;
      auto v = read_uint_file(p, hook);
      if (v && *v > 0) z.max_power_uw = std::max(z.max_power_uw.value_or(0), *v);
    }
    const fs::path limit = f.dir / "constraint_0_power_limit_uw";
    if (z.sub_index < 0 && fs::exists(limit, ec) && read_uint_file(limit, hook)) z.power_limit_file = limit;
    ids.insert(z.domain_id);
    d.zones.push_back(std::move(z));
  }

  // psys (the whole SoC platform, client parts) contains the packages and what else it powers:
  // it becomes the parent of every other top-level zone, so that psys is never summed with them.
  const auto psys = std::find_if(d.zones.begin(), d.zones.end(),
                                 [](const Zone& z) { return z.scope == "psys" && z.sub_index < 0; });
  if (psys != d.zones.end()) {
    const std::string psys_id = psys->domain_id;
    for (Zone& z : d.zones)
      if (z.parent_id.empty() && z.domain_id != psys_id) z.parent_id = psys_id;
  }
  return d;
}

}  // namespace wattlab::rapl
