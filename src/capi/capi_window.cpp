// Windows of a wattlab_meter: open and close (a timestamp each, any thread), counts and labels, and
// results. With a store, windows go through the recording (stored once final, and again at the
// end); without one, straight to the meter, so nothing grows with the number of windows.
#include <chrono>
#include <stdexcept>
#include <string>

#include "capi_internal.h"

using wattlab::capi::CError;
using wattlab::capi::check_meter;
using wattlab::capi::guard;
using wattlab::capi::need;

namespace wattlab::capi {
namespace {

[[noreturn]] void unknown_window(wattlab_window_id id) {
  throw CError{WATTLAB_ERR_UNKNOWN_WINDOW,
               "window " + std::to_string(id) + " is not known to this meter (never opened, or its result was dropped)"};
}

void check_ended(const wattlab_meter& m) {
  if (m.recording->ended()) throw CError{WATTLAB_ERR_ENDED, "the run has ended"};
}

// Ids come from one counter in order, so a window newer than the newest one handed out is unknown.
void check_id(const wattlab_meter& m, wattlab_window_id id) {
  if (id == 0 || id > m.newest_id.load(std::memory_order_acquire)) unknown_window(id);
}

void note_newest(wattlab_meter& m, wattlab_window_id id) {
  wattlab_window_id seen = m.newest_id.load(std::memory_order_relaxed);
  while (id > seen && !m.newest_id.compare_exchange_weak(seen, id, std::memory_order_release)) {
  }
}

// Notes of windows whose results the meter no longer keeps are dropped with them.
void prune_notes(wattlab_meter& m) {
  const std::size_t keep = m.recording->meter().options().finished_window_capacity;
  if (m.window_notes.size() <= 2 * keep) return;
  const wattlab_window_id newest = m.newest_id.load(std::memory_order_acquire);
  const wattlab_window_id oldest_kept = newest > keep ? newest - keep : 0;
  std::erase_if(m.window_notes, [&](const auto& kv) { return kv.first < oldest_kept; });
}

// Applies a window's counts and labels to its result and wraps it for C.
wattlab_result* wrap(wattlab_meter& m, wattlab::WindowResult r) {
  {
    std::lock_guard lk(m.window_notes_mu);
    if (auto it = m.window_notes.find(r.id); it != m.window_notes.end()) {
      for (const auto& [k, v] : it->second.counts) r.counts[k] = v;
      for (const auto& [k, v] : it->second.labels) r.labels[k] = v;
    }
  }
  auto out = std::make_unique<wattlab_result>();
  for (const auto& d : r.domains) out->estimators.push_back(wattlab::to_string(d.estimator));
  out->counts.assign(r.counts.begin(), r.counts.end());
  out->labels.assign(r.labels.begin(), r.labels.end());
  out->window = std::move(r);
  return out.release();
}

template <class F>
auto on_window(wattlab_window_id id, F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument&) {  // the meter's "no such window"
    unknown_window(id);
  }
}

// Annotates a tracked window from its notes (the store keeps them with its result).
void annotate(wattlab_meter& m, wattlab_window_id id, const WindowNotes& notes) {
  if (!m.storing) return;
  try {
    m.recording->annotate(id, notes.labels, notes.counts);
  } catch (const wattlab::WattlabError& e) {
    if (e.error().kind == wattlab::ErrorKind::not_found) unknown_window(id);
    throw;
  }
}

}  // namespace
}  // namespace wattlab::capi

extern "C" {

wattlab_status wattlab_window_open(wattlab_meter* meter, const char* name, wattlab_window_id* out) {
  return guard("wattlab_window_open", [&] {
    check_meter(meter);
    need(name, "name");
    need(out, "out");
    if (!*name) throw CError{WATTLAB_ERR_INVALID_ARGUMENT, "a window name is empty"};
    wattlab::capi::check_ended(*meter);
    const wattlab_window_id id = meter->storing ? meter->recording->open(name) : meter->recording->meter().open(name);
    wattlab::capi::note_newest(*meter, id);
    *out = id;
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_window_close(wattlab_meter* meter, wattlab_window_id id) {
  return guard("wattlab_window_close", [&] {
    check_meter(meter);
    wattlab::capi::check_id(*meter, id);
    wattlab::capi::check_ended(*meter);
    wattlab::capi::on_window(id, [&] {
      if (meter->storing) meter->recording->close(id);
      else meter->recording->meter().close(id);
    });
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_window_count(wattlab_meter* meter, wattlab_window_id id, const char* key, double n) {
  return guard("wattlab_window_count", [&] {
    check_meter(meter);
    need(key, "key");
    if (!*key) throw CError{WATTLAB_ERR_INVALID_ARGUMENT, "a count key is empty"};
    if (!(n >= 0) || n == std::numeric_limits<double>::infinity())
      throw CError{WATTLAB_ERR_INVALID_ARGUMENT, "count '" + std::string(key) + "' = " + std::to_string(n) + " is not a finite number >= 0"};
    wattlab::capi::check_id(*meter, id);
    std::lock_guard lk(meter->window_notes_mu);
    WindowNotes& notes = meter->window_notes[id];
    notes.counts[key] += n;
    wattlab::capi::annotate(*meter, id, notes);
    wattlab::capi::prune_notes(*meter);
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_window_label(wattlab_meter* meter, wattlab_window_id id, const char* key, const char* value) {
  return guard("wattlab_window_label", [&] {
    check_meter(meter);
    need(key, "key");
    need(value, "value");
    if (!*key) throw CError{WATTLAB_ERR_INVALID_ARGUMENT, "a label key is empty"};
    wattlab::capi::check_id(*meter, id);
    std::lock_guard lk(meter->window_notes_mu);
    WindowNotes& notes = meter->window_notes[id];
    notes.labels[key] = value;
    wattlab::capi::annotate(*meter, id, notes);
    wattlab::capi::prune_notes(*meter);
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_window_result(wattlab_meter* meter, wattlab_window_id id, wattlab_result** out) {
  return guard("wattlab_window_result", [&] {
    check_meter(meter);
    need(out, "out");
    *out = nullptr;
    wattlab::capi::check_id(*meter, id);
    wattlab::WindowResult r = wattlab::capi::on_window(id, [&] { return meter->recording->meter().provisional_result(id); });
    *out = wattlab::capi::wrap(*meter, std::move(r));
    return WATTLAB_OK;
  });
}

wattlab_status wattlab_window_wait(wattlab_meter* meter, wattlab_window_id id, int64_t timeout_ms, wattlab_result** out) {
  return guard("wattlab_window_wait", [&] {
    check_meter(meter);
    need(out, "out");
    *out = nullptr;
    if (timeout_ms < 0) throw CError{WATTLAB_ERR_INVALID_ARGUMENT, "timeout " + std::to_string(timeout_ms) + " ms is negative"};
    wattlab::capi::check_id(*meter, id);
    wattlab::WindowResult r = wattlab::capi::on_window(
        id, [&] { return meter->recording->meter().wait_result(id, std::chrono::milliseconds(timeout_ms)); });
    *out = wattlab::capi::wrap(*meter, std::move(r));
    return WATTLAB_OK;
  });
}

}  // extern "C"
