// A fake libnvidia-ml.so.1 for tests: the NVML functions wattlab calls, with the signatures of
// src/sensors/nvml/nvml_api.h, driven by a script file named by WATTLAB_FAKE_NVML_SCRIPT.
//
// Script: key=value lines, '#' comments. Globals first, then `gpu.*.<key>` (every GPU), then
// `gpu.<i>.<key>` (one GPU), whatever their order in the file.
//   gpus=8  driver_version=580.159.04  nvml_version=12.580.159.04  cuda_driver_version=13000
//   init_return=<code>  count_return=<code>  handle_return.<i>=<code>
//   missing=nvmlGpmSampleGet,nvmlDeviceGetTotalEnergyConsumption   (dlsym finds none of these)
//   gpu.<i>.name|uuid|pci_bus_id|arch|power_w|memory_power_w (none: scope unsupported)|
//     memory_instant (0/1)|instant_field (0/1)|average_field (0/1)|energy_base_mj|
//     lost_after_ms|reset_after_ms|mig_current|mig_pending|mig_devices (comma list)|
//     sm_clock_mhz|mem_clock_mhz|temp_c|mem_temp_c|util_gpu_pct|util_mem_pct|reasons|
//     power_violation_pct|thermal_violation_pct|enforced_limit_w|min_limit_w|max_limit_w|
//     default_limit_w|memory_total_bytes|memory_used_bytes|persistence|ecc|gpm (0/1)|
//     gpm_sm_pct|gpm_occ_pct|gpm_tensor_pct|gpm_dram_pct|processes (pid:sm:mem:bytes;...)|
//     samples_repeat_last (0/1: the sample buffer also returns the sample at lastSeenTimeStamp)|
//     process_sample_ms (the per-process utilization sample period, 1000/6 as NVML's shortest)|
//     process_cycle (pid:sm,sm,...;...: that pid's SM % of successive sample periods, cycling, as
//       a load periodic against the sample grid draws; instead of its `processes` sm)|
//     process_lag_ms (pid:ms;...: that pid's samples are published this long after their
//       timestamp, as a driver that keeps each process on its own schedule)|
//     process_rows (history: the default, below | newest: as the H100's driver, measured; each
//       sample period the driver updates one process's row with its mean SM % since that row's
//       previous update, and a query returns each process's newest row alone)|
//     process_order (pid,pid,...: with process_rows=newest, the process updated in successive
//       sample periods, cycling; default the listed processes in turn)|
//     instant_power_w (the instant power field's value, as a 25 ms window that a periodic load
//       aliases reads; default 1 W below power_w)|
//     (a pid written @FILE is the pid in FILE, when it exists)|
//     compute_only (pid:bytes;...: running compute processes without a utilization sample)|
//     processes_from_ms|processes_until_ms (the processes are listed only in [from, until) since
//     nvmlInit; outside it the GPU draws idle_power_w, if given, instead of power_w)|
//     return.<nvml function name>=<code> (that call fails with the code)
// Time: counters advance with CLOCK_MONOTONIC since nvmlInit (energy = base + power x time, in
// 100 ms steps, as the real counter); sample timestamps are CLOCK_REALTIME us, 20 ms apart.
// Per-process utilization, process_rows=history: a sample per process per sample period (on a
// grid of CLOCK_REALTIME us), none for a period with zero utilization, the last 2 s kept; a query
// returns every kept sample newer than lastSeenTimeStamp, several per process, and NOT_FOUND when
// there is none. process_rows=newest: one row per process, updated in its turn on the same grid,
// returned while newer than lastSeenTimeStamp.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "nvml/nvml_api.h"

using namespace wattlab::nvml;

namespace {

int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
int64_t real_us() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

struct Proc {
  unsigned pid = 0, sm = 0, mem = 0;
  unsigned long long bytes = 0;
};

struct Object {
  int tag = 0;  // 1 GPU, 2 MIG device
};
struct FakeGpu;
struct FakeMig : Object {
  std::string uuid;
  FakeGpu* parent = nullptr;
};
struct FakeGpu : Object {
  unsigned index = 0;
  std::map<std::string, std::string> kv;  // the script's keys for this GPU
  std::vector<std::unique_ptr<FakeMig>> migs;

  std::string s(const std::string& k, const std::string& def) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
  }
  double d(const std::string& k, double def) const {
    auto it = kv.find(k);
    if (it == kv.end() || it->second == "none") return def;
    return std::strtod(it->second.c_str(), nullptr);
  }
  bool has(const std::string& k) const { return kv.count(k) != 0; }
};

struct FakeSample {
  FakeGpu* gpu = nullptr;
  int64_t t_ns = 0;
};

struct State {
  std::map<std::string, std::string> global;
  std::vector<std::unique_ptr<FakeGpu>> gpus;
  int refcount = 0;
  int64_t t0_ns = 0;
  int64_t real_t0_us = 0;  // CLOCK_REALTIME at nvmlInit
  double g(const std::string& k, double def) const {
    auto it = global.find(k);
    return it == global.end() ? def : std::strtod(it->second.c_str(), nullptr);
  }
  std::string gs(const std::string& k, const std::string& def) const {
    auto it = global.find(k);
    return it == global.end() ? def : it->second;
  }
};
State& st() {
  static State s;
  return s;
}

std::vector<std::string> script_lines() {
  std::vector<std::string> lines;
  const char* path = std::getenv("WATTLAB_FAKE_NVML_SCRIPT");
  if (!path || !*path) return lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t')) line.pop_back();
    if (line.find('=') != std::string::npos) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

void load_script() {
  State& s = st();
  s.global.clear();
  s.gpus.clear();
  std::vector<std::pair<std::string, std::string>> star, one;
  for (const auto& line : script_lines()) {
    const auto eq = line.find('=');
    std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    if (k.rfind("gpu.*.", 0) == 0) star.emplace_back(k.substr(6), v);
    else if (k.rfind("gpu.", 0) == 0) one.emplace_back(k.substr(4), v);
    else s.global[k] = v;
  }
  const int n = static_cast<int>(s.g("gpus", 1));
  for (int i = 0; i < n; ++i) {
    auto gpu = std::make_unique<FakeGpu>();
    gpu->tag = 1;
    gpu->index = static_cast<unsigned>(i);
    for (const auto& [k, v] : star) gpu->kv[k] = v;
    s.gpus.push_back(std::move(gpu));
  }
  for (const auto& [k, v] : one) {
    const auto dot = k.find('.');
    const auto i = static_cast<std::size_t>(std::strtoul(k.substr(0, dot).c_str(), nullptr, 10));
    if (dot != std::string::npos && i < s.gpus.size()) s.gpus[i]->kv[k.substr(dot + 1)] = v;
  }
  for (auto& gpu : s.gpus)
    for (const auto& u : split(gpu->s("mig_devices", ""), ',')) {
      auto m = std::make_unique<FakeMig>();
      m->tag = 2;
      m->uuid = u;
      m->parent = gpu.get();
      gpu->migs.push_back(std::move(m));
    }
  s.t0_ns = mono_ns();
  s.real_t0_us = real_us();
}

bool hidden(const char* name) {
  for (const auto& line : script_lines())
    if (line.rfind("missing=", 0) == 0)
      for (const auto& m : split(line.substr(8), ','))
        if (m == name) return true;
  return false;
}

double elapsed_ms() { return static_cast<double>(mono_ns() - st().t0_ns) / 1e6; }

FakeGpu* as_gpu(nvmlDevice_t d) {
  auto* o = reinterpret_cast<Object*>(d);
  if (!o) return nullptr;
  if (o->tag == 1) return static_cast<FakeGpu*>(o);
  return nullptr;
}

// Common checks for a call on a GPU: initialized, a real handle, not lost, no scripted failure.
nvmlReturn_t check(nvmlDevice_t d, const char* fn, FakeGpu** out) {
  if (st().refcount <= 0) return NVML_ERROR_UNINITIALIZED;
  FakeGpu* g = as_gpu(d);
  if (!g) return NVML_ERROR_INVALID_ARGUMENT;
  const double lost = g->d("lost_after_ms", -1);
  if (lost >= 0 && elapsed_ms() >= lost) return NVML_ERROR_GPU_IS_LOST;
  if (g->has(std::string("return.") + fn)) return static_cast<nvmlReturn_t>(g->d(std::string("return.") + fn, 0));
  *out = g;
  return NVML_SUCCESS;
}
#define CHECK(fn)                                         \
  FakeGpu* g = nullptr;                                   \
  if (nvmlReturn_t rc_ = check(device, fn, &g); rc_ != 0) \
  return rc_

// The processes' span [from, until) in ms since nvmlInit; power_w inside it, idle_power_w outside.
double procs_from_ms(const FakeGpu* g) { return g->d("processes_from_ms", 0); }
double procs_until_ms(const FakeGpu* g) { return g->d("processes_until_ms", 1e18); }
bool procs_listed(const FakeGpu* g) {
  const double t = elapsed_ms();
  return t >= procs_from_ms(g) && t < procs_until_ms(g);
}
double power_at_w(const FakeGpu* g, bool active) {
  return active || !g->has("idle_power_w") ? g->d("power_w", 700) : g->d("idle_power_w", 0);
}
double power_w(const FakeGpu* g) { return power_at_w(g, procs_listed(g)); }
// Energy in mJ over [0, t_ms): idle outside the processes' span, power_w inside it.
double energy_since_init_mj(const FakeGpu* g, double t_ms) {
  const double a = std::clamp(procs_from_ms(g), 0.0, t_ms), b = std::clamp(procs_until_ms(g), a, t_ms);
  return power_at_w(g, false) * (a + (t_ms - b)) + power_at_w(g, true) * (b - a);
}

// Counter in mJ, updated every 100 ms like the real one; restarts from 0 at reset_after_ms.
unsigned long long energy_mj(const FakeGpu* g) {
  const double t_ms = std::floor(elapsed_ms() / 100.0) * 100.0;
  const double reset = g->d("reset_after_ms", -1);
  if (reset >= 0 && t_ms >= reset) return static_cast<unsigned long long>(power_w(g) * (t_ms - reset));
  return static_cast<unsigned long long>(g->d("energy_base_mj", 1e9) + energy_since_init_mj(g, t_ms));
}

nvmlReturn_t copy_string(const std::string& v, char* buf, unsigned len) {
  if (!buf || len <= v.size()) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, v.c_str(), v.size() + 1);
  return NVML_SUCCESS;
}

std::string default_uuid(unsigned i) {
  char b[64];
  std::snprintf(b, sizeof b, "GPU-%08x-fake-4000-8000-%012x", 0xfa4e0000u + i, i);
  return b;
}
std::string default_pci(unsigned i) {
  char b[32];
  std::snprintf(b, sizeof b, "00000000:%02X:00.0", 0x19u + 0x10u * i);
  return b;
}

// ---- implementations -------------------------------------------------------------------------

nvmlReturn_t impl_nvmlInit_v2() {
  State& s = st();
  if (s.refcount == 0) {
    load_script();
    const auto rc = static_cast<nvmlReturn_t>(s.g("init_return", 0));
    if (rc != NVML_SUCCESS) return rc;
  }
  ++s.refcount;
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlInit() { return impl_nvmlInit_v2(); }
nvmlReturn_t impl_nvmlShutdown() {
  if (st().refcount <= 0) return NVML_ERROR_UNINITIALIZED;
  --st().refcount;
  return NVML_SUCCESS;
}
const char* impl_nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case 0: return "Success";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
  }
}
nvmlReturn_t impl_nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  return copy_string(st().gs("driver_version", "580.159.04"), buf, len);
}
nvmlReturn_t impl_nvmlSystemGetNVMLVersion(char* buf, unsigned len) {
  return copy_string(st().gs("nvml_version", "13.580.159.04"), buf, len);
}
nvmlReturn_t impl_nvmlSystemGetCudaDriverVersion_v2(int* v) {
  *v = static_cast<int>(st().g("cuda_driver_version", 13000));
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlSystemGetCudaDriverVersion(int* v) { return impl_nvmlSystemGetCudaDriverVersion_v2(v); }
nvmlReturn_t impl_nvmlDeviceGetCount_v2(unsigned* n) {
  if (st().refcount <= 0) return NVML_ERROR_UNINITIALIZED;
  if (auto rc = static_cast<nvmlReturn_t>(st().g("count_return", 0)); rc != 0) return rc;
  *n = static_cast<unsigned>(st().gpus.size());
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetCount(unsigned* n) { return impl_nvmlDeviceGetCount_v2(n); }
nvmlReturn_t impl_nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  if (st().refcount <= 0) return NVML_ERROR_UNINITIALIZED;
  if (i >= st().gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  if (auto rc = static_cast<nvmlReturn_t>(st().g("handle_return." + std::to_string(i), 0)); rc != 0) return rc;
  *d = reinterpret_cast<nvmlDevice_t>(static_cast<Object*>(st().gpus[i].get()));
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetHandleByIndex(unsigned i, nvmlDevice_t* d) { return impl_nvmlDeviceGetHandleByIndex_v2(i, d); }

nvmlReturn_t impl_nvmlDeviceGetName(nvmlDevice_t device, char* buf, unsigned len) {
  CHECK("nvmlDeviceGetName");
  return copy_string(g->s("name", "NVIDIA H200"), buf, len);
}
nvmlReturn_t impl_nvmlDeviceGetUUID(nvmlDevice_t device, char* buf, unsigned len) {
  auto* o = reinterpret_cast<Object*>(device);
  if (o && o->tag == 2) return copy_string(static_cast<FakeMig*>(o)->uuid, buf, len);
  CHECK("nvmlDeviceGetUUID");
  return copy_string(g->s("uuid", default_uuid(g->index)), buf, len);
}
nvmlReturn_t impl_nvmlDeviceGetIndex(nvmlDevice_t device, unsigned* i) {
  CHECK("nvmlDeviceGetIndex");
  *i = g->index;
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* p) {
  CHECK("nvmlDeviceGetPciInfo_v3");
  *p = nvmlPciInfo_t{};
  const std::string id = g->s("pci_bus_id", default_pci(g->index));
  std::snprintf(p->busId, sizeof p->busId, "%s", id.c_str());
  std::snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%s", id.c_str() + 4);
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* a) {
  CHECK("nvmlDeviceGetArchitecture");
  *a = static_cast<unsigned>(g->d("arch", NVML_DEVICE_ARCH_HOPPER));
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* m) {
  CHECK("nvmlDeviceGetPersistenceMode");
  *m = static_cast<unsigned>(g->d("persistence", 1));
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned* cur, unsigned* pend) {
  CHECK("nvmlDeviceGetMigMode");
  *cur = static_cast<unsigned>(g->d("mig_current", 0));
  *pend = static_cast<unsigned>(g->d("mig_pending", *cur));
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned* n) {
  CHECK("nvmlDeviceGetMaxMigDeviceCount");
  *n = 7;
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned i, nvmlDevice_t* out) {
  CHECK("nvmlDeviceGetMigDeviceHandleByIndex");
  if (i >= g->migs.size()) return NVML_ERROR_NOT_FOUND;
  *out = reinterpret_cast<nvmlDevice_t>(static_cast<Object*>(g->migs[i].get()));
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* cur, nvmlEnableState_t* pend) {
  CHECK("nvmlDeviceGetEccMode");
  *cur = *pend = static_cast<unsigned>(g->d("ecc", 1));
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned* lo, unsigned* hi) {
  CHECK("nvmlDeviceGetPowerManagementLimitConstraints");
  *lo = static_cast<unsigned>(g->d("min_limit_w", 200) * 1000);
  *hi = static_cast<unsigned>(g->d("max_limit_w", 700) * 1000);
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned* v) {
  CHECK("nvmlDeviceGetPowerManagementDefaultLimit");
  *v = static_cast<unsigned>(g->d("default_limit_w", 700) * 1000);
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned* v) {
  CHECK("nvmlDeviceGetEnforcedPowerLimit");
  *v = static_cast<unsigned>(g->d("enforced_limit_w", 700) * 1000);
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* mj) {
  CHECK("nvmlDeviceGetTotalEnergyConsumption");
  *mj = energy_mj(g);
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* mw) {
  CHECK("nvmlDeviceGetPowerUsage");
  *mw = static_cast<unsigned>(power_w(g) * 1000);
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetFieldValues(nvmlDevice_t device, int n, nvmlFieldValue_t* values) {
  CHECK("nvmlDeviceGetFieldValues");
  const long long tick_us = real_us() / 100'000 * 100'000;
  for (int i = 0; i < n; ++i) {
    nvmlFieldValue_t& f = values[i];
    f.timestamp = tick_us;
    f.latencyUsec = 0;
    f.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
    f.nvmlReturn = NVML_SUCCESS;
    const bool mem = f.scopeId == NVML_POWER_SCOPE_MEMORY;
    const double mem_w = g->d("memory_power_w", -1);
    if ((f.fieldId == NVML_FI_DEV_POWER_AVERAGE || f.fieldId == NVML_FI_DEV_POWER_INSTANT) && mem) {
      const bool instant = f.fieldId == NVML_FI_DEV_POWER_INSTANT;
      if (mem_w < 0 || (instant && g->d("memory_instant", 0) == 0)) f.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      else f.value.uiVal = static_cast<unsigned>(mem_w * 1000);
    } else if (f.fieldId == NVML_FI_DEV_POWER_AVERAGE && f.scopeId == NVML_POWER_SCOPE_GPU) {
      if (g->d("average_field", 1) == 0) f.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      else f.value.uiVal = static_cast<unsigned>(power_w(g) * 1000);
    } else if (f.fieldId == NVML_FI_DEV_POWER_INSTANT && f.scopeId == NVML_POWER_SCOPE_GPU) {
      if (g->d("instant_field", 1) == 0) f.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      else if (g->has("instant_power_w") && procs_listed(g)) f.value.uiVal = static_cast<unsigned>(g->d("instant_power_w", 0) * 1000);
      else f.value.uiVal = static_cast<unsigned>(power_w(g) * 1000) - 1000;  // 1 W below the average
    } else if (f.fieldId == NVML_FI_DEV_MEMORY_TEMP) {
      f.value.uiVal = static_cast<unsigned>(g->d("mem_temp_c", 45));
    } else if (f.fieldId == NVML_FI_DEV_ENERGY) {
      f.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
      f.value.ullVal = energy_mj(g);
    } else {
      f.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  return NVML_SUCCESS;
}
// The driver's power sample buffer: one sample every 20 ms of real time, 119 kept; the value
// cycles power_w + {0, 1, 2, 3} W so tests can tell samples apart.
nvmlReturn_t impl_nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type, unsigned long long last_seen,
                                       nvmlValueType_t* vt, unsigned* count, nvmlSample_t* samples) {
  CHECK("nvmlDeviceGetSamples");
  if (type != NVML_TOTAL_POWER_SAMPLES) return NVML_ERROR_NOT_SUPPORTED;
  constexpr long long kStepUs = 20'000;
  constexpr int kKept = 119;
  const long long newest = real_us() / kStepUs * kStepUs;
  std::vector<nvmlSample_t> avail;
  for (int j = kKept - 1; j >= 0; --j) {
    const long long ts = newest - j * kStepUs;
    // Some drivers hand back the sample at lastSeenTimeStamp again: samples_repeat_last=1 does.
    const bool repeat = g->d("samples_repeat_last", 0) != 0;
    if (repeat ? ts < static_cast<long long>(last_seen) : ts <= static_cast<long long>(last_seen)) continue;
    nvmlSample_t s{};
    s.timeStamp = static_cast<unsigned long long>(ts);
    s.sampleValue.uiVal = static_cast<unsigned>(power_w(g) * 1000) + static_cast<unsigned>((ts / kStepUs) % 4) * 1000;
    avail.push_back(s);
  }
  *vt = NVML_VALUE_TYPE_UNSIGNED_INT;
  if (!samples) {
    *count = kKept;
    return NVML_SUCCESS;
  }
  if (avail.empty()) return NVML_ERROR_NOT_FOUND;
  const unsigned n = std::min<unsigned>(*count, static_cast<unsigned>(avail.size()));
  for (unsigned k = 0; k < n; ++k) samples[k] = avail[k];
  *count = n;
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned* v) {
  CHECK("nvmlDeviceGetClockInfo");
  if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS) *v = static_cast<unsigned>(g->d("sm_clock_mhz", 1980));
  else if (type == NVML_CLOCK_MEM) *v = static_cast<unsigned>(g->d("mem_clock_mhz", 2619));
  else return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t, unsigned* v) {
  CHECK("nvmlDeviceGetTemperature");
  *v = static_cast<unsigned>(g->d("temp_c", 40));
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* u) {
  CHECK("nvmlDeviceGetUtilizationRates");
  u->gpu = static_cast<unsigned>(g->d("util_gpu_pct", 100));
  u->memory = static_cast<unsigned>(g->d("util_mem_pct", 30));
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* r) {
  CHECK("nvmlDeviceGetCurrentClocksEventReasons");
  *r = static_cast<unsigned long long>(g->d("reasons", 4));
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* r) {
  return impl_nvmlDeviceGetCurrentClocksEventReasons(device, r);
}
nvmlReturn_t impl_nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t p, nvmlViolationTime_t* v) {
  CHECK("nvmlDeviceGetViolationStatus");
  const double pct = p == NVML_PERF_POLICY_POWER ? g->d("power_violation_pct", 50) : g->d("thermal_violation_pct", 0);
  v->referenceTime = static_cast<unsigned long long>(real_us());
  v->violationTime = static_cast<unsigned long long>(elapsed_ms() * 1e6 * pct / 100.0);
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* m) {
  CHECK("nvmlDeviceGetMemoryInfo_v2");
  if (m->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  m->total = static_cast<unsigned long long>(g->d("memory_total_bytes", 150e9));
  m->used = static_cast<unsigned long long>(g->d("memory_used_bytes", 1e9));
  m->reserved = 500'000'000ull;
  m->free = m->total - m->used - m->reserved;
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* m) {
  CHECK("nvmlDeviceGetMemoryInfo");
  m->total = static_cast<unsigned long long>(g->d("memory_total_bytes", 150e9));
  m->used = static_cast<unsigned long long>(g->d("memory_used_bytes", 1e9)) + 500'000'000ull;
  m->free = m->total - m->used;
  return NVML_SUCCESS;
}
// The script's processes, listed or not.
std::vector<Proc> procs_all(const FakeGpu* g) {
  std::vector<Proc> out;
  for (const auto& p : split(g->s("processes", ""), ';')) {
    const auto f = split(p, ':');
    if (f.size() != 4) continue;
    unsigned pid = 0;
    if (f[0][0] == '@') {  // @FILE: the pid written in FILE (a test's command writes its own); absent: no process
      std::ifstream in(f[0].substr(1));
      if (!(in >> pid)) continue;
    } else {
      pid = static_cast<unsigned>(std::stoul(f[0]));
    }
    out.push_back({pid, static_cast<unsigned>(std::stoul(f[1])),
                   static_cast<unsigned>(std::stoul(f[2])), std::stoull(f[3])});
  }
  return out;
}
// The processes listed now.
std::vector<Proc> procs(const FakeGpu* g) { return procs_listed(g) ? procs_all(g) : std::vector<Proc>{}; }
// The running compute processes: those with utilization samples and the compute_only ones.
std::vector<Proc> running(const FakeGpu* g) {
  std::vector<Proc> out = procs(g);
  if (!procs_listed(g)) return out;
  for (const auto& p : split(g->s("compute_only", ""), ';')) {
    const auto f = split(p, ':');
    if (f.size() == 2) out.push_back({static_cast<unsigned>(std::stoul(f[0])), 0, 0, std::stoull(f[1])});
  }
  return out;
}
// How long after its timestamp a sample of `pid` is published (process_lag_ms), us.
long long publish_lag_us(const FakeGpu* g, unsigned pid) {
  for (const auto& p : split(g->s("process_lag_ms", ""), ';')) {
    const auto f = split(p, ':');
    if (f.size() == 2 && std::stoul(f[0]) == pid) return std::llround(std::stod(f[1]) * 1000.0);
  }
  return 0;
}
// The SM % of `pid` in the sample period with grid index `j`: its process_cycle entry, else its
// `processes` value.
unsigned cycle_sm(const FakeGpu* g, unsigned pid, unsigned sm, long long j) {
  for (const auto& p : split(g->s("process_cycle", ""), ';')) {
    const auto f = split(p, ':');
    if (f.size() != 2 || std::stoul(f[0]) != pid) continue;
    const auto v = split(f[1], ',');
    if (!v.empty()) return static_cast<unsigned>(std::stoul(v[static_cast<std::size_t>(j % static_cast<long long>(v.size()))]));
  }
  return sm;
}
// The pids updated in successive sample periods under process_rows=newest (process_order).
std::vector<unsigned> update_order(const FakeGpu* g) {
  std::vector<unsigned> order;
  for (const auto& p : split(g->s("process_order", ""), ',')) order.push_back(static_cast<unsigned>(std::stoul(p)));
  if (order.empty())
    for (const auto& p : procs_all(g)) order.push_back(p.pid);
  return order;
}
// process_rows=newest: each process's newest row published by `now`, holding its mean SM % over
// the sample periods since its previous update.
void newest_rows(const FakeGpu* g, double period_us, long long now, long long last_seen,
                 std::vector<nvmlProcessUtilizationSample_t>& avail) {
  const std::vector<unsigned> order = update_order(g);
  if (order.empty()) return;
  const auto n = static_cast<long long>(order.size());
  for (const auto& p : procs_all(g)) {
    const long long lag = publish_lag_us(g, p.pid);
    long long j = static_cast<long long>(std::floor(static_cast<double>(now - lag) / period_us));
    long long back = 0;
    for (; back < n && order[static_cast<std::size_t>((j - back) % n)] != p.pid; ++back) {}
    if (back == n) continue;  // never updated
    j -= back;
    long long prev = j - 1;
    for (; prev > j - 1 - n && order[static_cast<std::size_t>(((prev % n) + n) % n)] != p.pid; --prev) {}
    const auto ts = static_cast<long long>(std::llround(static_cast<double>(j) * period_us));
    if (ts <= last_seen) continue;
    const double t_ms = static_cast<double>(ts - st().real_t0_us) / 1000.0;
    if ((g->has("processes_from_ms") && t_ms < procs_from_ms(g)) || t_ms >= procs_until_ms(g)) continue;
    double sum = 0;
    for (long long i = prev + 1; i <= j; ++i) sum += cycle_sm(g, p.pid, p.sm, i);
    const auto sm = static_cast<unsigned>(std::llround(sum / static_cast<double>(j - prev)));
    if (sm == 0 && p.mem == 0) continue;
    avail.push_back(nvmlProcessUtilizationSample_t{p.pid, static_cast<unsigned long long>(ts), sm, p.mem, 0, 0});
  }
}
// process_rows=history: every kept sample newer than last_seen, one per process per period.
void history_rows(const FakeGpu* g, double period_us, long long now, long long last_seen,
                  std::vector<nvmlProcessUtilizationSample_t>& avail) {
  const long long oldest = now - 2'000'000;
  for (long long j = static_cast<long long>(std::floor(static_cast<double>(std::max(oldest, last_seen)) / period_us));
       ; ++j) {
    const auto ts = static_cast<long long>(std::llround(static_cast<double>(j) * period_us));
    if (ts > now) break;
    if (ts <= last_seen || ts < oldest) continue;
    // Listed at the sample's time (processes_from_ms and _until_ms count from nvmlInit).
    const double t_ms = static_cast<double>(ts - st().real_t0_us) / 1000.0;
    if ((g->has("processes_from_ms") && t_ms < procs_from_ms(g)) || t_ms >= procs_until_ms(g)) continue;
    for (const auto& p : procs_all(g)) {
      const unsigned sm = cycle_sm(g, p.pid, p.sm, j);
      if (sm == 0 && p.mem == 0) continue;  // zero utilization over the period: no sample
      if (ts + publish_lag_us(g, p.pid) > now) continue;  // not published yet
      avail.push_back(nvmlProcessUtilizationSample_t{p.pid, static_cast<unsigned long long>(ts), sm, p.mem, 0, 0});
    }
  }
}
nvmlReturn_t impl_nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* u,
                                                  unsigned* count, unsigned long long last_seen) {
  CHECK("nvmlDeviceGetProcessUtilization");
  const double period_us = g->d("process_sample_ms", 1000.0 / 6.0) * 1000.0;
  std::vector<nvmlProcessUtilizationSample_t> avail;
  if (g->s("process_rows", "history") == "newest")
    newest_rows(g, period_us, real_us(), static_cast<long long>(last_seen), avail);
  else
    history_rows(g, period_us, real_us(), static_cast<long long>(last_seen), avail);
  if (avail.empty()) return NVML_ERROR_NOT_FOUND;
  if (!u || *count < avail.size()) {
    *count = static_cast<unsigned>(avail.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (std::size_t k = 0; k < avail.size(); ++k) u[k] = avail[k];
  *count = static_cast<unsigned>(avail.size());
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned* count,
                                                          nvmlProcessInfo_v2_t* info) {
  CHECK("nvmlDeviceGetComputeRunningProcesses_v3");
  const auto ps = running(g);
  if (*count < ps.size()) {
    *count = static_cast<unsigned>(ps.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (std::size_t k = 0; k < ps.size(); ++k) info[k] = nvmlProcessInfo_v2_t{ps[k].pid, ps[k].bytes, 0xFFFFFFFFu, 0xFFFFFFFFu};
  *count = static_cast<unsigned>(ps.size());
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned* count, nvmlProcessInfo_v1_t* info) {
  CHECK("nvmlDeviceGetComputeRunningProcesses");
  const auto ps = running(g);
  if (*count < ps.size()) {
    *count = static_cast<unsigned>(ps.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (std::size_t k = 0; k < ps.size(); ++k) info[k] = nvmlProcessInfo_v1_t{ps[k].pid, ps[k].bytes};
  *count = static_cast<unsigned>(ps.size());
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* s) {
  CHECK("nvmlGpmQueryDeviceSupport");
  if (s->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  s->isSupportedDevice = static_cast<unsigned>(g->d("gpm", 1));
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlGpmSampleAlloc(nvmlGpmSample_t* s) {
  *s = reinterpret_cast<nvmlGpmSample_t>(new FakeSample());
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlGpmSampleFree(nvmlGpmSample_t s) {
  delete reinterpret_cast<FakeSample*>(s);
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t s) {
  CHECK("nvmlGpmSampleGet");
  auto* fs = reinterpret_cast<FakeSample*>(s);
  fs->gpu = g;
  fs->t_ns = mono_ns();
  return NVML_SUCCESS;
}
nvmlReturn_t impl_nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* m) {
  if (m->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  auto* a = reinterpret_cast<FakeSample*>(m->sample1);
  auto* b = reinterpret_cast<FakeSample*>(m->sample2);
  if (!a || !b || !a->gpu || a->gpu != b->gpu) return NVML_ERROR_INVALID_ARGUMENT;
  if (std::llabs(b->t_ns - a->t_ns) <= 100'000'000) return NVML_ERROR_INVALID_ARGUMENT;  // needs > 100 ms
  const FakeGpu* g = a->gpu;
  for (unsigned k = 0; k < m->numMetrics && k < NVML_GPM_METRIC_MAX; ++k) {
    nvmlGpmMetric_t& x = m->metrics[k];
    x.nvmlReturn = NVML_SUCCESS;
    switch (x.metricId) {
      case NVML_GPM_METRIC_SM_UTIL: x.value = g->d("gpm_sm_pct", 96.3); break;
      case NVML_GPM_METRIC_SM_OCCUPANCY: x.value = g->d("gpm_occ_pct", 14.2); break;
      case NVML_GPM_METRIC_ANY_TENSOR_UTIL: x.value = g->d("gpm_tensor_pct", 93.4); break;
      case NVML_GPM_METRIC_DRAM_BW_UTIL: x.value = g->d("gpm_dram_pct", 15.9); break;
      default: x.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  return NVML_SUCCESS;
}

}  // namespace

// ---- exports: each symbol is an IFUNC, so a script can make dlsym miss it ---------------------
#define FAKE_NVML_EXPORT(name)                                                                   \
  extern "C" {                                                                                   \
  /* external and hidden, not static: clang resolves an ifunc only to an external definition */ \
  __attribute__((visibility("hidden"))) decltype(&impl_##name) resolve_##name() {                \
    return hidden(#name) ? nullptr : &impl_##name;                                               \
  }                                                                                              \
  __attribute__((visibility("default"))) decltype(impl_##name) name __attribute__((ifunc("resolve_" #name))); \
  }

FAKE_NVML_EXPORT(nvmlInit_v2)
FAKE_NVML_EXPORT(nvmlInit)
FAKE_NVML_EXPORT(nvmlShutdown)
FAKE_NVML_EXPORT(nvmlErrorString)
FAKE_NVML_EXPORT(nvmlSystemGetDriverVersion)
FAKE_NVML_EXPORT(nvmlSystemGetNVMLVersion)
FAKE_NVML_EXPORT(nvmlSystemGetCudaDriverVersion_v2)
FAKE_NVML_EXPORT(nvmlSystemGetCudaDriverVersion)
FAKE_NVML_EXPORT(nvmlDeviceGetCount_v2)
FAKE_NVML_EXPORT(nvmlDeviceGetCount)
FAKE_NVML_EXPORT(nvmlDeviceGetHandleByIndex_v2)
FAKE_NVML_EXPORT(nvmlDeviceGetHandleByIndex)
FAKE_NVML_EXPORT(nvmlDeviceGetName)
FAKE_NVML_EXPORT(nvmlDeviceGetUUID)
FAKE_NVML_EXPORT(nvmlDeviceGetIndex)
FAKE_NVML_EXPORT(nvmlDeviceGetPciInfo_v3)
FAKE_NVML_EXPORT(nvmlDeviceGetArchitecture)
FAKE_NVML_EXPORT(nvmlDeviceGetPersistenceMode)
FAKE_NVML_EXPORT(nvmlDeviceGetMigMode)
FAKE_NVML_EXPORT(nvmlDeviceGetMaxMigDeviceCount)
FAKE_NVML_EXPORT(nvmlDeviceGetMigDeviceHandleByIndex)
FAKE_NVML_EXPORT(nvmlDeviceGetEccMode)
FAKE_NVML_EXPORT(nvmlDeviceGetPowerManagementLimitConstraints)
FAKE_NVML_EXPORT(nvmlDeviceGetPowerManagementDefaultLimit)
FAKE_NVML_EXPORT(nvmlDeviceGetEnforcedPowerLimit)
FAKE_NVML_EXPORT(nvmlDeviceGetTotalEnergyConsumption)
FAKE_NVML_EXPORT(nvmlDeviceGetPowerUsage)
FAKE_NVML_EXPORT(nvmlDeviceGetFieldValues)
FAKE_NVML_EXPORT(nvmlDeviceGetSamples)
FAKE_NVML_EXPORT(nvmlDeviceGetClockInfo)
FAKE_NVML_EXPORT(nvmlDeviceGetTemperature)
FAKE_NVML_EXPORT(nvmlDeviceGetUtilizationRates)
FAKE_NVML_EXPORT(nvmlDeviceGetCurrentClocksEventReasons)
FAKE_NVML_EXPORT(nvmlDeviceGetCurrentClocksThrottleReasons)
FAKE_NVML_EXPORT(nvmlDeviceGetViolationStatus)
FAKE_NVML_EXPORT(nvmlDeviceGetMemoryInfo_v2)
FAKE_NVML_EXPORT(nvmlDeviceGetMemoryInfo)
FAKE_NVML_EXPORT(nvmlDeviceGetProcessUtilization)
FAKE_NVML_EXPORT(nvmlDeviceGetComputeRunningProcesses_v3)
FAKE_NVML_EXPORT(nvmlDeviceGetComputeRunningProcesses)
FAKE_NVML_EXPORT(nvmlGpmQueryDeviceSupport)
FAKE_NVML_EXPORT(nvmlGpmSampleAlloc)
FAKE_NVML_EXPORT(nvmlGpmSampleFree)
FAKE_NVML_EXPORT(nvmlGpmSampleGet)
FAKE_NVML_EXPORT(nvmlGpmMetricsGet)
