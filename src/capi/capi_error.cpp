// Versions, this thread's last error, the names of statuses and telemetry fields, and
// the fork rule: a meter belongs to the process that opened it.
#include <pthread.h>
#include <unistd.h>

#include <array>
#include <mutex>
#include <string>

#include "capi_internal.h"

namespace wattlab::capi {
namespace {

thread_local std::string t_last_error;
std::atomic<uint64_t> g_fork_generation{0};

void on_fork_child() { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }

constexpr std::array<const char*, 15> kTelemetryNames = {
    "mean_sm_clock_mhz",        "mean_mem_clock_mhz",      "mean_temperature_c",     "temperature_begin_c",
    "temperature_end_c",        "mean_utilization_gpu_pct", "power_capped_fraction",  "thermal_capped_fraction",
    "mean_sm_activity_pct",     "mean_sm_occupancy_pct",   "mean_tensor_activity_pct", "mean_dram_bw_pct",
    "power_limit_w",            "max_memory_used_bytes",   "clock_event_reasons_seen"};

}  // namespace

wattlab_status fail(wattlab_status status, std::string message) {
  try {
    t_last_error = std::move(message);
  } catch (...) {  // no memory for the message: the status still says what kind of failure
    t_last_error.clear();
  }
  return status;
}

void note_error(wattlab_status status, std::string message) { fail(status, std::move(message)); }

uint64_t fork_generation() { return g_fork_generation.load(std::memory_order_relaxed); }

void watch_forks() {
  static std::once_flag once;
  std::call_once(once, [] { ::pthread_atfork(nullptr, nullptr, on_fork_child); });
}

void check_meter(const wattlab_meter* m) {
  need(m, "meter");
  if (m->fork_generation != fork_generation())
    throw CError{WATTLAB_ERR_FORKED, "the meter belongs to the parent process (this is pid " +
                                         std::to_string(::getpid()) +
                                         ", a forked child); it measures nothing here: open a new meter in the "
                                         "child, or measure in the parent"};
}

}  // namespace wattlab::capi

extern "C" {

int wattlab_api_version(void) { return WATTLAB_C_API_VERSION; }

const char* wattlab_version(void) { return WATTLAB_VERSION; }

const char* wattlab_last_error(void) { return wattlab::capi::t_last_error.c_str(); }

const char* wattlab_status_name(int status) {
  switch (status) {
    case WATTLAB_OK: return "WATTLAB_OK";
    case WATTLAB_ERR_INVALID_ARGUMENT: return "WATTLAB_ERR_INVALID_ARGUMENT";
    case WATTLAB_ERR_UNKNOWN_DEVICE: return "WATTLAB_ERR_UNKNOWN_DEVICE";
    case WATTLAB_ERR_NO_DEVICE: return "WATTLAB_ERR_NO_DEVICE";
    case WATTLAB_ERR_UNKNOWN_WINDOW: return "WATTLAB_ERR_UNKNOWN_WINDOW";
    case WATTLAB_ERR_STORE: return "WATTLAB_ERR_STORE";
    case WATTLAB_ERR_FORKED: return "WATTLAB_ERR_FORKED";
    case WATTLAB_ERR_NOT_VIRTUAL: return "WATTLAB_ERR_NOT_VIRTUAL";
    case WATTLAB_ERR_ENDED: return "WATTLAB_ERR_ENDED";
    case WATTLAB_ERR_INTERNAL: return "WATTLAB_ERR_INTERNAL";
    default: return "WATTLAB_ERR_UNKNOWN_STATUS";
  }
}

const char* wattlab_telemetry_name(int field) {
  if (field < 0 || static_cast<std::size_t>(field) >= wattlab::capi::kTelemetryNames.size()) return nullptr;
  return wattlab::capi::kTelemetryNames[static_cast<std::size_t>(field)];
}

int wattlab_telemetry_count(void) { return static_cast<int>(wattlab::capi::kTelemetryNames.size()); }

}  // extern "C"
