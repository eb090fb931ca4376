#include "nvml/nvml_sensor.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

#include "backend.h"
#include "core/units.h"

namespace wattlab::nvml {
namespace {

constexpr int64_t kGpmMinGapNs = 100 * kNsPerMs;  // GPM needs two samples > 100 ms apart
// How far before the newest utilization sample handed out a query for new ones looks back (us): a
// process's sample can come back after a newer one of another (processes()).
constexpr int64_t kUtilLookbackUs = 2'000'000;

constexpr std::array<ReadingKind, 4> kGpmKinds{ReadingKind::gpm_sm_activity_pct, ReadingKind::gpm_sm_occupancy_pct,
                                               ReadingKind::gpm_tensor_activity_pct, ReadingKind::gpm_dram_bw_pct};
constexpr std::array<unsigned, 4> kGpmMetricIds{NVML_GPM_METRIC_SM_UTIL, NVML_GPM_METRIC_SM_OCCUPANCY,
                                                NVML_GPM_METRIC_ANY_TENSOR_UTIL, NVML_GPM_METRIC_DRAM_BW_UTIL};
constexpr std::array<const char*, 4> kGpmMetricNames{"NVML_GPM_METRIC_SM_UTIL", "NVML_GPM_METRIC_SM_OCCUPANCY",
                                                     "NVML_GPM_METRIC_ANY_TENSOR_UTIL", "NVML_GPM_METRIC_DRAM_BW_UTIL"};

int gpm_slot(ReadingKind k) {
  for (std::size_t j = 0; j < kGpmKinds.size(); ++j)
    if (kGpmKinds[j] == k) return static_cast<int>(j);
  return -1;
}

std::optional<double> value_of(nvmlValueType_t type, const nvmlValue_t& v) {
  switch (type) {
    case NVML_VALUE_TYPE_DOUBLE: return v.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT: return static_cast<double>(v.uiVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG: return static_cast<double>(v.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return static_cast<double>(v.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return static_cast<double>(v.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT: return static_cast<double>(v.siVal);
    case NVML_VALUE_TYPE_UNSIGNED_SHORT: return static_cast<double>(v.usVal);
    default: return std::nullopt;
  }
}

const char* arch_name(unsigned a) {
  switch (a) {
    case 2: return "Kepler";
    case 3: return "Maxwell";
    case 4: return "Pascal";
    case 5: return "Volta";
    case 6: return "Turing";
    case 7: return "Ampere";
    case 8: return "Ada";
    case 9: return "Hopper";
    case 10: return "Blackwell";
    default: return "unknown";
  }
}

std::string watts(unsigned mw) {
  std::string s = std::to_string(mw / 1000);
  if (mw % 1000) {
    std::string frac = std::to_string(1000 + mw % 1000).substr(1);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    s += "." + frac;
  }
  return s;
}

Error missing_fn(const Library& lib, const std::string& fn, const std::string& domain) {
  return Error{ErrorKind::not_supported, fn + "(" + domain + "): the function is missing from " + lib.path(),
               "the driver is older than this call: update the NVIDIA driver", NVML_ERROR_FUNCTION_NOT_FOUND};
}

}  // namespace

struct NvmlSensor::Gpu {
  unsigned index = 0;
  nvmlDevice_t handle = nullptr;
  std::string id, mem_id;
  GpuIdentity identity;
  std::optional<unsigned> arch, mig_current, mig_pending;
  std::optional<bool> persistence, ecc_current, ecc_pending;
  std::optional<unsigned> limit_min_mw, limit_max_mw, limit_default_mw, limit_enforced_mw;
  std::size_t domain = 0;

  enum class PowerSource { none, field, power_usage };
  PowerSource instant = PowerSource::none, average = PowerSource::none;
  bool mem_instant = false, mem_average = false;
  std::string power_usage_note;

  unsigned long long last_sample_us = 0;  // newest power sample seen (us since the epoch)
  // Per process, the newest utilization sample handed out (us since the epoch), so that each
  // sample comes back from processes() once; and the newest of all (0: no query yet). Guarded by
  // util_mu: processes() may run on any thread.
  std::mutex util_mu;
  std::map<unsigned, unsigned long long> util_last_us;
  unsigned long long util_newest_us = 0;

  bool gpm = false;
  std::string gpm_why_not;
  std::array<nvmlGpmSample_t, 2> gpm_samples{};
  int gpm_prev = -1;
  int64_t gpm_prev_end_ns = 0;
  std::array<double, 4> gpm_values{};
  std::array<nvmlReturn_t, 4> gpm_rc{};
  uint64_t gpm_gen = 0;
  std::array<uint64_t, 4> gpm_served{};
  int64_t gpm_t_ns = 0, gpm_dur_ns = 0;
  std::unique_ptr<nvmlGpmMetricsGet_t> gpm_request;

  // Set once, by the sampler, when the GPU is lost: reads stop calling NVML. `lost_flag` publishes
  // `lost` to processes(), which may run on another thread.
  std::optional<Error> lost;
  std::atomic<bool> lost_flag{false};
};

NvmlSensor::~NvmlSensor() {
  if (!lib_) return;
  const Api& api = lib_->api();
  for (auto& g : gpus_)
    for (auto s : g->gpm_samples)
      if (s && api.gpm_sample_free) api.gpm_sample_free(s);
}

int64_t NvmlSensor::epoch_offset_ns() const {
  const int64_t m0 = clock_->now_ns();
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  const int64_t m1 = clock_->now_ns();
  const int64_t real_ns = static_cast<int64_t>(ts.tv_sec) * kNsPerS + ts.tv_nsec;
  return real_ns - (m0 + (m1 - m0) / 2);
}

namespace {
// Times one NVML call on `clock`: the reading's timestamp is the call's midpoint.
struct Timed {
  int64_t t_ns = 0, dur_ns = 0;
  template <class F>
  nvmlReturn_t run(Clock& clock, F&& f) {
    const int64_t t0 = clock.now_ns();
    const nvmlReturn_t rc = f();
    const int64_t t1 = clock.now_ns();
    t_ns = t0 + (t1 - t0) / 2;
    dur_ns = t1 - t0;
    return rc;
  }
  Reading reading(ReadingKind kind, double value, int64_t sensor_t_ns = 0) const {
    Reading r;
    r.t_ns = t_ns;
    r.kind = kind;
    r.value = value;
    r.read_dur_ns = dur_ns;
    r.sensor_t_ns = sensor_t_ns;
    return r;
  }
};
}  // namespace

// ---- reads ---------------------------------------------------------------------------------

Status NvmlSensor::read(std::size_t domain_index, ReadingKind kind, std::vector<Reading>& out) {
  if (domain_index >= domains_.size())
    return Error{ErrorKind::invalid_argument,
                 "nvml read: domain index " + std::to_string(domain_index) + " is out of range (" +
                     std::to_string(domains_.size()) + " domains)",
                 "this is a wattlab bug: please report it", 0};
  const Domain& d = domains_[domain_index];
  if (!d.model.supports(kind)) {
    std::string why;
    for (const auto& u : unsupported_)
      if (u.domain_id == d.id && u.kind == kind) why = ": " + u.error.message();
    return Error{ErrorKind::not_supported,
                 "nvml read: " + d.id + " has no reading " + std::string(to_string(kind)) + " (probed at open" + why + ")",
                 "ask the domain's sensor model which readings it has", 0};
  }
  Gpu& g = *gpus_[refs_[domain_index].gpu];
  if (g.lost) return *g.lost;
  Status st = read_gpu(g, refs_[domain_index].memory, kind, out);
  if (!st.ok() && st.error().kind == ErrorKind::device_lost) {
    g.lost = st.error();
    g.lost_flag.store(true, std::memory_order_release);
  }
  return st;
}

Status NvmlSensor::read_power_field(Gpu& g, unsigned field, unsigned scope, ReadingKind kind,
                                    std::vector<Reading>& out) {
  const Api& api = lib_->api();
  const std::string& dom = scope == NVML_POWER_SCOPE_MEMORY ? g.mem_id : g.id;
  if (!api.device_get_field_values) return missing_fn(*lib_, "nvmlDeviceGetFieldValues", dom);
  nvmlFieldValue_t fv{};
  fv.fieldId = field;
  fv.scopeId = scope;
  Timed t;
  const int64_t offset = epoch_offset_ns();
  nvmlReturn_t rc = t.run(*clock_, [&] { return api.device_get_field_values(g.handle, 1, &fv); });
  const std::string call = "nvmlDeviceGetFieldValues[field " + std::to_string(field) + " scope " + std::to_string(scope) + "]";
  if (rc == NVML_SUCCESS) rc = fv.nvmlReturn;
  if (rc != NVML_SUCCESS) return lib_->error(call, rc, dom);
  const auto v = value_of(fv.valueType, fv.value);
  if (!v)
    return Error{ErrorKind::parse, call + "(" + dom + ") returned value type " + std::to_string(fv.valueType),
                 "this is a wattlab bug or a newer driver: please report it", 0};
  const int64_t sensor_t = fv.timestamp > 0 ? fv.timestamp * kNsPerUs - offset : 0;
  out.push_back(t.reading(kind, field == NVML_FI_DEV_MEMORY_TEMP ? *v : mw_to_w(*v), sensor_t));
  return {};
}

Status NvmlSensor::read_samples(Gpu& g, std::vector<Reading>& out) {
  const Api& api = lib_->api();
  if (!api.device_get_samples) return missing_fn(*lib_, "nvmlDeviceGetSamples", g.id);
  nvmlValueType_t vt = 0;
  unsigned count = 0;
  Timed t;
  nvmlReturn_t rc = t.run(*clock_, [&] {
    return api.device_get_samples(g.handle, NVML_TOTAL_POWER_SAMPLES, g.last_sample_us, &vt, &count, nullptr);
  });
  if (rc == NVML_ERROR_NOT_FOUND) return {};  // no sample newer than the last one seen
  if (rc != NVML_SUCCESS && rc != NVML_ERROR_INSUFFICIENT_SIZE)
    return lib_->error("nvmlDeviceGetSamples[NVML_TOTAL_POWER_SAMPLES]", rc, g.id);
  if (count == 0) return {};
  std::vector<nvmlSample_t> buf(count);
  const int64_t offset = epoch_offset_ns();
  rc = t.run(*clock_, [&] {
    return api.device_get_samples(g.handle, NVML_TOTAL_POWER_SAMPLES, g.last_sample_us, &vt, &count, buf.data());
  });
  if (rc == NVML_ERROR_NOT_FOUND) return {};
  if (rc != NVML_SUCCESS) return lib_->error("nvmlDeviceGetSamples[NVML_TOTAL_POWER_SAMPLES]", rc, g.id);
  buf.resize(std::min<std::size_t>(count, buf.size()));
  std::sort(buf.begin(), buf.end(), [](const nvmlSample_t& a, const nvmlSample_t& b) { return a.timeStamp < b.timeStamp; });
  unsigned long long newest = g.last_sample_us;
  for (const auto& s : buf) {
    if (s.timeStamp <= newest) continue;  // dedup: the driver may hand back the last one seen
    const auto v = value_of(vt, s.sampleValue);
    if (!v) continue;
    newest = s.timeStamp;
    const int64_t mono = static_cast<int64_t>(s.timeStamp) * kNsPerUs - offset;
    Reading r;
    r.t_ns = mono;  // each sample keeps its own time, mapped onto our clock
    r.kind = ReadingKind::power_sample_w;
    r.value = mw_to_w(*v);
    r.read_dur_ns = 0;
    r.sensor_t_ns = mono;
    out.push_back(r);
  }
  g.last_sample_us = newest;
  return {};
}

Status NvmlSensor::read_gpm(Gpu& g, ReadingKind kind, std::vector<Reading>& out) {
  const Api& api = lib_->api();
  const int j = gpm_slot(kind);
  if (!g.gpm || j < 0)
    return Error{ErrorKind::not_supported, "GPM (" + g.id + "): " + g.gpm_why_not, "GPM needs Hopper or newer", 0};
  const auto sj = static_cast<std::size_t>(j);
  if (g.gpm_gen <= g.gpm_served[sj]) {
    // Nothing computed since this kind was last served: take a new sample if the gap allows.
    const int64_t now = clock_->now_ns();
    if (g.gpm_prev < 0 || now - g.gpm_prev_end_ns <= kGpmMinGapNs) {
      if (g.gpm_prev < 0) {
        Timed t;
        const nvmlReturn_t rc = t.run(*clock_, [&] { return api.gpm_sample_get(g.handle, g.gpm_samples[0]); });
        if (rc != NVML_SUCCESS) return lib_->error("nvmlGpmSampleGet", rc, g.id);
        g.gpm_prev = 0;
        g.gpm_prev_end_ns = t.t_ns + t.dur_ns / 2;
      }
      return {};  // the two samples must be > 100 ms apart: nothing new yet
    }
    const int cur = 1 - g.gpm_prev;
    Timed t;
    nvmlReturn_t rc = t.run(*clock_, [&] { return api.gpm_sample_get(g.handle, g.gpm_samples[static_cast<std::size_t>(cur)]); });
    if (rc != NVML_SUCCESS) return lib_->error("nvmlGpmSampleGet", rc, g.id);
    nvmlGpmMetricsGet_t& mg = *g.gpm_request;
    mg = nvmlGpmMetricsGet_t{};
    mg.version = NVML_GPM_METRICS_GET_VERSION;
    mg.numMetrics = static_cast<unsigned>(kGpmMetricIds.size());
    mg.sample1 = g.gpm_samples[static_cast<std::size_t>(g.gpm_prev)];
    mg.sample2 = g.gpm_samples[static_cast<std::size_t>(cur)];
    for (std::size_t k = 0; k < kGpmMetricIds.size(); ++k) mg.metrics[k].metricId = kGpmMetricIds[k];
    g.gpm_prev = cur;
    g.gpm_prev_end_ns = t.t_ns + t.dur_ns / 2;
    rc = api.gpm_metrics_get(&mg);
    if (rc != NVML_SUCCESS) return lib_->error("nvmlGpmMetricsGet", rc, g.id);
    for (std::size_t k = 0; k < kGpmMetricIds.size(); ++k) {
      g.gpm_rc[k] = mg.metrics[k].nvmlReturn;
      g.gpm_values[k] = mg.metrics[k].value;
    }
    ++g.gpm_gen;
    g.gpm_t_ns = t.t_ns;
    g.gpm_dur_ns = t.dur_ns;
  }
  g.gpm_served[sj] = g.gpm_gen;
  if (g.gpm_rc[sj] != NVML_SUCCESS)
    return lib_->error(std::string("nvmlGpmMetricsGet[") + kGpmMetricNames[sj] + "]", g.gpm_rc[sj], g.id);
  Reading r;
  r.t_ns = g.gpm_t_ns;
  r.kind = kind;
  r.value = g.gpm_values[sj];
  r.read_dur_ns = g.gpm_dur_ns;
  out.push_back(r);
  return {};
}

Status NvmlSensor::read_gpu(Gpu& g, bool memory_scope, ReadingKind kind, std::vector<Reading>& out) {
  const Api& api = lib_->api();
  Timed t;
  using K = ReadingKind;
  auto uint_call = [&](auto fn, const char* name, auto&& call, double scale, K k) -> Status {
    if (!fn) return missing_fn(*lib_, name, g.id);
    unsigned v = 0;
    const nvmlReturn_t rc = t.run(*clock_, [&] { return call(v); });
    if (rc != NVML_SUCCESS) return lib_->error(name, rc, g.id);
    out.push_back(t.reading(k, static_cast<double>(v) * scale));
    return {};
  };
  if (memory_scope) {
    if (kind == K::power_average_w)
      return read_power_field(g, NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_MEMORY, kind, out);
    if (kind == K::power_instant_w)
      return read_power_field(g, NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_MEMORY, kind, out);
    return Error{ErrorKind::not_supported, g.mem_id + " has only power readings", {}, 0};
  }
  switch (kind) {
    case K::energy_counter_j: {
      if (!api.device_get_total_energy_consumption)
        return missing_fn(*lib_, "nvmlDeviceGetTotalEnergyConsumption", g.id);
      unsigned long long mj = 0;
      const nvmlReturn_t rc = t.run(*clock_, [&] { return api.device_get_total_energy_consumption(g.handle, &mj); });
      if (rc != NVML_SUCCESS) return lib_->error("nvmlDeviceGetTotalEnergyConsumption", rc, g.id);
      out.push_back(t.reading(kind, mj_to_j(static_cast<double>(mj))));
      return {};
    }
    case K::power_instant_w:
    case K::power_average_w: {
      const auto src = kind == K::power_instant_w ? g.instant : g.average;
      if (src == Gpu::PowerSource::power_usage)
        return uint_call(api.device_get_power_usage, "nvmlDeviceGetPowerUsage",
                         [&](unsigned& v) { return api.device_get_power_usage(g.handle, &v); }, 1e-3, kind);
      return read_power_field(g, kind == K::power_instant_w ? NVML_FI_DEV_POWER_INSTANT : NVML_FI_DEV_POWER_AVERAGE,
                              NVML_POWER_SCOPE_GPU, kind, out);
    }
    case K::power_sample_w: return read_samples(g, out);
    case K::sm_clock_mhz:
    case K::mem_clock_mhz: {
      const nvmlClockType_t type = kind == K::sm_clock_mhz ? NVML_CLOCK_SM : NVML_CLOCK_MEM;
      return uint_call(api.device_get_clock_info, kind == K::sm_clock_mhz ? "nvmlDeviceGetClockInfo[NVML_CLOCK_SM]"
                                                                          : "nvmlDeviceGetClockInfo[NVML_CLOCK_MEM]",
                       [&](unsigned& v) { return api.device_get_clock_info(g.handle, type, &v); }, 1.0, kind);
    }
    case K::temperature_c:
      return uint_call(api.device_get_temperature, "nvmlDeviceGetTemperature[NVML_TEMPERATURE_GPU]",
                       [&](unsigned& v) { return api.device_get_temperature(g.handle, NVML_TEMPERATURE_GPU, &v); },
                       1.0, kind);
    case K::mem_temperature_c: return read_power_field(g, NVML_FI_DEV_MEMORY_TEMP, 0, kind, out);
    case K::utilization_gpu_pct:
    case K::utilization_mem_pct: {
      if (!api.device_get_utilization_rates) return missing_fn(*lib_, "nvmlDeviceGetUtilizationRates", g.id);
      nvmlUtilization_t u{};
      const nvmlReturn_t rc = t.run(*clock_, [&] { return api.device_get_utilization_rates(g.handle, &u); });
      if (rc != NVML_SUCCESS) return lib_->error("nvmlDeviceGetUtilizationRates", rc, g.id);
      out.push_back(t.reading(kind, static_cast<double>(kind == K::utilization_gpu_pct ? u.gpu : u.memory)));
      return {};
    }
    case K::clock_event_reasons: {
      const std::string name = lib_->name_of("nvmlDeviceGetCurrentClocksEventReasons");
      if (!api.device_get_clocks_event_reasons) return missing_fn(*lib_, name, g.id);
      unsigned long long bits = 0;
      const nvmlReturn_t rc = t.run(*clock_, [&] { return api.device_get_clocks_event_reasons(g.handle, &bits); });
      if (rc != NVML_SUCCESS) return lib_->error(name, rc, g.id);
      out.push_back(t.reading(kind, static_cast<double>(bits)));
      return {};
    }
    case K::power_violation_ns:
    case K::thermal_violation_ns: {
      const bool power = kind == K::power_violation_ns;
      const char* name = power ? "nvmlDeviceGetViolationStatus[NVML_PERF_POLICY_POWER]"
                               : "nvmlDeviceGetViolationStatus[NVML_PERF_POLICY_THERMAL]";
      if (!api.device_get_violation_status) return missing_fn(*lib_, name, g.id);
      nvmlViolationTime_t vt{};
      const int64_t offset = epoch_offset_ns();
      const nvmlReturn_t rc = t.run(*clock_, [&] {
        return api.device_get_violation_status(g.handle, power ? NVML_PERF_POLICY_POWER : NVML_PERF_POLICY_THERMAL, &vt);
      });
      if (rc != NVML_SUCCESS) return lib_->error(name, rc, g.id);
      const int64_t sensor_t = vt.referenceTime ? static_cast<int64_t>(vt.referenceTime) * kNsPerUs - offset : 0;
      out.push_back(t.reading(kind, static_cast<double>(vt.violationTime), sensor_t));
      return {};
    }
    case K::power_limit_w:
      return uint_call(api.device_get_enforced_power_limit, "nvmlDeviceGetEnforcedPowerLimit",
                       [&](unsigned& v) { return api.device_get_enforced_power_limit(g.handle, &v); }, 1e-3, kind);
    case K::memory_used_bytes: {
      if (api.device_get_memory_info_v2) {
        nvmlMemory_v2_t m{};
        m.version = nvmlMemory_v2;
        const nvmlReturn_t rc = t.run(*clock_, [&] { return api.device_get_memory_info_v2(g.handle, &m); });
        if (rc == NVML_SUCCESS) {
          out.push_back(t.reading(kind, static_cast<double>(m.used)));
          return {};
        }
        if (rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH && rc != NVML_ERROR_NOT_SUPPORTED)
          return lib_->error("nvmlDeviceGetMemoryInfo_v2", rc, g.id);
      }
      if (!api.device_get_memory_info) return missing_fn(*lib_, "nvmlDeviceGetMemoryInfo", g.id);
      nvmlMemory_t m{};
      const nvmlReturn_t rc = t.run(*clock_, [&] { return api.device_get_memory_info(g.handle, &m); });
      if (rc != NVML_SUCCESS) return lib_->error("nvmlDeviceGetMemoryInfo", rc, g.id);
      out.push_back(t.reading(kind, static_cast<double>(m.used)));
      return {};
    }
    case K::gpm_sm_activity_pct:
    case K::gpm_sm_occupancy_pct:
    case K::gpm_tensor_activity_pct:
    case K::gpm_dram_bw_pct: return read_gpm(g, kind, out);
    case K::kCount: break;
  }
  return Error{ErrorKind::internal, "nvml read: unknown reading kind", {}, 0};
}

// ---- sensor model --------------------------------------------------------------------------

namespace {

ReadingModel make_model(ReadingKind kind, int64_t update_ns, int64_t window_ns, double resolution, int64_t cost_ns,
                        std::string note, int64_t max_safe_ns = 0) {
  ReadingModel m;
  m.kind = kind;
  m.update_period_ns = update_ns;
  m.averaging_window_ns = window_ns;
  m.resolution = resolution;
  m.read_cost_ns = cost_ns;
  m.max_safe_interval_ns = max_safe_ns;
  m.note = std::move(note);
  return m;
}

constexpr int64_t us(double v) { return static_cast<int64_t>(v * 1000.0); }

}  // namespace

// ---- open ----------------------------------------------------------------------------------

void NvmlSensor::probe(Gpu& g) {
  const Api& api = lib_->api();
  using K = ReadingKind;
  auto reject = [&](const std::string& dom, K k, Error e) { unsupported_.push_back({dom, k, std::move(e)}); };

  // Power fields: instant and average, GPU and memory scope, in one call; each field has its own status.
  std::optional<Error> fields_err[4];
  if (api.device_get_field_values) {
    nvmlFieldValue_t fv[4]{};
    const unsigned ids[4] = {NVML_FI_DEV_POWER_INSTANT, NVML_FI_DEV_POWER_AVERAGE, NVML_FI_DEV_POWER_INSTANT,
                             NVML_FI_DEV_POWER_AVERAGE};
    const unsigned scopes[4] = {NVML_POWER_SCOPE_GPU, NVML_POWER_SCOPE_GPU, NVML_POWER_SCOPE_MEMORY,
                                NVML_POWER_SCOPE_MEMORY};
    for (int k = 0; k < 4; ++k) {
      fv[k].fieldId = ids[k];
      fv[k].scopeId = scopes[k];
    }
    const nvmlReturn_t rc = api.device_get_field_values(g.handle, 4, fv);
    for (int k = 0; k < 4; ++k) {
      const nvmlReturn_t r = rc != NVML_SUCCESS ? rc : fv[k].nvmlReturn;
      if (r != NVML_SUCCESS)
        fields_err[k] = lib_->error("nvmlDeviceGetFieldValues[field " + std::to_string(ids[k]) + " scope " +
                                        std::to_string(scopes[k]) + "]",
                                    r, k < 2 ? g.id : g.mem_id);
    }
  } else {
    for (auto& e : fields_err) e = missing_fn(*lib_, "nvmlDeviceGetFieldValues", g.id);
  }
  if (!fields_err[0]) g.instant = Gpu::PowerSource::field;
  if (!fields_err[1]) g.average = Gpu::PowerSource::field;
  g.mem_instant = !fields_err[2];
  g.mem_average = !fields_err[3];
  if (g.instant == Gpu::PowerSource::none || g.average == Gpu::PowerSource::none) {
    // nvmlDeviceGetPowerUsage: a 1 s average on Ampere and later except GA100 (A100, A30);
    // instantaneous on GA100 and earlier. Used only for the reading it really is.
    unsigned mw = 0;
    if (api.device_get_power_usage && api.device_get_power_usage(g.handle, &mw) == NVML_SUCCESS) {
      const bool ga100 = g.identity.name.find("A100") != std::string::npos ||
                         g.identity.name.find("A30") != std::string::npos;
      const bool averaged = g.arch && *g.arch >= NVML_DEVICE_ARCH_AMPERE && !ga100;
      auto& slot = averaged ? g.average : g.instant;
      if (slot == Gpu::PowerSource::none) {
        slot = Gpu::PowerSource::power_usage;
        g.power_usage_note = averaged ? "nvmlDeviceGetPowerUsage (a 1 s average on this architecture)"
                                      : "nvmlDeviceGetPowerUsage (instantaneous on this architecture)";
      }
    }
  }
  if (g.instant == Gpu::PowerSource::none) reject(g.id, K::power_instant_w, *fields_err[0]);
  if (g.average == Gpu::PowerSource::none) reject(g.id, K::power_average_w, *fields_err[1]);
  if (!g.mem_instant) reject(g.mem_id, K::power_instant_w, *fields_err[2]);
  if (!g.mem_average) reject(g.mem_id, K::power_average_w, *fields_err[3]);

  // GPM: supported device, two sample buffers, the first sample now.
  if (!api.gpm_query_device_support || !api.gpm_sample_alloc || !api.gpm_sample_free || !api.gpm_sample_get ||
      !api.gpm_metrics_get) {
    g.gpm_why_not = "the GPM functions are missing from " + lib_->path() + " (driver older than 520)";
  } else {
    nvmlGpmSupport_t sup{};
    sup.version = NVML_GPM_SUPPORT_VERSION;
    const nvmlReturn_t rc = api.gpm_query_device_support(g.handle, &sup);
    if (rc != NVML_SUCCESS) {
      g.gpm_why_not = lib_->error("nvmlGpmQueryDeviceSupport", rc, g.id).message();
    } else if (!sup.isSupportedDevice) {
      g.gpm_why_not = "nvmlGpmQueryDeviceSupport says this GPU has no GPM (Hopper and later only)";
    } else {
      nvmlReturn_t r = NVML_SUCCESS;
      for (auto& s : g.gpm_samples)
        if (r == NVML_SUCCESS) r = api.gpm_sample_alloc(&s);
      if (r != NVML_SUCCESS) {
        g.gpm_why_not = lib_->error("nvmlGpmSampleAlloc", r, g.id).message();
      } else {
        g.gpm_request = std::make_unique<nvmlGpmMetricsGet_t>();
        g.gpm = true;
        std::vector<Reading> scratch;
        Status st = read_gpm(g, K::gpm_sm_activity_pct, scratch);  // takes the first sample
        if (!st.ok()) {
          g.gpm = false;
          g.gpm_why_not = st.error().message();
          if (st.error().kind == ErrorKind::no_permission)
            g.gpm_why_not += " (profiling counters may be admin-only: NVreg_RestrictProfilingToAdminUsers)";
        }
      }
    }
  }
  if (!g.gpm)
    for (K k : kGpmKinds)
      reject(g.id, k, Error{ErrorKind::not_supported, "GPM (" + g.id + "): " + g.gpm_why_not, {}, 0});

  // Everything else: one real read each. The sample buffer read also sets the last timestamp seen,
  // so the first sampler read returns only samples newer than open().
  for (K k : {K::energy_counter_j, K::power_sample_w, K::sm_clock_mhz, K::mem_clock_mhz, K::temperature_c,
              K::mem_temperature_c, K::utilization_gpu_pct, K::utilization_mem_pct, K::clock_event_reasons,
              K::power_violation_ns, K::thermal_violation_ns, K::power_limit_w, K::memory_used_bytes}) {
    std::vector<Reading> scratch;
    Status st = read_gpu(g, false, k, scratch);
    if (!st.ok()) reject(g.id, k, st.error());
  }
}

namespace {
bool rejected(const std::vector<NvmlSensor::Unsupported>& u, const std::string& dom, ReadingKind k) {
  for (const auto& x : u)
    if (x.domain_id == dom && x.kind == k) return true;
  return false;
}
}  // namespace

Result<std::unique_ptr<NvmlSensor>> NvmlSensor::open(const BackendOptions& options) {
  auto loaded = Library::open(options.nvml_library);
  if (!loaded) return loaded.error();
  std::unique_ptr<NvmlSensor> s(new NvmlSensor());
  s->lib_ = std::move(loaded.value());
  s->clock_ = options.clock ? options.clock : &MonotonicClock::instance();
  const Library& lib = *s->lib_;
  const Api& api = lib.api();
  const std::string where = "driver " + (lib.driver_version().empty() ? std::string("unknown") : lib.driver_version()) +
                            ", " + lib.path();

  unsigned n = 0;
  if (nvmlReturn_t rc = api.device_get_count(&n); rc != NVML_SUCCESS) {
    Error e = lib.error(lib.name_of("nvmlDeviceGetCount_v2"), rc);
    e.what += " (" + where + ")";
    return e;
  }
  s->device_count_ = n;
  if (n == 0)
    return Error{ErrorKind::not_found,
                 "no NVIDIA GPU: " + lib.name_of("nvmlDeviceGetCount_v2") + " reported 0 devices (" + where + ")",
                 "GPU energy is not measured here; check `nvidia-smi`, and in a container pass the GPUs "
                 "(docker --gpus all)",
                 0};

  // Identities of every GPU (for selection), with handles.
  std::map<unsigned, nvmlDevice_t> handles;
  std::optional<Error> first_handle_error;
  for (unsigned i = 0; i < n; ++i) {
    nvmlDevice_t h = nullptr;
    const nvmlReturn_t rc = api.device_get_handle_by_index(i, &h);
    if (rc != NVML_SUCCESS) {
      Error e = lib.error(lib.name_of("nvmlDeviceGetHandleByIndex_v2"), rc, "gpu:" + std::to_string(i));
      s->open_notes_.push_back("gpu:" + std::to_string(i) + " skipped: " + e.message());
      if (!first_handle_error) first_handle_error = e;
      continue;
    }
    GpuIdentity id;
    id.nvml_index = i;
    char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (api.device_get_uuid && api.device_get_uuid(h, buf, sizeof buf) == NVML_SUCCESS) id.uuid = buf;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    if (api.device_get_name && api.device_get_name(h, name, sizeof name) == NVML_SUCCESS) id.name = name;
    nvmlPciInfo_t pci{};
    if (api.device_get_pci_info && api.device_get_pci_info(h, &pci) == NVML_SUCCESS) id.pci_bus_id = pci.busId;
    unsigned cur = 0, pend = 0;
    if (api.device_get_mig_mode && api.device_get_mig_mode(h, &cur, &pend) == NVML_SUCCESS && cur == 1 &&
        api.device_get_max_mig_device_count && api.device_get_mig_device_handle_by_index) {
      unsigned max = 0;
      if (api.device_get_max_mig_device_count(h, &max) == NVML_SUCCESS)
        for (unsigned m = 0; m < max; ++m) {
          nvmlDevice_t mh = nullptr;
          char mbuf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
          if (api.device_get_mig_device_handle_by_index(h, m, &mh) == NVML_SUCCESS && api.device_get_uuid &&
              api.device_get_uuid(mh, mbuf, sizeof mbuf) == NVML_SUCCESS)
            id.mig_uuids.emplace_back(mbuf);
        }
    }
    handles[i] = h;
    s->all_gpus_.push_back(std::move(id));
  }
  if (s->all_gpus_.empty()) {
    Error e = *first_handle_error;
    e.what = "no NVIDIA GPU could be opened (" + std::to_string(n) + " present): " + e.what;
    return e;
  }

  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  const char* order = std::getenv("CUDA_DEVICE_ORDER");
  auto sel = select_gpus(s->all_gpus_, options.gpus, cvd, order);
  if (!sel) return sel.error();
  s->selection_ = std::move(sel.value());

  for (unsigned idx : s->selection_.nvml_indices) {
    auto g = std::make_unique<Gpu>();
    g->index = idx;
    g->handle = handles.at(idx);
    g->id = "gpu:" + std::to_string(idx);
    g->mem_id = g->id + "/memory";
    for (const auto& id : s->all_gpus_)
      if (id.nvml_index == idx) g->identity = id;
    nvmlDevice_t h = g->handle;
    unsigned a = 0, b = 0;
    if (api.device_get_architecture && api.device_get_architecture(h, &a) == NVML_SUCCESS) g->arch = a;
    if (api.device_get_mig_mode && api.device_get_mig_mode(h, &a, &b) == NVML_SUCCESS) {
      g->mig_current = a;
      g->mig_pending = b;
    }
    nvmlEnableState_t e1 = 0, e2 = 0;
    if (api.device_get_persistence_mode && api.device_get_persistence_mode(h, &e1) == NVML_SUCCESS)
      g->persistence = e1 == NVML_FEATURE_ENABLED;
    if (api.device_get_ecc_mode && api.device_get_ecc_mode(h, &e1, &e2) == NVML_SUCCESS) {
      g->ecc_current = e1 == NVML_FEATURE_ENABLED;
      g->ecc_pending = e2 == NVML_FEATURE_ENABLED;
    }
    if (api.device_get_power_management_limit_constraints &&
        api.device_get_power_management_limit_constraints(h, &a, &b) == NVML_SUCCESS) {
      g->limit_min_mw = a;
      g->limit_max_mw = b;
    }
    if (api.device_get_power_management_default_limit &&
        api.device_get_power_management_default_limit(h, &a) == NVML_SUCCESS)
      g->limit_default_mw = a;
    if (api.device_get_enforced_power_limit && api.device_get_enforced_power_limit(h, &a) == NVML_SUCCESS)
      g->limit_enforced_mw = a;
    s->probe(*g);

    // A GPU lost while opening is left out and said so.
    bool lost = false;
    for (const auto& u : s->unsupported_)
      if (u.domain_id == g->id && u.error.kind == ErrorKind::device_lost) lost = true;
    if (lost) {
      s->open_notes_.push_back(g->id + " lost while opening: left out");
      continue;
    }

    // Domains and their sensor models (H200 defaults, docs/sensors.md).
    using K = ReadingKind;
    Domain d;
    d.id = g->id;
    d.vendor = "NVIDIA";
    d.name = g->identity.name;
    d.uuid = g->identity.uuid;
    d.scope = "gpu";
    d.model.gain_tolerance = 0.05;
    d.model.unseen_power_w = 10.0;
    d.model.source =
        "NVML documentation and one H200 (driver 580.159.04) measurement, docs/sensors.md; "
        "`wattlab sensors --characterize` re-measures";
    auto add = [&](Domain& dom, ReadingModel m) {
      if (!rejected(s->unsupported_, dom.id, m.kind)) dom.model.readings.push_back(std::move(m));
    };
    add(d, make_model(K::energy_counter_j, 100 * kNsPerMs, 0, 1e-3, us(4200),
                      "nvmlDeviceGetTotalEnergyConsumption, mJ since driver load (resets on reload); H200: new value "
                      "every 100.2 ms (median), 4.2 ms of CPU per read under load"));
    if (g->instant == Gpu::PowerSource::field)
      add(d, make_model(K::power_instant_w, 100 * kNsPerMs, 25 * kNsPerMs, 1e-3, us(8.8),
                        "field NVML_FI_DEV_POWER_INSTANT (186), scope GPU; refreshed every 100 ms; on A100/H100 it "
                        "averages 25 ms of each 100 ms (Yang et al., SC'24), H200's window unmeasured"));
    else if (g->instant == Gpu::PowerSource::power_usage)
      add(d, make_model(K::power_instant_w, 100 * kNsPerMs, 0, 1e-3, us(1.8), g->power_usage_note));
    if (g->average == Gpu::PowerSource::field)
      add(d, make_model(K::power_average_w, 100 * kNsPerMs, kNsPerS, 1e-3, us(9.0),
                        "field NVML_FI_DEV_POWER_AVERAGE (185), scope GPU: a 1 s average refreshed every 100 ms; "
                        "lags phase edges by up to 1 s"));
    else if (g->average == Gpu::PowerSource::power_usage)
      add(d, make_model(K::power_average_w, 100 * kNsPerMs, kNsPerS, 1e-3, us(1.8), g->power_usage_note));
    add(d, make_model(K::power_sample_w, 20 * kNsPerMs, 0, 1e-3, us(503),
                      "nvmlDeviceGetSamples(NVML_TOTAL_POWER_SAMPLES): the driver's buffer, 20 ms spacing on H200, "
                      "119 samples = 2.36 s of history; each sample keeps its own timestamp; what it averages is "
                      "undocumented",
                      kNsPerS));
    add(d, make_model(K::sm_clock_mhz, 0, 0, 1, us(25.6), "nvmlDeviceGetClockInfo(NVML_CLOCK_SM)"));
    add(d, make_model(K::mem_clock_mhz, 0, 0, 1, us(25.6), "nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)"));
    add(d, make_model(K::temperature_c, 0, 0, 1, us(13.8), "nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)"));
    add(d, make_model(K::mem_temperature_c, 0, 0, 1, us(9.0), "field NVML_FI_DEV_MEMORY_TEMP (82)"));
    add(d, make_model(K::utilization_gpu_pct, 0, 0, 1, us(20.9),
                      "nvmlDeviceGetUtilizationRates.gpu: share of the last 1/6 s to 1 s (per product) with a kernel "
                      "running; not SM occupancy"));
    add(d, make_model(K::utilization_mem_pct, 0, 0, 1, us(20.9), "nvmlDeviceGetUtilizationRates.memory"));
    add(d, make_model(K::clock_event_reasons, 0, 0, 1, us(10.3),
                      s->lib_->name_of("nvmlDeviceGetCurrentClocksEventReasons") + ": bitmask, 0x4 = SW power cap"));
    add(d, make_model(K::power_violation_ns, 0, 0, 1, 0,
                      "nvmlDeviceGetViolationStatus(NVML_PERF_POLICY_POWER): cumulative ns held by the power policy"));
    add(d, make_model(K::thermal_violation_ns, 0, 0, 1, 0,
                      "nvmlDeviceGetViolationStatus(NVML_PERF_POLICY_THERMAL): cumulative ns held by the thermal "
                      "policy"));
    add(d, make_model(K::power_limit_w, 0, 0, 1e-3, 0,
                      "nvmlDeviceGetEnforcedPowerLimit: the limit after every limiter, out-of-band ones included"));
    add(d, make_model(K::memory_used_bytes, 0, 0, 1, 0,
                      api.device_get_memory_info_v2 ? "nvmlDeviceGetMemoryInfo_v2.used (reserved memory excluded)"
                                                    : "nvmlDeviceGetMemoryInfo.used"));
    for (std::size_t j = 0; j < kGpmKinds.size(); ++j) {
      // One nvmlGpmSampleGet + nvmlGpmMetricsGet (~0.2 ms on the H200 under load) computes all four:
      // the first is read on its schedule, the others right after it from what that read computed.
      ReadingModel m = make_model(kGpmKinds[j], 0, 0, 0, j == 0 ? us(200) : us(1),
                                  std::string("GPM ") + kGpmMetricNames[j] +
                                      ": average between two GPM samples > 100 ms apart, computed when a read finds "
                                      "the gap; a read sooner adds nothing");
      if (j > 0) m.read_with = kGpmKinds[0];
      add(d, std::move(m));
    }
    g->domain = s->domains_.size();
    s->refs_.push_back({s->gpus_.size(), false});
    s->domains_.push_back(std::move(d));

    if (g->mem_instant || g->mem_average) {
      Domain m;
      m.id = g->mem_id;
      m.vendor = "NVIDIA";
      m.name = g->identity.name + " memory (HBM)";
      m.uuid = g->identity.uuid;
      m.scope = "memory";
      m.parent = g->id;
      m.model.gain_tolerance = 0.05;
      m.model.source = "NVML memory power scope (2): used by nvidia-smi and Zeus, otherwise undocumented";
      if (g->mem_average)
        add(m, make_model(K::power_average_w, 100 * kNsPerMs, kNsPerS, 1e-3, us(9.0),
                          "field NVML_FI_DEV_POWER_AVERAGE (185), scope memory: HBM power, included in the board "
                          "power of " + g->id + " (never add them)"));
      if (g->mem_instant)
        add(m, make_model(K::power_instant_w, 100 * kNsPerMs, 0, 1e-3, us(8.8),
                          "field NVML_FI_DEV_POWER_INSTANT (186), scope memory"));
      s->refs_.push_back({s->gpus_.size(), true});
      s->domains_.push_back(std::move(m));
    }
    s->gpus_.push_back(std::move(g));
  }
  if (s->domains_.empty())
    return Error{ErrorKind::device_lost, "no selected NVIDIA GPU could be read: " + s->open_notes_.front(),
                 hint_for(NVML_ERROR_GPU_IS_LOST), NVML_ERROR_GPU_IS_LOST};
  return s;
}

// ---- processes -----------------------------------------------------------------------------

bool NvmlSensor::reports_processes(std::size_t domain_index) const {
  return domain_index < refs_.size() && !refs_[domain_index].memory;
}

std::vector<ProcessUsage> NvmlSensor::processes(std::size_t domain_index, Status* status) const {
  std::vector<ProcessUsage> out;
  auto fail = [&](Error e) {
    if (status) *status = std::move(e);
    return out;
  };
  if (status) *status = Status{};
  if (domain_index >= domains_.size())
    return fail(Error{ErrorKind::invalid_argument, "processes: domain index " + std::to_string(domain_index) +
                                                       " is out of range",
                      {}, 0});
  Gpu& g = *gpus_[refs_[domain_index].gpu];
  if (g.lost_flag.load(std::memory_order_acquire)) return fail(*g.lost);
  const Api& api = lib_->api();
  std::map<unsigned, ProcessUsage> by_pid;
  std::optional<Error> err;

  // Memory per process.
  if (api.device_get_compute_running_processes_v2) {
    std::vector<nvmlProcessInfo_v2_t> buf;
    unsigned count = 0;
    nvmlReturn_t rc = api.device_get_compute_running_processes_v2(g.handle, &count, nullptr);
    for (int attempt = 0; attempt < 3 && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
      count += 8;  // processes may start between the two calls
      buf.resize(count);
      rc = api.device_get_compute_running_processes_v2(g.handle, &count, buf.data());
    }
    if (rc == NVML_SUCCESS) {
      buf.resize(std::min<std::size_t>(count, buf.size()));
      for (const auto& p : buf) {
        ProcessUsage& u = by_pid[p.pid];
        u.pid = p.pid;
        if (p.usedGpuMemory != NVML_VALUE_NOT_AVAILABLE) u.used_memory_bytes = p.usedGpuMemory;
        if (p.gpuInstanceId != 0xFFFFFFFFu) u.gpu_instance_id = p.gpuInstanceId;
        if (p.computeInstanceId != 0xFFFFFFFFu) u.compute_instance_id = p.computeInstanceId;
      }
    } else {
      err = lib_->error(lib_->name_of("nvmlDeviceGetComputeRunningProcesses_v3"), rc, g.id);
    }
  } else if (api.device_get_compute_running_processes_v1) {
    std::vector<nvmlProcessInfo_v1_t> buf;
    unsigned count = 0;
    nvmlReturn_t rc = api.device_get_compute_running_processes_v1(g.handle, &count, nullptr);
    for (int attempt = 0; attempt < 3 && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
      count += 8;
      buf.resize(count);
      rc = api.device_get_compute_running_processes_v1(g.handle, &count, buf.data());
    }
    if (rc == NVML_SUCCESS) {
      buf.resize(std::min<std::size_t>(count, buf.size()));
      for (const auto& p : buf) {
        ProcessUsage& u = by_pid[p.pid];
        u.pid = p.pid;
        if (p.usedGpuMemory != NVML_VALUE_NOT_AVAILABLE) u.used_memory_bytes = p.usedGpuMemory;
      }
    } else {
      err = lib_->error("nvmlDeviceGetComputeRunningProcesses", rc, g.id);
    }
  } else {
    err = missing_fn(*lib_, "nvmlDeviceGetComputeRunningProcesses_v3", g.id);
  }

  // Utilization: every row published since the previous query, each once. The driver returns one
  // row per process, its newest, holding the process's average since lastSeenTimeStamp
  // (docs/per-process.md, "What the driver does, measured"); the per-process poller decides what
  // time a row stands for. A process's row may be published after a newer one of another process
  // was handed out (the driver updates one process at a time), so the query looks back
  // kUtilLookbackUs before the newest row handed out (the first query one second before now), and
  // rows are told apart per process: one not newer than that process's newest handed out is
  // dropped. NOT_FOUND: no row in that span.
  if (api.device_get_process_utilization) {
    const int64_t offset = epoch_offset_ns();
    std::lock_guard util_lock(g.util_mu);
    const int64_t now_real_us = (clock_->now_ns() + offset) / kNsPerUs;
    const int64_t from_us = g.util_newest_us != 0 ? static_cast<int64_t>(g.util_newest_us) - kUtilLookbackUs
                                                  : now_real_us - 1'000'000;
    const auto since_us = static_cast<unsigned long long>(std::max<int64_t>(0, from_us));
    unsigned count = 0;
    std::vector<nvmlProcessUtilizationSample_t> buf;
    nvmlReturn_t rc = api.device_get_process_utilization(g.handle, nullptr, &count, since_us);
    // A full buffer may have left samples out: query again with a larger one (the same since_us).
    for (int attempt = 0; attempt < 4 && (rc == NVML_ERROR_INSUFFICIENT_SIZE ||
                                          (rc == NVML_SUCCESS && (buf.empty() ? count > 0 : count >= buf.size())));
         ++attempt) {
      count = std::max<unsigned>(count + 8, static_cast<unsigned>(2 * buf.size()));
      buf.assign(count, nvmlProcessUtilizationSample_t{});
      rc = api.device_get_process_utilization(g.handle, buf.data(), &count, since_us);
    }
    if (rc == NVML_SUCCESS) {
      buf.resize(std::min<std::size_t>(count, buf.size()));
      std::sort(buf.begin(), buf.end(), [](const auto& a, const auto& b) {
        return a.timeStamp != b.timeStamp ? a.timeStamp < b.timeStamp : a.pid < b.pid;
      });
      unsigned long long newest_us = std::max<unsigned long long>(g.util_newest_us, since_us);
      for (const auto& p : buf) {
        if (p.timeStamp <= since_us) continue;  // before the span asked for (a driver may return it)
        auto [last, fresh] = g.util_last_us.try_emplace(p.pid, 0);
        if (!fresh && p.timeStamp <= last->second) continue;  // handed out already
        last->second = p.timeStamp;
        newest_us = std::max(newest_us, p.timeStamp);
        ProcessUsage& u = by_pid[p.pid];
        u.pid = p.pid;
        const int64_t t_ns = static_cast<int64_t>(p.timeStamp) * kNsPerUs - offset;
        u.sm_samples.push_back({t_ns, static_cast<double>(p.smUtil)});
        u.sm_util_pct = p.smUtil;  // oldest first: the newest stays
        u.mem_util_pct = p.memUtil;
        u.enc_util_pct = p.encUtil;
        u.dec_util_pct = p.decUtil;
        u.util_t_ns = t_ns;
      }
      g.util_newest_us = newest_us;
    } else if (rc == NVML_ERROR_NOT_FOUND) {
      if (g.util_newest_us == 0) g.util_newest_us = since_us;  // looks back no further than the first query
    } else if (!err) {
      err = lib_->error("nvmlDeviceGetProcessUtilization", rc, g.id);
    }
    // A process without a sample in twice the look-back has stopped or idles: its entry goes (a
    // sample of it that comes later is newer than any it had).
    std::erase_if(g.util_last_us, [&](const auto& kv) {
      return static_cast<int64_t>(kv.second) < static_cast<int64_t>(g.util_newest_us) - 2 * kUtilLookbackUs;
    });
  } else if (!err) {
    err = missing_fn(*lib_, "nvmlDeviceGetProcessUtilization", g.id);
  }
  for (auto& [pid, u] : by_pid) out.push_back(u);
  if (err && status) *status = *err;
  return out;
}

// ---- properties and status -----------------------------------------------------------------

std::vector<std::pair<std::string, std::string>> NvmlSensor::properties() const {
  std::vector<std::pair<std::string, std::string>> p;
  const Library& lib = *lib_;
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
    return s;
  };
  p.emplace_back("library_path", lib.path());
  p.emplace_back("library_requested", lib.requested());
  p.emplace_back("driver_version", lib.driver_version().empty() ? "unknown" : lib.driver_version());
  p.emplace_back("nvml_version", lib.nvml_version().empty() ? "unknown" : lib.nvml_version());
  const int c = lib.cuda_driver_version();
  p.emplace_back("cuda_driver_version",
                 c ? std::to_string(c / 1000) + "." + std::to_string((c % 1000) / 10) : std::string("unknown"));
  p.emplace_back("device_count", std::to_string(device_count_));
  p.emplace_back("device_selection", selection_.rule);
  if (!selection_.notes.empty()) p.emplace_back("device_selection_notes", join(selection_.notes));
  if (!open_notes_.empty()) p.emplace_back("open_notes", join(open_notes_));
  p.emplace_back("missing_functions", lib.missing_optional().empty() ? "none" : join(lib.missing_optional()));
  if (!lib.fallbacks().empty()) {
    std::vector<std::string> f;
    for (const auto& [newest, used] : lib.fallbacks()) f.push_back(newest + " -> " + used);
    p.emplace_back("symbol_fallbacks", join(f));
  }
  auto opt_bool = [](const std::optional<bool>& b) { return b ? (*b ? "enabled" : "disabled") : "unknown"; };
  auto opt_w = [](const std::optional<unsigned>& mw) { return mw ? watts(*mw) : std::string("unknown"); };
  for (const auto& gp : gpus_) {
    const Gpu& g = *gp;
    const std::string k = g.id + ".";
    p.emplace_back(k + "name", g.identity.name);
    p.emplace_back(k + "uuid", g.identity.uuid);
    p.emplace_back(k + "pci_bus_id", g.identity.pci_bus_id.empty() ? "unknown" : g.identity.pci_bus_id);
    p.emplace_back(k + "architecture", g.arch ? arch_name(*g.arch) : "unknown");
    p.emplace_back(k + "persistence_mode", opt_bool(g.persistence));
    p.emplace_back(k + "mig_mode_current", g.mig_current ? std::to_string(*g.mig_current) : "not supported");
    p.emplace_back(k + "mig_mode_pending", g.mig_pending ? std::to_string(*g.mig_pending) : "not supported");
    if (g.mig_current && *g.mig_current == 1) {
      p.emplace_back(k + "mig", "MIG mode on: whole-GPU energy only; NVML has no per-instance power or energy, so "
                                "any per-instance split is an estimate");
      p.emplace_back(k + "mig_devices", join(g.identity.mig_uuids));
    }
    p.emplace_back(k + "ecc_mode_current", opt_bool(g.ecc_current));
    p.emplace_back(k + "ecc_mode_pending", opt_bool(g.ecc_pending));
    p.emplace_back(k + "power_limit_min_w", opt_w(g.limit_min_mw));
    p.emplace_back(k + "power_limit_max_w", opt_w(g.limit_max_mw));
    p.emplace_back(k + "power_limit_default_w", opt_w(g.limit_default_mw));
    p.emplace_back(k + "power_limit_enforced_w", opt_w(g.limit_enforced_mw));
    p.emplace_back(k + "gpm", g.gpm ? "supported" : "not available: " + g.gpm_why_not);
    p.emplace_back(k + "memory_domain", g.mem_instant || g.mem_average ? g.mem_id : "none (memory power scope not "
                                                                                    "supported)");
    std::vector<std::string> un;
    for (const auto& u : unsupported_)
      if (u.domain_id == g.id || u.domain_id == g.mem_id)
        un.push_back(u.domain_id + " " + std::string(to_string(u.kind)) + ": " + u.error.message());
    p.emplace_back(k + "unsupported", un.empty() ? "none" : join(un));
  }
  return p;
}

std::string NvmlSensor::status_detail() const {
  const Library& lib = *lib_;
  std::string ids;
  for (const auto& g : gpus_) ids += (ids.empty() ? "" : ", ") + g->id;
  std::string s = std::to_string(gpus_.size()) + (gpus_.size() == 1 ? " GPU" : " GPUs") + " (" + ids + ") of " +
                  std::to_string(device_count_) + ", driver " +
                  (lib.driver_version().empty() ? "unknown" : lib.driver_version()) + ", NVML " +
                  (lib.nvml_version().empty() ? "unknown" : lib.nvml_version()) + ", " + lib.path() + "; selected by " +
                  selection_.rule;
  for (const auto& g : gpus_)
    if (g->mig_current && *g->mig_current == 1)
      s += "; MIG mode on " + g->id + ": whole-GPU energy only (NVML has no per-instance energy)";
  for (const auto& n : selection_.notes) s += "; " + n;
  for (const auto& n : open_notes_) s += "; " + n;
  if (!lib.missing_optional().empty()) {
    s += "; missing optional functions:";
    for (const auto& m : lib.missing_optional()) s += " " + m;
  }
  return s;
}

}  // namespace wattlab::nvml

namespace wattlab::detail {

BackendLoad open_nvml(const BackendOptions& options) {
  BackendLoad load;
  load.status.backend = "nvml";
  auto s = nvml::NvmlSensor::open(options);
  if (!s) {
    if (s.error().kind == ErrorKind::invalid_argument) throw UsageError(s.error().message());
    load.status.loaded = false;
    load.status.detail = s.error().message();
    return load;
  }
  load.status.loaded = true;
  load.status.detail = s.value()->status_detail();
  load.sensor = std::move(s.value());
  return load;
}

}  // namespace wattlab::detail
