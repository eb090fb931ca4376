// wattlab_options: the device selection, the simulator's settings, the store and the run's
// command line and tags, handed to wattlab::Recording by wattlab_meter_open.
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "capi_internal.h"

namespace wattlab::capi {
namespace {

// The names wattlab::open_sensors knows; checked here so that a wrong name gets its own status.
constexpr std::array<std::string_view, 4> kDevices = {"auto", "sim", "nvml", "rapl"};

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const std::size_t comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) throw CError{WATTLAB_ERR_INVALID_ARGUMENT, "an empty entry in the GPU list '" + std::string(s) + "'"};
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace
}  // namespace wattlab::capi

using wattlab::capi::CError;
using wattlab::capi::guard;
using wattlab::capi::need;

extern "C" {

wattlab_status wattlab_options_new(wattlab_options** out) {
  return guard("wattlab_options_new", [&] {
    need(out, "out");
    *out = new wattlab_options();
    return WATTLAB_OK;
  });
}

void wattlab_options_free(wattlab_options* options) { delete options; }

wattlab_status wattlab_options_set_devices(wattlab_options* options, const char* device) {
  return guard("wattlab_options_set_devices", [&] {
    need(options, "options");
    need(device, "device");
    const std::string_view d(device);
    bool known = false;
    for (const auto k : wattlab::capi::kDevices) known = known || d == k;
    if (!known) throw CError{WATTLAB_ERR_UNKNOWN_DEVICE, "device '" + std::string(d) + "' is not known; use auto, sim, nvml or rapl"};
    options->rec.devices.device = device;
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_options_set_gpus(wattlab_options* options, const char* gpus) {
  return guard("wattlab_options_set_gpus", [&] {
    need(options, "options");
    options->rec.devices.gpus = gpus ? wattlab::capi::split_commas(gpus) : std::vector<std::string>{};
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_options_set_cpu(wattlab_options* options, int include_cpu) {
  return guard("wattlab_options_set_cpu", [&] {
    need(options, "options");
    options->rec.devices.cpu = include_cpu != 0;
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_options_set_sim_seed(wattlab_options* options, uint64_t seed) {
  return guard("wattlab_options_set_sim_seed", [&] {
    need(options, "options");
    options->rec.devices.sim_seed = seed;
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_options_set_sim_gpus(wattlab_options* options, int count) {
  return guard("wattlab_options_set_sim_gpus", [&] {
    need(options, "options");
    if (count < 1 || count > 64)
      throw CError{WATTLAB_ERR_INVALID_ARGUMENT, "sim GPU count " + std::to_string(count) + " is out of range; use 1 to 64"};
    options->rec.devices.sim_gpus = count;
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_options_set_sim_workload(wattlab_options* options, const char* script) {
  return guard("wattlab_options_set_sim_workload", [&] {
    need(options, "options");
    options->rec.devices.sim_workload = script ? script : "";
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_options_set_sim_gain_error(wattlab_options* options, double gain_error) {
  return guard("wattlab_options_set_sim_gain_error", [&] {
    need(options, "options");
    if (!std::isnan(gain_error) && !(std::fabs(gain_error) < 0.5))
      throw CError{WATTLAB_ERR_INVALID_ARGUMENT,
                   "sim gain error " + std::to_string(gain_error) + " is out of range; use a fraction within +-0.5, or NaN"};
    options->rec.devices.sim_gain_error = gain_error;
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_options_set_db(wattlab_options* options, const char* path) {
  return guard("wattlab_options_set_db", [&] {
    need(options, "options");
    options->rec.db = path ? path : "";
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_options_add_command_arg(wattlab_options* options, const char* arg) {
  return guard("wattlab_options_add_command_arg", [&] {
    need(options, "options");
    need(arg, "arg");
    options->rec.command.emplace_back(arg);
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_options_set_tag(wattlab_options* options, const char* key, const char* value) {
  return guard("wattlab_options_set_tag", [&] {
    need(options, "options");
    need(key, "key");
    need(value, "value");
    if (!*key) throw CError{WATTLAB_ERR_INVALID_ARGUMENT, "a tag key is empty"};
    options->rec.tags[key] = value;
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_options_set_virtual_clock(wattlab_options* options, int64_t start_ns) {
  return guard("wattlab_options_set_virtual_clock", [&] {
    need(options, "options");
    if (start_ns < 0) throw CError{WATTLAB_ERR_INVALID_ARGUMENT, "virtual clock start " + std::to_string(start_ns) + " ns is negative"};
    options->virtual_start_ns = start_ns;
    return WATTLAB_OK;
  });
}

}  // extern "C"
