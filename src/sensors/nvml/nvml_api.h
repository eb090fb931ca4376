// The subset of the NVML C API that wattlab calls, declared here so nothing includes nvml.h and
// nothing links libnvidia-ml at build time (docs/sensors.md section 5). Layouts follow NVIDIA's
// public nvml.h (CUDA 12.x/13.x); the static_asserts at the end pin every struct the driver writes
// into, so a layout slip fails the build instead of corrupting memory at run time.
//
// Used by the loader (function pointer types), the sensor (types, constants) and the test fake
// (tests/sensors/nvml/fake_nvml), which implements these signatures with extern "C" linkage.
#pragma once
#include <cstddef>

namespace wattlab::nvml {

// ---- return codes (nvmlReturn_t is a C enum: int-sized) -------------------------------------
using nvmlReturn_t = int;
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_ALREADY_INITIALIZED = 5;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_POWER = 8;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_IRQ_ISSUE = 11;
inline constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_CORRUPTED_INFOROM = 14;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_RESET_REQUIRED = 16;
inline constexpr nvmlReturn_t NVML_ERROR_OPERATING_SYSTEM = 17;
inline constexpr nvmlReturn_t NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18;
inline constexpr nvmlReturn_t NVML_ERROR_IN_USE = 19;
inline constexpr nvmlReturn_t NVML_ERROR_MEMORY = 20;
inline constexpr nvmlReturn_t NVML_ERROR_NO_DATA = 21;
inline constexpr nvmlReturn_t NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_RESOURCES = 23;
inline constexpr nvmlReturn_t NVML_ERROR_FREQ_NOT_SUPPORTED = 24;
inline constexpr nvmlReturn_t NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25;
inline constexpr nvmlReturn_t NVML_ERROR_DEPRECATED = 26;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_READY = 27;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_NOT_FOUND = 28;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_STATE = 29;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

// ---- handles -------------------------------------------------------------------------------
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlGpmSample_st;
using nvmlGpmSample_t = nvmlGpmSample_st*;

// ---- enums (all C enums: unsigned int-sized) -----------------------------------------------
using nvmlEnableState_t = unsigned int;  // 0 disabled, 1 enabled
inline constexpr nvmlEnableState_t NVML_FEATURE_DISABLED = 0;
inline constexpr nvmlEnableState_t NVML_FEATURE_ENABLED = 1;

using nvmlClockType_t = unsigned int;
inline constexpr nvmlClockType_t NVML_CLOCK_GRAPHICS = 0;
inline constexpr nvmlClockType_t NVML_CLOCK_SM = 1;
inline constexpr nvmlClockType_t NVML_CLOCK_MEM = 2;

using nvmlTemperatureSensors_t = unsigned int;
inline constexpr nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0;

using nvmlPerfPolicyType_t = unsigned int;
inline constexpr nvmlPerfPolicyType_t NVML_PERF_POLICY_POWER = 0;
inline constexpr nvmlPerfPolicyType_t NVML_PERF_POLICY_THERMAL = 1;

using nvmlSamplingType_t = unsigned int;
inline constexpr nvmlSamplingType_t NVML_TOTAL_POWER_SAMPLES = 0;

using nvmlDeviceArchitecture_t = unsigned int;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_VOLTA = 5;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_TURING = 6;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_AMPERE = 7;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_ADA = 8;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_HOPPER = 9;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_BLACKWELL = 10;

using nvmlValueType_t = unsigned int;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_DOUBLE = 0;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_INT = 1;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_LONG = 2;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_SIGNED_INT = 5;
inline constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_SHORT = 6;

// ---- field values --------------------------------------------------------------------------
inline constexpr unsigned int NVML_FI_DEV_MEMORY_TEMP = 82;     // HBM temperature, degC
inline constexpr unsigned int NVML_FI_DEV_POWER_AVERAGE = 185;  // mW, 1 s average (Ampere+)
inline constexpr unsigned int NVML_FI_DEV_POWER_INSTANT = 186;  // mW, "current" power
inline constexpr unsigned int NVML_FI_DEV_POWER_MIN_LIMIT = 187;
inline constexpr unsigned int NVML_FI_DEV_POWER_MAX_LIMIT = 188;
inline constexpr unsigned int NVML_FI_DEV_POWER_DEFAULT_LIMIT = 189;
inline constexpr unsigned int NVML_FI_DEV_POWER_CURRENT_LIMIT = 190;
inline constexpr unsigned int NVML_FI_DEV_ENERGY = 191;         // mJ since driver load
inline constexpr unsigned int NVML_FI_DEV_POWER_REQUESTED_LIMIT = 192;

inline constexpr unsigned int NVML_POWER_SCOPE_GPU = 0;
inline constexpr unsigned int NVML_POWER_SCOPE_MODULE = 1;  // GPU + Grace CPU + memory (GH200)
inline constexpr unsigned int NVML_POWER_SCOPE_MEMORY = 2;  // HBM

union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};

struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;    // CPU time of the measurement, us since the epoch
  long long latencyUsec;  // how stale the value may be
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;  // this field's own status
  nvmlValue_t value;
};

struct nvmlSample_t {
  unsigned long long timeStamp;  // us since the epoch
  nvmlValue_t sampleValue;
};

struct nvmlUtilization_t {
  unsigned int gpu;     // % of the last period with a kernel running
  unsigned int memory;  // % of the last period with memory being read or written
};

struct nvmlMemory_t {
  unsigned long long total, free, used;  // bytes
};
struct nvmlMemory_v2_t {
  unsigned int version;  // nvmlMemory_v2
  unsigned long long total, reserved, free, used;
};
// NVML_STRUCT_VERSION(Memory, 2): sizeof | version << 24.
inline constexpr unsigned int nvmlMemory_v2 = static_cast<unsigned int>(sizeof(nvmlMemory_v2_t)) | (2u << 24);

struct nvmlViolationTime_t {
  unsigned long long referenceTime;  // us since the epoch
  unsigned long long violationTime;  // cumulative ns held by the policy
};

inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;
struct nvmlPciInfo_t {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "00000000:19:00.0"
};

struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;  // us since the epoch
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};

// nvmlDeviceGetComputeRunningProcesses_v3 and _v2 fill this; the unversioned call fills _v1.
struct nvmlProcessInfo_v2_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes; NVML_VALUE_NOT_AVAILABLE where unknown
  unsigned int gpuInstanceId;        // 0xFFFFFFFF without MIG
  unsigned int computeInstanceId;
};
struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ull;

inline constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80;

// ---- GPM (Hopper and later) ----------------------------------------------------------------
inline constexpr unsigned int NVML_GPM_METRIC_SM_UTIL = 2;
inline constexpr unsigned int NVML_GPM_METRIC_SM_OCCUPANCY = 3;
inline constexpr unsigned int NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5;
inline constexpr unsigned int NVML_GPM_METRIC_DRAM_BW_UTIL = 10;
// Headers have grown this (98, 210, 333...). NVML touches only metrics[0..numMetrics), so the
// largest published value is the safe choice for our own buffer.
inline constexpr unsigned int NVML_GPM_METRIC_MAX = 333;
inline constexpr unsigned int NVML_GPM_METRICS_GET_VERSION = 1;
inline constexpr unsigned int NVML_GPM_SUPPORT_VERSION = 1;

struct nvmlGpmMetric_t {
  unsigned int metricId;    // in
  nvmlReturn_t nvmlReturn;  // out: this metric's status
  double value;             // out: valid only when nvmlReturn is NVML_SUCCESS
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};

struct nvmlGpmMetricsGet_t {
  unsigned int version;  // NVML_GPM_METRICS_GET_VERSION
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
};

struct nvmlGpmSupport_t {
  unsigned int version;  // NVML_GPM_SUPPORT_VERSION
  unsigned int isSupportedDevice;
};

// ---- function signatures (one alias per symbol family; versions share a signature) ----------
extern "C" {
using nvmlInit_fn = nvmlReturn_t (*)();
using nvmlShutdown_fn = nvmlReturn_t (*)();
using nvmlErrorString_fn = const char* (*)(nvmlReturn_t);
using nvmlSystemGetString_fn = nvmlReturn_t (*)(char*, unsigned int);  // driver / NVML version
using nvmlSystemGetCudaDriverVersion_fn = nvmlReturn_t (*)(int*);
using nvmlDeviceGetCount_fn = nvmlReturn_t (*)(unsigned int*);
using nvmlDeviceGetHandleByIndex_fn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using nvmlDeviceGetString_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);  // name, UUID
using nvmlDeviceGetUInt_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);  // index, power, limit
using nvmlDeviceGetULL_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);  // energy, reasons
using nvmlDeviceGetPciInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using nvmlDeviceGetTwoUInt_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);  // MIG mode, limits
using nvmlDeviceGetEnableState_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlEnableState_t*);
using nvmlDeviceGetTwoEnableState_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlEnableState_t*, nvmlEnableState_t*);
using nvmlDeviceGetArchitecture_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDeviceArchitecture_t*);
using nvmlDeviceGetFieldValues_fn = nvmlReturn_t (*)(nvmlDevice_t, int, nvmlFieldValue_t*);
using nvmlDeviceGetSamples_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlSamplingType_t, unsigned long long,
                                                 nvmlValueType_t*, unsigned int*, nvmlSample_t*);
using nvmlDeviceGetClockInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned int*);
using nvmlDeviceGetTemperature_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*);
using nvmlDeviceGetUtilizationRates_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using nvmlDeviceGetViolationStatus_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPerfPolicyType_t, nvmlViolationTime_t*);
using nvmlDeviceGetMemoryInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using nvmlDeviceGetMemoryInfo_v2_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*);
using nvmlDeviceGetProcessUtilization_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlProcessUtilizationSample_t*,
                                                            unsigned int*, unsigned long long);
using nvmlDeviceGetComputeRunningProcesses_v2_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*);
using nvmlDeviceGetComputeRunningProcesses_v1_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*);
using nvmlDeviceGetMigDeviceHandleByIndex_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlDevice_t*);
using nvmlGpmQueryDeviceSupport_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSupport_t*);
using nvmlGpmSampleAlloc_fn = nvmlReturn_t (*)(nvmlGpmSample_t*);
using nvmlGpmSampleFree_fn = nvmlReturn_t (*)(nvmlGpmSample_t);
using nvmlGpmSampleGet_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSample_t);
using nvmlGpmMetricsGet_fn = nvmlReturn_t (*)(nvmlGpmMetricsGet_t*);
}

// ---- layout checks (x86-64 / aarch64 LP64, as nvml.h lays them out) -------------------------
static_assert(sizeof(nvmlValue_t) == 8);
static_assert(sizeof(nvmlFieldValue_t) == 40 && offsetof(nvmlFieldValue_t, timestamp) == 8 &&
              offsetof(nvmlFieldValue_t, valueType) == 24 && offsetof(nvmlFieldValue_t, nvmlReturn) == 28 &&
              offsetof(nvmlFieldValue_t, value) == 32);
static_assert(sizeof(nvmlSample_t) == 16);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32 &&
              offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8);
static_assert(sizeof(nvmlViolationTime_t) == 16);
static_assert(sizeof(nvmlMemory_t) == 24 && sizeof(nvmlMemory_v2_t) == 40);
static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, busId) == 36);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24 && sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlGpmMetric_t) == 40 && offsetof(nvmlGpmMetric_t, value) == 8);
static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24);
static_assert(sizeof(nvmlUtilization_t) == 8 && sizeof(nvmlGpmSupport_t) == 8);

}  // namespace wattlab::nvml
