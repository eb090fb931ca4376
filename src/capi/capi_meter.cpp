// wattlab_meter: one wattlab::Recording (the run lifecycle, docs/record.md) per meter: opened on
// the chosen devices, storing when a db is set, ended with a status when the meter is closed.
#include <algorithm>
#include <cstring>
#include <string>

#include "capi_internal.h"

using wattlab::capi::CError;
using wattlab::capi::check_meter;
using wattlab::capi::guard;
using wattlab::capi::need;

namespace wattlab::capi {
namespace {

// Why no domain is measured: every backend's status, "nvml: libnvidia-ml.so.1 not found; ...".
std::string nothing_opened(const wattlab::OpenedSensors& opened, const std::string& device) {
  std::string why;
  for (const auto& s : opened.statuses) why += (why.empty() ? "" : "; ") + s.backend + ": " + s.detail;
  return "device '" + device + "' found nothing to measure" + (why.empty() ? "" : " (" + why + ")") +
         "; use sim for the simulated GPU";
}

void add_note(wattlab_meter& m, std::string_view text) {
  std::lock_guard lk(m.notes_mu);
  m.notes.emplace_back(text);
}

}  // namespace
}  // namespace wattlab::capi

extern "C" {

wattlab_status wattlab_meter_open(const wattlab_options* options, wattlab_meter** out) {
  return guard("wattlab_meter_open", [&] {
    need(out, "out");
    *out = nullptr;
    wattlab::capi::watch_forks();
    auto m = std::make_unique<wattlab_meter>();
    m->fork_generation = wattlab::capi::fork_generation();
    wattlab::RecordingOptions o = options ? options->rec : wattlab::RecordingOptions{};
    if (options && options->virtual_start_ns) {
      m->virtual_clock = std::make_unique<wattlab::VirtualClock>(*options->virtual_start_ns);
      o.devices.clock = m->virtual_clock.get();
    }
    wattlab_meter* raw = m.get();
    o.on_note = [raw](std::string_view text) { wattlab::capi::add_note(*raw, text); };
    m->storing = !o.db.empty();
    const std::string device = o.devices.device;
    m->recording = std::make_unique<wattlab::Recording>(std::move(o));
    if (m->recording->domain_count() == 0)
      throw CError{WATTLAB_ERR_NO_DEVICE, wattlab::capi::nothing_opened(m->recording->opened(), device)};
    for (const auto& s : m->recording->opened().statuses)
      if (!s.loaded) wattlab::capi::add_note(*m, s.backend + " not loaded: " + s.detail);
    try {
      if (!m->recording->start())
        wattlab::capi::add_note(*m, "some sensor did not answer within 10 s; its first windows may lack readings");
    } catch (const wattlab::WattlabError& e) {
      throw CError{m->storing ? WATTLAB_ERR_STORE : WATTLAB_ERR_INTERNAL, e.what()};
    }
    for (const auto& d : m->recording->meter().domains()) {
      m->domain_ids.push_back(d.id);
      m->domain_parents.push_back(d.parent);
    }
    *out = m.release();
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_meter_close(wattlab_meter* meter, int exit_status) {
  if (!meter) return WATTLAB_OK;
  return guard("wattlab_meter_close", [&] {
    // A forked child's copy: its sampler and flush threads do not exist here, and ending the run
    // would end the parent's. It is left as it is (the memory goes with the child).
    check_meter(meter);
    std::unique_ptr<wattlab_meter> owned(meter);
    owned->recording->end(exit_status);
    return WATTLAB_OK;
  });
}

int wattlab_meter_simulated(const wattlab_meter* meter) {
  return meter && meter->recording && meter->recording->simulated() ? 1 : 0;
}

wattlab_status wattlab_meter_run_id(const wattlab_meter* meter, int64_t* out) {
  return guard("wattlab_meter_run_id", [&] {
    check_meter(meter);
    need(out, "out");
    *out = meter->recording->run_id();
    return WATTLAB_OK;
  });
}

size_t wattlab_meter_domain_count(const wattlab_meter* meter) { return meter ? meter->domain_ids.size() : 0; }

const char* wattlab_meter_domain_id(const wattlab_meter* meter, size_t index) {
  if (!meter || index >= meter->domain_ids.size()) {
    wattlab::capi::note_error(WATTLAB_ERR_INVALID_ARGUMENT, "wattlab_meter_domain_id: no domain " + std::to_string(index));
    return nullptr;
  }
  return meter->domain_ids[index].c_str();
}

const char* wattlab_meter_domain_parent(const wattlab_meter* meter, size_t index) {
  if (!meter || index >= meter->domain_parents.size()) {
    wattlab::capi::note_error(WATTLAB_ERR_INVALID_ARGUMENT, "wattlab_meter_domain_parent: no domain " + std::to_string(index));
    return nullptr;
  }
  return meter->domain_parents[index].c_str();
}

size_t wattlab_meter_note_count(const wattlab_meter* meter) {
  if (!meter) return 0;
  std::lock_guard lk(meter->notes_mu);
  return meter->notes.size();
}

size_t wattlab_meter_note(const wattlab_meter* meter, size_t index, char* buf, size_t size) {
  if (!meter) return 0;
  std::lock_guard lk(meter->notes_mu);
  if (index >= meter->notes.size()) return 0;
  const std::string& n = meter->notes[index];
  if (buf && size > 0) {
    const std::size_t k = std::min(n.size(), size - 1);
    std::memcpy(buf, n.data(), k);
    buf[k] = '\0';
  }
  return n.size();
}

wattlab_status wattlab_meter_now_ns(const wattlab_meter* meter, int64_t* out) {
  return guard("wattlab_meter_now_ns", [&] {
    check_meter(meter);
    need(out, "out");
    *out = meter->recording->clock().now_ns();
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_meter_advance(wattlab_meter* meter, int64_t dur_ns) {
  return guard("wattlab_meter_advance", [&] {
    check_meter(meter);
    if (!meter->virtual_clock)
      throw CError{WATTLAB_ERR_NOT_VIRTUAL, "the meter runs on real time; only a meter opened with a virtual clock advances"};
    if (dur_ns < 0) throw CError{WATTLAB_ERR_INVALID_ARGUMENT, "duration " + std::to_string(dur_ns) + " ns is negative"};
    if (meter->recording->ended()) throw CError{WATTLAB_ERR_ENDED, "the run has ended"};
    meter->recording->meter().advance_to(meter->virtual_clock->now_ns() + dur_ns);
    if (meter->storing)
      if (const wattlab::Status st = meter->recording->flush(); !st)
        throw CError{WATTLAB_ERR_STORE, st.error().message()};
    return WATTLAB_OK;
  });
}

}  // extern "C"
