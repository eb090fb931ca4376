#include "gpu_state.h"

#include <limits>
#include <string>

#include "wattlab/marks.h"

namespace wattlab::device {
using namespace wattlab::nvml;  // NVML_SUCCESS, enums: the loader's own declarations
using nlohmann::json;

double enforced_power_limit_w(const DirectCounter& device) {
  const Api& api = device.library().api();
  unsigned mw = 0;
  if (api.device_get_enforced_power_limit && api.device_get_enforced_power_limit(device.handle(), &mw) == NVML_SUCCESS)
    return mw * 1e-3;
  return std::numeric_limits<double>::quiet_NaN();
}

json read_gpu_state(const DirectCounter& device) {
  const Library& lib = device.library();
  const Api& api = lib.api();
  nvmlDevice_t h = device.handle();
  json s = {{"t_ns", marks::monotonic_ns()}, {"uuid", device.uuid()}, {"driver_version", lib.driver_version()},
            {"nvml_version", lib.nvml_version()}, {"cuda_driver_version", lib.cuda_driver_version()},
            {"nvml_library", lib.path()}};
  json errors = json::object();
  // Stores the read's value under `key`, or null and the error under errors[key].
  auto put = [&](const char* key, const char* call, nvmlReturn_t rc, const json& value) {
    if (rc == NVML_SUCCESS) {
      s[key] = value;
    } else {
      s[key] = nullptr;
      errors[key] = lib.error(call, rc, device.uuid()).message();
    }
  };
  constexpr nvmlReturn_t kMissing = NVML_ERROR_FUNCTION_NOT_FOUND;
  unsigned u = 0, u2 = 0;
  nvmlReturn_t rc = api.device_get_enforced_power_limit ? api.device_get_enforced_power_limit(h, &u) : kMissing;
  put("power_limit_enforced_w", "nvmlDeviceGetEnforcedPowerLimit", rc, u * 1e-3);
  rc = api.device_get_power_management_default_limit ? api.device_get_power_management_default_limit(h, &u) : kMissing;
  put("power_limit_default_w", "nvmlDeviceGetPowerManagementDefaultLimit", rc, u * 1e-3);
  rc = api.device_get_power_management_limit_constraints ? api.device_get_power_management_limit_constraints(h, &u, &u2)
                                                         : kMissing;
  put("power_limit_range_w", "nvmlDeviceGetPowerManagementLimitConstraints", rc, json::array({u * 1e-3, u2 * 1e-3}));
  rc = api.device_get_power_usage ? api.device_get_power_usage(h, &u) : kMissing;
  put("power_usage_w", "nvmlDeviceGetPowerUsage", rc, u * 1e-3);
  rc = api.device_get_clock_info ? api.device_get_clock_info(h, NVML_CLOCK_SM, &u) : kMissing;
  put("sm_clock_mhz", "nvmlDeviceGetClockInfo(SM)", rc, u);
  rc = api.device_get_clock_info ? api.device_get_clock_info(h, NVML_CLOCK_MEM, &u) : kMissing;
  put("mem_clock_mhz", "nvmlDeviceGetClockInfo(MEM)", rc, u);
  rc = api.device_get_temperature ? api.device_get_temperature(h, NVML_TEMPERATURE_GPU, &u) : kMissing;
  put("temperature_c", "nvmlDeviceGetTemperature", rc, u);
  unsigned long long reasons = 0;
  rc = api.device_get_clocks_event_reasons ? api.device_get_clocks_event_reasons(h, &reasons) : kMissing;
  put("clock_event_reasons", "nvmlDeviceGetCurrentClocksEventReasons", rc, reasons);
  nvmlEnableState_t persistence = 0;
  rc = api.device_get_persistence_mode ? api.device_get_persistence_mode(h, &persistence) : kMissing;
  put("persistence_mode", "nvmlDeviceGetPersistenceMode", rc, persistence == NVML_FEATURE_ENABLED);
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  rc = api.device_get_name ? api.device_get_name(h, name, sizeof name) : kMissing;
  put("name", "nvmlDeviceGetName", rc, std::string(name));
  s["errors"] = errors;
  return s;
}

}  // namespace wattlab::device
