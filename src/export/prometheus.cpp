#include "export/prometheus.h"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "export/live.h"

namespace wattlab {
namespace {

constexpr double kNs = 1e-9;

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

std::string help_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

// One metric family: HELP and TYPE once, then its samples; written only if it has samples.
struct Family {
  std::string name, type, help;
  std::string body;
  void add(const std::string& labels, double v, std::string_view suffix = "") {
    body += name;
    body += suffix;
    if (!labels.empty()) body += "{" + labels + "}";
    body += " " + number(v) + "\n";
  }
  void write(std::string& out) const {
    if (body.empty()) return;
    out += "# HELP " + name + " " + help_escape(help) + "\n";
    out += "# TYPE " + name + " " + type + "\n";
    out += body;
  }
};

std::string label(std::string_view k, const std::string& v) {
  return std::string(k) + "=\"" + prometheus_escape(v) + "\"";
}

std::string domain_labels(const ExpositionInfo& info, const Domain& d) {
  std::string s = label("host", info.host) + "," + label("domain", d.id);
  const std::string gpu = gpu_index_of(d.id);
  if (!gpu.empty()) s += "," + label("gpu", gpu);
  s += "," + label("uuid", d.uuid) + "," + label("name", d.name) + "," + label("scope", d.scope) + "," +
       label("simulated", d.simulated ? "true" : "false");
  return s;
}

// Telemetry readings that become one gauge each: family index, extra label, scale to base units.
struct GaugeMap {
  ReadingKind kind;
  int family;
  const char* extra;  // "" or `key="value"`
  double scale;
  bool counter = false;  // a driver's cumulative count: its newest value stays true after a loss
};

}  // namespace

std::string prometheus_escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string format_prometheus(const std::vector<Domain>& domains, const MeterSnapshot& snap, const ExpositionInfo& info) {
  bool any_sim = false;
  for (const auto& d : domains) any_sim = any_sim || d.simulated;
  const std::string sim_note =
      any_sim ? " SIMULATED: series with simulated=\"true\" come from wattlab's software GPU (scripted power, not hardware)."
              : "";
  auto fam = [&](std::string name, std::string type, std::string help) {
    return Family{std::move(name), std::move(type), std::move(help) + sim_note, {}};
  };
  Family energy = fam("wattlab_energy_joules_total", "counter",
                      "Energy used since the exporter started, in joules, read off the meter's timeline (energy counter "
                      "with resets and wraps removed, extended by integrated power; integrated power where the domain "
                      "has no counter). Monotonic. Systematic error: wattlab_sensor_gain_tolerance_ratio.");
  Family energy_age = fam("wattlab_energy_age_seconds", "gauge",
                          "Age of the newest reading wattlab_energy_joules_total covers, in seconds.");
  Family resets = fam("wattlab_energy_counter_resets_total", "counter",
                      "Times the sensor's energy counter went backwards; each was bridged with integrated power.");
  Family unmeasured = fam("wattlab_energy_unmeasured_seconds_total", "counter",
                          "Domains without an energy counter: time no power reading covered (counted as 0 J), in seconds.");
  Family power = fam("wattlab_power_watts", "gauge",
                     "Newest power reading, in watts: kind=\"instant\" (on H100/H200 a 25 ms average, refreshed every "
                     "100 ms), \"average\" (a 1 s average), \"sample\" (newest driver buffer sample).");
  Family limit = fam("wattlab_power_limit_watts", "gauge", "Enforced power limit, in watts.");
  Family clock = fam("wattlab_clock_hertz", "gauge", "Newest clock reading, in hertz (clock=\"sm\" or \"memory\").");
  Family temp = fam("wattlab_temperature_celsius", "gauge", "Newest temperature, in degrees Celsius (sensor=\"gpu\" or \"memory\").");
  Family util = fam("wattlab_utilization_ratio", "gauge",
                    "Newest driver utilization, 0..1 (resource=\"gpu\": time a kernel ran; \"memory\": time memory was read or written).");
  Family gpm = fam("wattlab_gpm_activity_ratio", "gauge",
                   "Newest GPM (GPU performance monitoring) metric, 0..1: sm_activity, sm_occupancy, tensor_activity, dram_bandwidth.");
  Family mem = fam("wattlab_memory_used_bytes", "gauge", "Device memory in use, in bytes.");
  Family throttle = fam("wattlab_throttle_reason_active", "gauge",
                        "1 when the newest clocks-event (throttle) reason mask has this reason set, else 0.");
  Family pviol = fam("wattlab_power_violation_seconds_total", "counter",
                     "Time the clocks were held by the power policy, as the driver counts it, in seconds.");
  Family tviol = fam("wattlab_thermal_violation_seconds_total", "counter",
                     "Time the clocks were held by the thermal policy, as the driver counts it, in seconds.");
  Family up = fam("wattlab_domain_up", "gauge",
                  "1 while the domain answers, 0 once it was lost: its telemetry gauges are then omitted, its counters "
                  "keep their final values.");
  Family reads = fam("wattlab_sensor_reads_total", "counter", "Successful reads, per reading.");
  Family errors = fam("wattlab_sensor_read_errors_total", "counter", "Failed reads, per reading.");
  Family ok_age = fam("wattlab_sensor_last_success_age_seconds", "gauge",
                      "Seconds since the newest successful read, per reading (absent: never read successfully).");
  Family gain = fam("wattlab_sensor_gain_tolerance_ratio", "gauge",
                    "Systematic relative error of the domain's power and energy readings (0.05: +-5%).");

  const GaugeMap maps[] = {
      {ReadingKind::power_instant_w, 0, "kind=\"instant\"", 1},
      {ReadingKind::power_average_w, 0, "kind=\"average\"", 1},
      {ReadingKind::power_sample_w, 0, "kind=\"sample\"", 1},
      {ReadingKind::power_limit_w, 1, "", 1},
      {ReadingKind::sm_clock_mhz, 2, "clock=\"sm\"", 1e6},
      {ReadingKind::mem_clock_mhz, 2, "clock=\"memory\"", 1e6},
      {ReadingKind::temperature_c, 3, "sensor=\"gpu\"", 1},
      {ReadingKind::mem_temperature_c, 3, "sensor=\"memory\"", 1},
      {ReadingKind::utilization_gpu_pct, 4, "resource=\"gpu\"", 0.01},
      {ReadingKind::utilization_mem_pct, 4, "resource=\"memory\"", 0.01},
      {ReadingKind::gpm_sm_activity_pct, 5, "metric=\"sm_activity\"", 0.01},
      {ReadingKind::gpm_sm_occupancy_pct, 5, "metric=\"sm_occupancy\"", 0.01},
      {ReadingKind::gpm_tensor_activity_pct, 5, "metric=\"tensor_activity\"", 0.01},
      {ReadingKind::gpm_dram_bw_pct, 5, "metric=\"dram_bandwidth\"", 0.01},
      {ReadingKind::memory_used_bytes, 6, "", 1},
      {ReadingKind::power_violation_ns, 7, "", kNs, true},
      {ReadingKind::thermal_violation_ns, 8, "", kNs, true},
  };
  Family* gauges[] = {&power, &limit, &clock, &temp, &util, &gpm, &mem, &pviol, &tviol};

  for (std::size_t i = 0; i < domains.size() && i < snap.domains.size(); ++i) {
    const Domain& d = domains[i];
    const DomainLive& l = snap.domains[i];
    const std::string base = domain_labels(info, d);
    auto with = [&](const std::string& extra) { return extra.empty() ? base : base + "," + extra; };
    if (l.energy_ok) {
      energy.add(base, l.energy_j);
      energy_age.add(base, static_cast<double>(snap.t_ns - l.energy_t_ns) * kNs);
    }
    if (d.model.supports(ReadingKind::energy_counter_j)) resets.add(base, static_cast<double>(l.counter_resets));
    else if (l.energy_ok) unmeasured.add(base, static_cast<double>(l.unmeasured_ns) * kNs);
    // Telemetry only while current: a lost domain's last power, clocks and temperatures are not
    // repeated (wattlab_domain_up says it was lost; the counters keep their final values).
    for (const auto& m : maps) {
      const auto& latest = m.counter ? l.health(m.kind).latest : current_reading(l, m.kind);
      if (latest) gauges[m.family]->add(with(m.extra), latest->value * m.scale);
    }
    if (const auto& mask = current_reading(l, ReadingKind::clock_event_reasons)) {
      const auto bits = static_cast<uint64_t>(mask->value);
      for (const auto& r : clock_event_reasons())
        throttle.add(with(label("reason", std::string(r.name))), (bits & r.bit) ? 1 : 0);
    }
    up.add(base, l.lost ? 0 : 1);
    for (const auto& rm : d.model.readings) {
      const ReadingHealth& h = l.health(rm.kind);
      const std::string rl = with(label("reading", std::string(to_string(rm.kind))));
      reads.add(rl, static_cast<double>(h.reads_ok));
      errors.add(rl, static_cast<double>(h.read_errors));
      if (h.last_ok_ns != INT64_MIN) ok_age.add(rl, static_cast<double>(snap.t_ns - h.last_ok_ns) * kNs);
    }
    gain.add(base, d.model.gain_tolerance);
  }

  const std::string host = label("host", info.host);
  Family lateness{"wattlab_sampler_read_lateness_seconds", "histogram",
                  "How late the sampler started each read against its schedule, in seconds (scrapes must not delay it).",
                  {}};
  uint64_t cum = 0;
  const auto& st = snap.sampler;
  for (std::size_t b = 0; b < SamplerStats::kLatenessBoundsNs.size(); ++b) {
    cum += st.lateness_counts[b];
    lateness.add(host + "," + label("le", number(static_cast<double>(SamplerStats::kLatenessBoundsNs[b]) * kNs)),
                 static_cast<double>(cum), "_bucket");
  }
  cum += st.lateness_counts.back();
  lateness.add(host + ",le=\"+Inf\"", static_cast<double>(cum), "_bucket");
  lateness.add(host, st.lateness_sum_s, "_sum");
  lateness.add(host, static_cast<double>(st.reads), "_count");
  Family late_max{"wattlab_sampler_read_lateness_max_seconds", "gauge", "Largest read lateness since the start, in seconds.", {}};
  late_max.add(host, static_cast<double>(st.lateness_max_ns) * kNs);
  Family last_read{"wattlab_sampler_last_read_age_seconds", "gauge",
                   "Seconds since the sampler started its newest read (of any domain).", {}};
  if (st.newest_read_ns != INT64_MIN) last_read.add(host, static_cast<double>(snap.t_ns - st.newest_read_ns) * kNs);
  Family cpu{"wattlab_sampler_cpu_seconds_total", "counter", "CPU time the sampler thread has used, in seconds.", {}};
  cpu.add(host, static_cast<double>(st.cpu_ns) * kNs);
  Family uptime{"wattlab_exporter_uptime_seconds", "gauge", "Seconds since the meter started.", {}};
  uptime.add(host, static_cast<double>(snap.t_ns - snap.start_t_ns) * kNs);
  Family exporter{"wattlab_exporter_info", "gauge", "Constant 1, labelled with the exporter's version and --device.", {}};
  exporter.add(host + "," + label("version", info.version) + "," + label("device", info.device_selection) + "," +
                   label("simulated", any_sim ? "true" : "false"),
               1);
  Family scrapes{"wattlab_exporter_scrapes_total", "counter", "Answers with status 200 on /metrics.", {}};
  Family unauthorized{"wattlab_exporter_unauthorized_total", "counter", "Requests answered 401 (missing or wrong bearer token).", {}};
  Family refused{"wattlab_exporter_refused_total", "counter",
                 "Requests refused before any body was read: 413 (a body), 405 (not GET or HEAD), 400 (request head "
                 "over the size limit). Each closes its connection.", {}};
  Family timeouts{"wattlab_exporter_timeouts_total", "counter",
                  "Connections closed because a request head or an answer took longer than --http-timeout-s.", {}};
  Family conns{"wattlab_exporter_connections", "gauge",
               "Connections holding a thread now (at most --http-threads; more wait for one).", {}};
  if (info.http) {
    scrapes.add(host, static_cast<double>(info.http->scrapes));
    unauthorized.add(host, static_cast<double>(info.http->unauthorized));
    refused.add(host, static_cast<double>(info.http->refused));
    timeouts.add(host, static_cast<double>(info.http->timed_out));
    conns.add(host, static_cast<double>(info.http->connections));
  }

  std::string out;
  for (const Family* f : {&energy, &energy_age, &resets, &unmeasured, &power, &limit, &clock, &temp, &util, &gpm, &mem,
                          &throttle, &pviol, &tviol, &up, &reads, &errors, &ok_age, &gain, &lateness, &late_max,
                          &last_read, &cpu, &uptime, &exporter, &scrapes, &unauthorized, &refused, &timeouts, &conns})
    f->write(out);
  return out;
}

}  // namespace wattlab
