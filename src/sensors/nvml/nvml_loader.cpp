#include "nvml/nvml_loader.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace wattlab::nvml {
namespace {

template <class F>
void assign(F& slot, void* p) {
  static_assert(sizeof(F) == sizeof(void*));
  std::memcpy(&slot, &p, sizeof p);  // object pointer -> function pointer, without a cast warning
}

std::string join(std::initializer_list<const char*> names) {
  std::string s;
  for (const char* n : names) {
    if (!s.empty()) s += " / ";
    s += n;
  }
  return s;
}

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

}  // namespace

const char* return_name(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS: return "NVML_SUCCESS";
    case NVML_ERROR_UNINITIALIZED: return "NVML_ERROR_UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT: return "NVML_ERROR_INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED: return "NVML_ERROR_NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION: return "NVML_ERROR_NO_PERMISSION";
    case NVML_ERROR_ALREADY_INITIALIZED: return "NVML_ERROR_ALREADY_INITIALIZED";
    case NVML_ERROR_NOT_FOUND: return "NVML_ERROR_NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER: return "NVML_ERROR_INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT: return "NVML_ERROR_TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE: return "NVML_ERROR_IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM: return "NVML_ERROR_CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST: return "NVML_ERROR_GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED: return "NVML_ERROR_RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM: return "NVML_ERROR_OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_IN_USE: return "NVML_ERROR_IN_USE";
    case NVML_ERROR_MEMORY: return "NVML_ERROR_MEMORY";
    case NVML_ERROR_NO_DATA: return "NVML_ERROR_NO_DATA";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case NVML_ERROR_DEPRECATED: return "NVML_ERROR_DEPRECATED";
    case NVML_ERROR_NOT_READY: return "NVML_ERROR_NOT_READY";
    case NVML_ERROR_GPU_NOT_FOUND: return "NVML_ERROR_GPU_NOT_FOUND";
    case NVML_ERROR_INVALID_STATE: return "NVML_ERROR_INVALID_STATE";
    case NVML_ERROR_UNKNOWN: return "NVML_ERROR_UNKNOWN";
    default: return "NVML_ERROR_(unknown code)";
  }
}

ErrorKind error_kind(nvmlReturn_t code) {
  switch (code) {
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
    case NVML_ERROR_DEPRECATED:
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return ErrorKind::not_supported;
    case NVML_ERROR_NO_PERMISSION: return ErrorKind::no_permission;
    case NVML_ERROR_NOT_FOUND:
    case NVML_ERROR_GPU_NOT_FOUND: return ErrorKind::not_found;
    case NVML_ERROR_GPU_IS_LOST:
    case NVML_ERROR_RESET_REQUIRED: return ErrorKind::device_lost;
    case NVML_ERROR_DRIVER_NOT_LOADED:
    case NVML_ERROR_LIBRARY_NOT_FOUND:
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
    case NVML_ERROR_INSUFFICIENT_POWER:
    case NVML_ERROR_IN_USE:
    case NVML_ERROR_NO_DATA:
    case NVML_ERROR_NOT_READY:
    case NVML_ERROR_INVALID_STATE:
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
    case NVML_ERROR_OPERATING_SYSTEM: return ErrorKind::unavailable;
    case NVML_ERROR_TIMEOUT:
    case NVML_ERROR_IRQ_ISSUE:
    case NVML_ERROR_CORRUPTED_INFOROM:
    case NVML_ERROR_UNKNOWN: return ErrorKind::io;
    default: return ErrorKind::internal;  // uninitialized, bad argument, buffer size: wattlab's bug
  }
}

std::string hint_for(nvmlReturn_t code) {
  switch (code) {
    case NVML_ERROR_NOT_SUPPORTED: return "this GPU or driver does not provide it; wattlab skips it";
    case NVML_ERROR_NO_PERMISSION:
      return "the driver refused: check that this user can open /dev/nvidiactl and /dev/nvidia* (group 'video' "
             "on many systems); in a container, pass the GPUs (docker --gpus all)";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "the NVIDIA kernel driver is not loaded: check `nvidia-smi` and `lsmod | grep nvidia`; in a container, "
             "run with the NVIDIA runtime (docker --gpus all)";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "NVML could not find its driver components; if the loaded file is the CUDA toolkit's stub "
             "(lib/stubs), put the driver's libnvidia-ml.so.1 first on the library path";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "libnvidia-ml and the kernel driver differ in version (driver updated without a reboot): reboot, or "
             "reload the nvidia kernel modules";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "the driver is older than this call needs: update the NVIDIA driver";
    case NVML_ERROR_GPU_IS_LOST:
      return "the GPU fell off the bus or stopped answering: check `nvidia-smi` and `dmesg` (Xid errors); readings of "
             "this GPU end here";
    case NVML_ERROR_RESET_REQUIRED: return "the GPU needs a reset (nvidia-smi -r) or a reboot";
    case NVML_ERROR_INSUFFICIENT_POWER: return "check the GPU's auxiliary power cables";
    case NVML_ERROR_TIMEOUT:
    case NVML_ERROR_UNKNOWN: return "check `dmesg` for Xid errors and `nvidia-smi`";
    case NVML_ERROR_IN_USE: return "another process holds this resource; retry later";
    case NVML_ERROR_UNINITIALIZED:
    case NVML_ERROR_INVALID_ARGUMENT:
    case NVML_ERROR_INSUFFICIENT_SIZE: return "this is a wattlab bug: please report it with the driver version";
    default: return {};
  }
}

std::string Library::describe(nvmlReturn_t code) const {
  std::string s = std::to_string(code) + " " + return_name(code);
  if (api_.error_string) {
    const char* msg = api_.error_string(code);
    if (msg && *msg) s += std::string(" (\"") + msg + "\")";
  }
  return s;
}

std::string Library::name_of(std::string_view newest) const {
  for (const auto& f : fallbacks_)
    if (f.first == newest) return f.second;
  return std::string(newest);
}

Error Library::error(std::string_view call, nvmlReturn_t code, std::string_view domain) const {
  Error e;
  e.kind = error_kind(code);
  e.what = std::string(call) + "(" + (domain.empty() ? std::string() : std::string(domain)) + ") returned " +
           describe(code);
  e.hint = hint_for(code);
  e.vendor_code = code;
  return e;
}

Library::~Library() {
  if (initialized_ && api_.shutdown) api_.shutdown();
  if (handle_) dlclose(handle_);
}

Result<std::shared_ptr<Library>> Library::open(const std::string& path_arg) {
  std::shared_ptr<Library> lib(new Library());
  std::vector<std::string> candidates;
  std::string origin;
  if (!path_arg.empty()) {
    candidates.push_back(path_arg);
    origin = " (from --nvml-library)";
  } else if (const char* env = std::getenv("WATTLAB_NVML_LIBRARY"); env && *env) {
    candidates.emplace_back(env);
    origin = " (from WATTLAB_NVML_LIBRARY)";
  } else {
    for (const char* n : kDefaultLibraryNames) candidates.emplace_back(n);
  }

  // 1. dlopen, in order.
  std::string tried;
  for (const auto& name : candidates) {
    dlerror();
    lib->handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib->handle_) {
      lib->requested_ = name;
      break;
    }
    if (!tried.empty()) tried += "; then ";
    tried += name + ": " + dl_error();
  }
  if (!lib->handle_) {
    Error e{ErrorKind::not_found, "NVML library not loaded: dlopen " + tried + origin,
            "install the NVIDIA driver (it provides libnvidia-ml.so.1), in a container run with the NVIDIA runtime "
            "(docker --gpus all), or point WATTLAB_NVML_LIBRARY at the file",
            0};
    return e;
  }
  link_map* lm = nullptr;
  if (dlinfo(lib->handle_, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
    lib->path_ = lm->l_name;
  else
    lib->path_ = lib->requested_;

  if (lib->path_.find("/stubs/") != std::string::npos) {
    Error e{ErrorKind::unavailable,
            "NVML library " + lib->path_ + " is the CUDA toolkit's stub (lib/stubs), which fails every call" + origin,
            "remove the toolkit's stubs folder from LD_LIBRARY_PATH so the driver's libnvidia-ml.so.1 is found, or "
            "install the NVIDIA driver",
            0};
    return e;
  }

  // 2. Symbols, newest version first.
  Api& a = lib->api_;
  std::string missing_required;
  auto resolve = [&](auto& slot, bool required, std::initializer_list<const char*> names) {
    for (const char* n : names) {
      dlerror();
      if (void* p = dlsym(lib->handle_, n)) {
        assign(slot, p);
        if (n != *names.begin()) lib->fallbacks_.emplace_back(*names.begin(), n);
        return;
      }
    }
    if (required) {
      if (!missing_required.empty()) missing_required += ", ";
      missing_required += join(names);
    } else {
      lib->missing_.emplace_back(*names.begin());
    }
  };
  resolve(a.init, true, {"nvmlInit_v2", "nvmlInit"});
  resolve(a.shutdown, true, {"nvmlShutdown"});
  resolve(a.device_get_count, true, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  resolve(a.device_get_handle_by_index, true, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  resolve(a.error_string, false, {"nvmlErrorString"});
  resolve(a.system_get_driver_version, false, {"nvmlSystemGetDriverVersion"});
  resolve(a.system_get_nvml_version, false, {"nvmlSystemGetNVMLVersion"});
  resolve(a.system_get_cuda_driver_version, false, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  resolve(a.device_get_name, false, {"nvmlDeviceGetName"});
  resolve(a.device_get_uuid, false, {"nvmlDeviceGetUUID"});
  resolve(a.device_get_index, false, {"nvmlDeviceGetIndex"});
  resolve(a.device_get_pci_info, false, {"nvmlDeviceGetPciInfo_v3"});
  resolve(a.device_get_architecture, false, {"nvmlDeviceGetArchitecture"});
  resolve(a.device_get_persistence_mode, false, {"nvmlDeviceGetPersistenceMode"});
  resolve(a.device_get_mig_mode, false, {"nvmlDeviceGetMigMode"});
  resolve(a.device_get_max_mig_device_count, false, {"nvmlDeviceGetMaxMigDeviceCount"});
  resolve(a.device_get_mig_device_handle_by_index, false, {"nvmlDeviceGetMigDeviceHandleByIndex"});
  resolve(a.device_get_ecc_mode, false, {"nvmlDeviceGetEccMode"});
  resolve(a.device_get_power_management_limit_constraints, false, {"nvmlDeviceGetPowerManagementLimitConstraints"});
  resolve(a.device_get_power_management_default_limit, false, {"nvmlDeviceGetPowerManagementDefaultLimit"});
  resolve(a.device_get_enforced_power_limit, false, {"nvmlDeviceGetEnforcedPowerLimit"});
  resolve(a.device_get_total_energy_consumption, false, {"nvmlDeviceGetTotalEnergyConsumption"});
  resolve(a.device_get_power_usage, false, {"nvmlDeviceGetPowerUsage"});
  resolve(a.device_get_field_values, false, {"nvmlDeviceGetFieldValues"});
  resolve(a.device_get_samples, false, {"nvmlDeviceGetSamples"});
  resolve(a.device_get_clock_info, false, {"nvmlDeviceGetClockInfo"});
  resolve(a.device_get_temperature, false, {"nvmlDeviceGetTemperature"});
  resolve(a.device_get_utilization_rates, false, {"nvmlDeviceGetUtilizationRates"});
  resolve(a.device_get_clocks_event_reasons, false,
          {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  resolve(a.device_get_violation_status, false, {"nvmlDeviceGetViolationStatus"});
  resolve(a.device_get_memory_info_v2, false, {"nvmlDeviceGetMemoryInfo_v2"});
  resolve(a.device_get_memory_info, false, {"nvmlDeviceGetMemoryInfo"});
  resolve(a.device_get_process_utilization, false, {"nvmlDeviceGetProcessUtilization"});
  resolve(a.device_get_compute_running_processes_v2, false,
          {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  resolve(a.device_get_compute_running_processes_v1, false, {"nvmlDeviceGetComputeRunningProcesses"});
  resolve(a.gpm_query_device_support, false, {"nvmlGpmQueryDeviceSupport"});
  resolve(a.gpm_sample_alloc, false, {"nvmlGpmSampleAlloc"});
  resolve(a.gpm_sample_free, false, {"nvmlGpmSampleFree"});
  resolve(a.gpm_sample_get, false, {"nvmlGpmSampleGet"});
  resolve(a.gpm_metrics_get, false, {"nvmlGpmMetricsGet"});
  if (!missing_required.empty()) {
    Error e{ErrorKind::not_found,
            "NVML library " + lib->path_ + " lacks the required function(s) " + missing_required + origin,
            "this is not a usable libnvidia-ml (or the driver is far too old): install a current NVIDIA driver, or "
            "point WATTLAB_NVML_LIBRARY at the driver's libnvidia-ml.so.1",
            NVML_ERROR_FUNCTION_NOT_FOUND};
    return e;
  }

  // 3. Initialize once; NVML stays initialized until this object goes (docs/sensors.md section 5).
  const nvmlReturn_t rc = a.init();
  if (rc != NVML_SUCCESS) {
    Error e = lib->error(lib->name_of("nvmlInit_v2"), rc);
    e.what += " (library " + lib->path_ + origin + ")";
    if (lib->requested_ == "libnvidia-ml.so")
      e.hint += "; libnvidia-ml.so.1 was not found and the unversioned libnvidia-ml.so that loaded may be the CUDA "
                "toolkit's stub (lib/stubs), which fails every call";
    return e;
  }
  lib->initialized_ = true;

  char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (a.system_get_driver_version && a.system_get_driver_version(buf, sizeof buf) == NVML_SUCCESS)
    lib->driver_version_ = buf;
  char nbuf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {};
  if (a.system_get_nvml_version && a.system_get_nvml_version(nbuf, sizeof nbuf) == NVML_SUCCESS)
    lib->nvml_version_ = nbuf;
  int cuda = 0;
  if (a.system_get_cuda_driver_version && a.system_get_cuda_driver_version(&cuda) == NVML_SUCCESS)
    lib->cuda_driver_version_ = cuda;
  return lib;
}

}  // namespace wattlab::nvml
