// Loads libnvidia-ml at run time (dlopen, own declarations from nvml_api.h), resolves the symbols
// wattlab uses (newest version first; required vs optional), initializes NVML once and keeps it
// initialized for the life of the object, and maps NVML return codes onto ErrorKind in one place.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nvml/nvml_api.h"
#include "wattlab/core/error.h"

namespace wattlab::nvml {

// Every NVML entry point wattlab calls. Null where the library lacks it (optional ones only).
struct Api {
  // required
  nvmlInit_fn init = nullptr;                       // nvmlInit_v2, nvmlInit
  nvmlShutdown_fn shutdown = nullptr;
  nvmlDeviceGetCount_fn device_get_count = nullptr;  // _v2, plain
  nvmlDeviceGetHandleByIndex_fn device_get_handle_by_index = nullptr;  // _v2, plain
  // optional
  nvmlErrorString_fn error_string = nullptr;
  nvmlSystemGetString_fn system_get_driver_version = nullptr;
  nvmlSystemGetString_fn system_get_nvml_version = nullptr;
  nvmlSystemGetCudaDriverVersion_fn system_get_cuda_driver_version = nullptr;  // _v2, plain
  nvmlDeviceGetString_fn device_get_name = nullptr;
  nvmlDeviceGetString_fn device_get_uuid = nullptr;
  nvmlDeviceGetUInt_fn device_get_index = nullptr;
  nvmlDeviceGetPciInfo_fn device_get_pci_info = nullptr;  // _v3 (current struct layout)
  nvmlDeviceGetArchitecture_fn device_get_architecture = nullptr;
  nvmlDeviceGetEnableState_fn device_get_persistence_mode = nullptr;
  nvmlDeviceGetTwoUInt_fn device_get_mig_mode = nullptr;
  nvmlDeviceGetUInt_fn device_get_max_mig_device_count = nullptr;
  nvmlDeviceGetMigDeviceHandleByIndex_fn device_get_mig_device_handle_by_index = nullptr;
  nvmlDeviceGetTwoEnableState_fn device_get_ecc_mode = nullptr;
  nvmlDeviceGetTwoUInt_fn device_get_power_management_limit_constraints = nullptr;
  nvmlDeviceGetUInt_fn device_get_power_management_default_limit = nullptr;
  nvmlDeviceGetUInt_fn device_get_enforced_power_limit = nullptr;
  nvmlDeviceGetULL_fn device_get_total_energy_consumption = nullptr;
  nvmlDeviceGetUInt_fn device_get_power_usage = nullptr;
  nvmlDeviceGetFieldValues_fn device_get_field_values = nullptr;
  nvmlDeviceGetSamples_fn device_get_samples = nullptr;
  nvmlDeviceGetClockInfo_fn device_get_clock_info = nullptr;
  nvmlDeviceGetTemperature_fn device_get_temperature = nullptr;
  nvmlDeviceGetUtilizationRates_fn device_get_utilization_rates = nullptr;
  nvmlDeviceGetULL_fn device_get_clocks_event_reasons = nullptr;  // ...ClocksEventReasons, ...ClocksThrottleReasons
  nvmlDeviceGetViolationStatus_fn device_get_violation_status = nullptr;
  nvmlDeviceGetMemoryInfo_v2_fn device_get_memory_info_v2 = nullptr;
  nvmlDeviceGetMemoryInfo_fn device_get_memory_info = nullptr;
  nvmlDeviceGetProcessUtilization_fn device_get_process_utilization = nullptr;
  nvmlDeviceGetComputeRunningProcesses_v2_fn device_get_compute_running_processes_v2 = nullptr;  // _v3, _v2
  nvmlDeviceGetComputeRunningProcesses_v1_fn device_get_compute_running_processes_v1 = nullptr;
  nvmlGpmQueryDeviceSupport_fn gpm_query_device_support = nullptr;
  nvmlGpmSampleAlloc_fn gpm_sample_alloc = nullptr;
  nvmlGpmSampleFree_fn gpm_sample_free = nullptr;
  nvmlGpmSampleGet_fn gpm_sample_get = nullptr;
  nvmlGpmMetricsGet_fn gpm_metrics_get = nullptr;
};

// The library names tried when no path is given: the driver's soname first (container runtimes
// inject only that one), then the unversioned name (which may be the CUDA toolkit's stub).
inline constexpr const char* kDefaultLibraryNames[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};

class Library {
 public:
  // Loads `path` if given (else WATTLAB_NVML_LIBRARY if set, else kDefaultLibraryNames in order),
  // resolves the symbols and calls nvmlInit. Every failure names what was tried and what to do.
  static Result<std::shared_ptr<Library>> open(const std::string& path = {});
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const Api& api() const { return api_; }
  const std::string& path() const { return path_; }            // the file loaded (dlinfo)
  const std::string& requested() const { return requested_; }  // the name given to dlopen
  // Optional symbol families the library lacks, newest name first: "nvmlGpmSampleGet".
  const std::vector<std::string>& missing_optional() const { return missing_; }
  // Families resolved by an older name than the newest one wattlab knows ("nvmlInit" for nvmlInit_v2).
  const std::vector<std::pair<std::string, std::string>>& fallbacks() const { return fallbacks_; }
  // The symbol actually resolved for a family named by its newest name ("nvmlInit_v2" -> "nvmlInit").
  std::string name_of(std::string_view newest) const;
  const std::string& driver_version() const { return driver_version_; }
  const std::string& nvml_version() const { return nvml_version_; }
  int cuda_driver_version() const { return cuda_driver_version_; }  // 13000 = 13.0; 0 unknown

  // "NVML_ERROR_GPU_IS_LOST (GPU is lost)": our name plus the library's nvmlErrorString.
  std::string describe(nvmlReturn_t code) const;
  // The Error for a failed call: names the call, the domain, the code, and what to do.
  Error error(std::string_view call, nvmlReturn_t code, std::string_view domain = {}) const;

 private:
  Library() = default;
  void* handle_ = nullptr;
  bool initialized_ = false;
  Api api_;
  std::string path_, requested_;
  std::vector<std::string> missing_;
  std::vector<std::pair<std::string, std::string>> fallbacks_;
  std::string driver_version_, nvml_version_;
  int cuda_driver_version_ = 0;
};

// The mapping of NVML return codes onto wattlab's kinds, once (the raw code stays in Error).
ErrorKind error_kind(nvmlReturn_t code);
const char* return_name(nvmlReturn_t code);  // "NVML_ERROR_GPU_IS_LOST"; "NVML_ERROR_<n>" unknown
std::string hint_for(nvmlReturn_t code);     // what to do; may be empty

}  // namespace wattlab::nvml
