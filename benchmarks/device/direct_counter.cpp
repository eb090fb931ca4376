#include "direct_counter.h"

#include "wattlab/marks.h"

namespace wattlab::device {
using namespace wattlab::nvml;  // NVML_SUCCESS, nvmlDevice_t: the loader's own declarations

DirectCounter::DirectCounter(const std::string& uuid) {
  auto lib = nvml::Library::open();
  if (!lib) throw WattlabError(lib.error());
  lib_ = *lib;
  const auto& api = lib_->api();
  if (api.device_get_total_energy_consumption == nullptr)
    throw WattlabError(Error{ErrorKind::not_supported, "nvmlDeviceGetTotalEnergyConsumption is not in " + lib_->path(), ""});
  unsigned int count = 0;
  if (auto rc = api.device_get_count(&count); rc != NVML_SUCCESS) throw WattlabError(lib_->error("nvmlDeviceGetCount", rc));
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t h = nullptr;
    if (api.device_get_handle_by_index(i, &h) != NVML_SUCCESS) continue;
    char buf[96] = {};
    std::string u;
    if (api.device_get_uuid && api.device_get_uuid(h, buf, sizeof buf) == NVML_SUCCESS) u = buf;
    if (i == 0 || u == uuid) {
      dev_ = h;
      uuid_ = u;
    }
    if (u == uuid) break;
  }
  if (dev_ == nullptr) throw WattlabError(Error{ErrorKind::not_found, "no NVML device (count " + std::to_string(count) + ")", ""});
}

CounterRead DirectCounter::read() const {
  CounterRead r;
  unsigned long long mj = 0;
  r.t_begin_ns = marks::monotonic_ns();
  const nvmlReturn_t rc = lib_->api().device_get_total_energy_consumption(dev_, &mj);
  r.t_end_ns = marks::monotonic_ns();
  if (rc != NVML_SUCCESS) throw WattlabError(lib_->error("nvmlDeviceGetTotalEnergyConsumption", rc, uuid_));
  r.energy_mj = mj;
  return r;
}

UpdateEdge DirectCounter::read_at_update(int max_wait_ms) const {
  UpdateEdge e;
  e.before = read();
  e.reads = 1;
  const int64_t give_up_ns = e.before.t_begin_ns + static_cast<int64_t>(max_wait_ms) * 1'000'000;
  while (true) {
    const CounterRead r = read();
    ++e.reads;
    if (r.energy_mj != e.before.energy_mj) {
      e.after = r;
      return e;
    }
    e.before = r;
    if (r.t_end_ns > give_up_ns) break;
  }
  throw WattlabError(Error{ErrorKind::unavailable,
                           "the energy counter of " + uuid_ + " did not change in " + std::to_string(max_wait_ms) +
                               " ms (" + std::to_string(e.reads) + " reads)",
                           ""});
}

}  // namespace wattlab::device
