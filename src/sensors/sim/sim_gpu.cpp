#include "sim_gpu.h"

#include "core/splitmix.h"

#include <algorithm>
#include <cmath>

#include "../backend.h"
#include "core/units.h"

namespace wattlab::sim {
namespace {

double unit_uniform(uint64_t h) { return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0); }

// H200 read costs (docs/sensors.md, section 1).
constexpr int64_t kCounterCostNs = 4'200'000;
constexpr int64_t kInstantCostNs = 8'800;
constexpr int64_t kAverageCostNs = 9'000;
constexpr int64_t kSamplesCostNs = 503'000;
constexpr int64_t kTelemetryCostNs = 15'000;
constexpr int64_t kGpmSampleCostNs = 200'000;  // nvmlGpmSampleGet + MetricsGet, H200 under load
constexpr int64_t kGpmCompanionCostNs = 1'000;

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

SensorModel make_model(const SimConfig& c) {
  SensorModel m;
  const std::string src = "wattlab-sim: H200 behaviour from docs/sensors.md (SIMULATED)";
  m.source = src;
  m.gain_tolerance = 0.05;
  auto add = [&](ReadingKind k, int64_t period, int64_t window, double res, int64_t cost,
                 int64_t max_interval, std::string note) {
    ReadingModel r;
    r.kind = k;
    r.update_period_ns = period;
    r.averaging_window_ns = window;
    r.resolution = res;
    r.read_cost_ns = c.read_costs ? cost : 0;
    r.max_safe_interval_ns = max_interval;
    r.note = std::move(note);
    m.readings.push_back(r);
  };
  add(ReadingKind::energy_counter_j, c.update_period_ns, c.update_period_ns, 1e-3, kCounterCostNs, 0,
      "cumulative counter, 1 mJ steps, published every 100 ms");
  add(ReadingKind::power_instant_w, c.update_period_ns, c.instant_window_ns, 1e-3, kInstantCostNs, 0,
      "averages 25 ms of every 100 ms: 75% of activity unseen");
  add(ReadingKind::power_average_w, c.update_period_ns, c.average_window_ns, 1e-3, kAverageCostNs, 0,
      "1 s average, lags edges by up to 1 s");
  const int64_t depth_ns = static_cast<int64_t>(c.sample_buffer_depth) * c.sample_spacing_ns;
  add(ReadingKind::power_sample_w, c.sample_spacing_ns, c.sample_window_ns, 1e-3, kSamplesCostNs, depth_ns / 2,
      "driver sample buffer, 20 ms spacing, 119 deep");
  for (ReadingKind k : {ReadingKind::sm_clock_mhz, ReadingKind::mem_clock_mhz, ReadingKind::temperature_c,
                        ReadingKind::utilization_gpu_pct, ReadingKind::clock_event_reasons,
                        ReadingKind::power_violation_ns, ReadingKind::power_limit_w, ReadingKind::memory_used_bytes})
    add(k, c.update_period_ns, 0, 1, kTelemetryCostNs, 0, "telemetry");
  add(ReadingKind::gpm_sm_activity_pct, c.update_period_ns, 0, 1, kGpmSampleCostNs, 0, "telemetry, one GPM sample");
  // As on NVML: one GPM read computes all four metrics; the other three come with it, nearly free.
  for (ReadingKind k : {ReadingKind::gpm_sm_occupancy_pct, ReadingKind::gpm_tensor_activity_pct,
                        ReadingKind::gpm_dram_bw_pct}) {
    add(k, c.update_period_ns, 0, 1, kGpmCompanionCostNs, 0, "telemetry, read with gpm_sm_activity_pct");
    m.readings.back().read_with = ReadingKind::gpm_sm_activity_pct;
  }
  return m;
}

}  // namespace

SimGpu::SimGpu(SimConfig config, Clock& clock)
    : config_(std::move(config)),
      clock_(clock),
      workload_(Workload::parse(config_.workload.empty() ? Workload::default_script() : config_.workload,
                                config_.idle_w, config_.board_max_w)),
      faults_(Faults::parse(config_.faults)),
      origin_ns_(clock.now_ns()) {
  if (config_.gpus < 1 || config_.gpus > 64)
    throw UsageError("--sim-gpus " + std::to_string(config_.gpus) + " is out of range 1..64");
  const SensorModel model = make_model(config_);
  for (int i = 0; i < config_.gpus; ++i) {
    Board b;
    b.seed = splitmix64(config_.seed * 1000003ULL + static_cast<uint64_t>(i));
    b.gain = 1.0 + (std::isnan(config_.gain_error) ? (unit_uniform(splitmix64(b.seed ^ 1)) * 0.06 - 0.03) : config_.gain_error);
    b.phase_ns = static_cast<int64_t>(unit_uniform(splitmix64(b.seed ^ 2)) * static_cast<double>(config_.update_period_ns));
    b.sample_phase_ns = static_cast<int64_t>(unit_uniform(splitmix64(b.seed ^ 3)) * static_cast<double>(config_.sample_spacing_ns));
    boards_.push_back(b);
    Domain d;
    d.id = "gpu:" + std::to_string(i);
    d.vendor = "wattlab-sim";
    d.name = "Simulated H200 (SIMULATED)";
    d.uuid = "SIM-" + std::to_string(config_.seed) + "-" + std::to_string(i);
    d.scope = "gpu";
    d.simulated = true;
    d.model = model;
    domains_.push_back(std::move(d));
  }
  if (config_.memory_domain) {
    for (int i = 0; i < config_.gpus; ++i) {
      Domain m;
      m.id = "gpu:" + std::to_string(i) + "/memory";
      m.vendor = "wattlab-sim";
      m.name = "Simulated H200 memory (HBM) (SIMULATED)";
      m.uuid = domains_[static_cast<std::size_t>(i)].uuid;
      m.scope = "memory";
      m.parent = "gpu:" + std::to_string(i);
      m.simulated = true;
      m.model.source = model.source;
      m.model.gain_tolerance = 0.05;
      ReadingModel r;
      r.kind = ReadingKind::power_average_w;
      r.update_period_ns = config_.update_period_ns;
      r.averaging_window_ns = config_.average_window_ns;
      r.resolution = 1e-3;
      r.read_cost_ns = config_.read_costs ? kAverageCostNs : 0;
      r.note = "1 s average of the HBM power, included in the board power of " + m.parent + " (never add them)";
      m.model.readings.push_back(r);
      domains_.push_back(std::move(m));
    }
  }
}

double SimGpu::memory_power(double board_power_w) const {
  return config_.memory_idle_w + config_.memory_share * (board_power_w - config_.idle_w);
}

double SimGpu::true_memory_energy_j(std::size_t board, int64_t a_ns, int64_t b_ns) const {
  const double dur_s = static_cast<double>(b_ns - a_ns) * 1e-9;
  return dur_s > 0 ? memory_power(true_energy_j(board, a_ns, b_ns) / dur_s) * dur_s : 0.0;
}

Status SimGpu::read_memory(Board& b, const Domain& d, ReadingKind kind, std::vector<Reading>& out) {
  int64_t t_mid = 0, t = 0, call_ns = 0;
  if (Status st = begin_read(d, kind, t_mid, t, call_ns); !st.ok()) return st;
  if (const auto* s = Faults::find(faults_.stuck, kind, t)) t = s->from_ns;
  if (Faults::find(faults_.garbage, kind, t)) {
    out.push_back(Reading{t_mid, kind, garbage_value(kind, b.garbage_reads++), call_ns});
    return {};
  }
  const int64_t u = last_update(b, t);
  const int64_t k = floor_div(u - b.phase_ns, config_.update_period_ns);
  const double v = b.gain * memory_power(mean_power(b, u - config_.average_window_ns, u)) +
                   noise(b, kind, k ^ (int64_t{1} << 40));
  out.push_back(Reading{t_mid, kind, v, call_ns});
  return {};
}

std::vector<std::pair<std::string, std::string>> SimGpu::properties() const {
  return {{"device", "SIMULATED (wattlab-sim)"},
          {"workload", config_.workload.empty() ? Workload::default_script() : config_.workload},
          {"faults", config_.faults},
          {"seed", std::to_string(config_.seed)},
          {"power_limit_w", std::to_string(config_.board_max_w)}};
}

double SimGpu::true_energy_j(int64_t a_ns, int64_t b_ns) const {
  return true_energy_j(0, a_ns, b_ns);
}

double SimGpu::true_energy_j(std::size_t domain_index, int64_t a_ns, int64_t b_ns) const {
  const Board& b = boards_.at(domain_index);
  return energy_to(b, b_ns - origin_ns_) - energy_to(b, a_ns - origin_ns_);
}

void SimGpu::start_load(std::size_t domain_index, std::string_view script, int64_t dur_ns) {
  if (domain_index >= boards_.size())
    throw UsageError("sim: no domain " + std::to_string(domain_index) + " to run a load on");
  if (dur_ns <= 0) throw UsageError("sim: a load needs a positive duration");
  Board& b = boards_[domain_index];
  const int64_t now = clock_.now_ns() - origin_ns_;
  if (!b.loads.empty() && now < b.loads.back().end_ns)
    throw UsageError("sim: a load is already running on " + domains_[domain_index].id);
  b.loads.push_back({std::make_shared<const Workload>(Workload::parse(script, config_.idle_w, config_.board_max_w)),
                     now, now + dur_ns});
}

const SimGpu::Load* SimGpu::load_at(const Board& b, int64_t t) const {
  for (const auto& l : b.loads)
    if (t >= l.begin_ns && t < l.end_ns) return &l;
  return nullptr;
}

// The workload's energy, with each load's interval replaced by the load's own energy.
double SimGpu::energy_to(const Board& b, int64_t t) const {
  t = std::max<int64_t>(t, 0);
  double e = workload_.energy_j(t);
  for (const auto& l : b.loads) {
    const int64_t s = std::max<int64_t>(l.begin_ns, 0);
    const int64_t end = std::min(t, l.end_ns);
    if (end <= s) break;
    e += l.script->energy_j(s - l.begin_ns, end - l.begin_ns) - workload_.energy_j(s, end);
  }
  return e;
}

int64_t SimGpu::capped_ns(const Board& b, int64_t t) const {
  t = std::max<int64_t>(t, 0);
  int64_t c = workload_.capped_ns(t);
  for (const auto& l : b.loads) {
    const int64_t s = std::max<int64_t>(l.begin_ns, 0);
    const int64_t end = std::min(t, l.end_ns);
    if (end <= s) break;
    c += l.script->capped_ns(end - l.begin_ns) - l.script->capped_ns(s - l.begin_ns) -
         (workload_.capped_ns(end) - workload_.capped_ns(s));
  }
  return c;
}

const Segment& SimGpu::segment_at(const Board& b, int64_t t) const {
  if (const Load* l = load_at(b, t)) return l->script->segment_at(t - l->begin_ns);
  return workload_.segment_at(t);
}

bool SimGpu::capped_at(const Board& b, int64_t t) const {
  if (const Load* l = load_at(b, t)) return l->script->capped_at(t - l->begin_ns);
  return workload_.capped_at(t);
}

double SimGpu::uncapped_power_w(const Board& b, int64_t t) const {
  if (const Load* l = load_at(b, t)) return l->script->uncapped_power_w(t - l->begin_ns);
  return workload_.uncapped_power_w(t);
}

double SimGpu::mean_power(const Board& b, int64_t a_ns, int64_t b_ns) const {
  // Before the workload began the board idled.
  const double before = static_cast<double>(std::max<int64_t>(0, std::min<int64_t>(b_ns, 0) - a_ns)) * 1e-9 * config_.idle_w;
  const double e = before + energy_to(b, b_ns) - energy_to(b, a_ns);
  return e / (static_cast<double>(b_ns - a_ns) * 1e-9);
}

double SimGpu::noise(const Board& b, ReadingKind kind, int64_t k) const {
  if (config_.noise_w <= 0) return 0;
  // Sum of four uniforms: close enough to a normal, and bounded.
  uint64_t h = splitmix64(b.seed ^ (static_cast<uint64_t>(kind) << 56) ^ static_cast<uint64_t>(k));
  double s = 0;
  for (int i = 0; i < 4; ++i) {
    s += unit_uniform(h) - 0.5;
    h = splitmix64(h);
  }
  return s * std::sqrt(3.0) * config_.noise_w;  // variance of the sum is 4/12
}

int64_t SimGpu::last_update(const Board& b, int64_t t_sim_ns) const {
  const int64_t T = config_.update_period_ns;
  return floor_div(t_sim_ns - b.phase_ns, T) * T + b.phase_ns;
}

int64_t SimGpu::read_cost_ns(ReadingKind kind) const {
  if (!config_.read_costs) return 0;
  switch (kind) {
    case ReadingKind::energy_counter_j: return kCounterCostNs;
    case ReadingKind::power_instant_w: return kInstantCostNs;
    case ReadingKind::power_average_w: return kAverageCostNs;
    case ReadingKind::power_sample_w: return kSamplesCostNs;
    case ReadingKind::gpm_sm_activity_pct: return kGpmSampleCostNs;
    case ReadingKind::gpm_sm_occupancy_pct:
    case ReadingKind::gpm_tensor_activity_pct:
    case ReadingKind::gpm_dram_bw_pct: return kGpmCompanionCostNs;
    default: return kTelemetryCostNs;
  }
}

double SimGpu::value_at(const Board& b, ReadingKind kind, int64_t t) const {
  const int64_t u = last_update(b, t);
  const int64_t k = floor_div(u - b.phase_ns, config_.update_period_ns);
  const Segment& seg = segment_at(b, u);
  switch (kind) {
    case ReadingKind::energy_counter_j: {
      const int64_t reset = faults_.last_reset_before(u);
      // The counter counts since the driver loaded; a reset restarts it from 0.
      const double origin_j = reset >= 0 ? energy_to(b, reset) : -1000.0;  // 1 kJ before open
      const double e = b.gain * (energy_to(b, u) - origin_j);
      return std::floor(e * 1e3) * 1e-3;
    }
    case ReadingKind::power_instant_w:
      return b.gain * mean_power(b, u - config_.instant_window_ns, u) + noise(b, kind, k);
    case ReadingKind::power_average_w:
      return b.gain * mean_power(b, u - config_.average_window_ns, u) + noise(b, kind, k);
    case ReadingKind::sm_clock_mhz: {
      if (seg.activity <= 0) return 345;
      if (!capped_at(b, u)) return 1980;
      return std::max(990.0, 1980.0 * seg.cap_w / uncapped_power_w(b, u));
    }
    case ReadingKind::mem_clock_mhz: return 3201;
    case ReadingKind::temperature_c: {
      const int64_t a = std::max<int64_t>(0, u - 30 * kNsPerS);
      const double p = u > a ? (energy_to(b, u) - energy_to(b, a)) / (static_cast<double>(u - a) * 1e-9) : config_.idle_w;
      return 28.0 + 0.07 * p;
    }
    case ReadingKind::utilization_gpu_pct: return seg.activity > 0 ? 100 : 0;
    case ReadingKind::clock_event_reasons:
      return capped_at(b, u) ? static_cast<double>(kClockEventSwPowerCap) : (seg.activity > 0 ? 0 : 0x1);
    case ReadingKind::power_violation_ns: return static_cast<double>(capped_ns(b, u));
    case ReadingKind::power_limit_w: return seg.cap_w > 0 ? seg.cap_w : config_.board_max_w;
    case ReadingKind::memory_used_bytes: return seg.activity > 0 ? 40.0 * (1ull << 30) : 0.5 * (1ull << 30);
    case ReadingKind::gpm_sm_activity_pct: return 100 * seg.activity;
    case ReadingKind::gpm_sm_occupancy_pct: return 14 * seg.activity;
    case ReadingKind::gpm_tensor_activity_pct: return seg.tensor ? 98 * seg.activity : 0;
    case ReadingKind::gpm_dram_bw_pct: return seg.activity > 0 ? 16 : 0;
    default: return 0;
  }
}

Status SimGpu::read(std::size_t domain_index, ReadingKind kind, std::vector<Reading>& out) {
  if (domain_index >= domains_.size())
    return Error{ErrorKind::invalid_argument, "sim: no domain " + std::to_string(domain_index)};
  const Domain& d = domains_[domain_index];
  if (!d.model.supports(kind))
    return Error{ErrorKind::not_supported, "sim: " + d.id + " has no " + std::string(to_string(kind))};
  if (domain_index >= boards_.size()) return read_memory(boards_[domain_index - boards_.size()], d, kind, out);
  Board& b = boards_[domain_index];
  const int64_t cost = read_cost_ns(kind);
  int64_t t_mid = 0, t = 0, call_ns = 0;  // t: sim time
  if (Status st = begin_read(d, kind, t_mid, t, call_ns); !st.ok()) return st;
  const Faults::Span* stuck = Faults::find(faults_.stuck, kind, t);
  const bool garbage = Faults::find(faults_.garbage, kind, t) != nullptr;
  if (kind == ReadingKind::power_sample_w) {
    // Every sample newer than the last one handed out, up to the buffer's depth.
    const int64_t S = config_.sample_spacing_ns;
    const int64_t newest = floor_div(t - b.sample_phase_ns, S) * S + b.sample_phase_ns;
    int64_t first = newest - static_cast<int64_t>(config_.sample_buffer_depth - 1) * S;
    if (b.last_sample_ns >= 0) first = std::max(first, b.last_sample_ns + S);
    for (int64_t s = first; s <= newest; s += S) {
      const int64_t j = floor_div(s - b.sample_phase_ns, S);
      if (config_.sample_miss_fraction > 0 &&
          unit_uniform(splitmix64(b.seed ^ 0x5a5a5a5aULL ^ static_cast<uint64_t>(j))) < config_.sample_miss_fraction)
        continue;  // the driver skipped this sample
      // A stuck buffer repeats the sample it held at the fault's start; a garbage one returns nonsense.
      const int64_t at = stuck && s >= stuck->from_ns ? stuck->from_ns : s;
      const int64_t j_at = floor_div(at - b.sample_phase_ns, S);
      const double v = garbage ? garbage_value(kind, b.garbage_reads++)
                               : b.gain * mean_power(b, at - config_.sample_window_ns, at) + noise(b, kind, j_at);
      out.push_back(Reading{s + origin_ns_, kind, v, cost});
    }
    if (newest >= first) b.last_sample_ns = newest;
    return {};
  }
  const double v = garbage ? garbage_value(kind, b.garbage_reads++) : value_at(b, kind, stuck ? stuck->from_ns : t);
  out.push_back(Reading{t_mid, kind, v, call_ns});
  return {};
}

Status SimGpu::begin_read(const Domain& d, ReadingKind kind, int64_t& t_mid_ns, int64_t& t_value_ns, int64_t& call_ns) {
  const int64_t t0 = clock_.now_ns();
  const int64_t cost = read_cost_ns(kind);
  // A latency spike blocks the call before it reads: the value is taken late, while the call's
  // midpoint, all a caller can see, sits half the delay earlier.
  const int64_t slow = faults_.slow_ns(kind, t0 - origin_ns_);
  clock_.spend_ns(slow + cost);
  call_ns = slow + cost;
  t_mid_ns = t0 + (slow + cost) / 2;
  t_value_ns = t0 + slow + cost / 2 - origin_ns_;
  const int64_t t = t_value_ns;
  if (faults_.lost(t))
    return Error{ErrorKind::device_lost, "sim: " + d.id + " is lost (scripted gpu-lost fault)",
                 "the GPU fell off the bus; measurements after this point are missing", 15};
  if (faults_.unsupported_at(kind, t))
    return Error{ErrorKind::not_supported, "sim: " + d.id + " no longer supports " + std::string(to_string(kind)) +
                 " (scripted unsupported fault)"};
  if (faults_.read_fails(kind, t))
    return Error{ErrorKind::unavailable, "sim: reading " + std::string(to_string(kind)) + " of " + d.id +
                 " failed (scripted read-error fault)", "", 999};
  return {};
}

}  // namespace wattlab::sim

namespace wattlab::detail {

BackendLoad open_sim(const BackendOptions& options) {
  sim::SimConfig c;
  c.workload = options.sim_workload;
  c.faults = options.sim_faults;
  c.gpus = options.sim_gpus;
  c.seed = options.sim_seed;
  c.gain_error = options.sim_gain_error;
  Clock& clock = options.clock ? *options.clock : MonotonicClock::instance();
  auto gpu = std::make_unique<sim::SimGpu>(c, clock);
  BackendLoad load;
  load.status = {"sim", true,
                 std::to_string(c.gpus) + " SIMULATED GPU(s), seed " + std::to_string(c.seed) + ", workload '" +
                     (c.workload.empty() ? sim::Workload::default_script() : c.workload) + "'"};
  load.sensor = std::move(gpu);
  return load;
}

}  // namespace wattlab::detail
