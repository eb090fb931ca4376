// What the C API's handles hold, and the one way its entry points turn C++ failures into a status
// and this thread's last-error message. Internal to libwattlab.so.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "wattlab/core/clock.h"
#include "wattlab/record/recording.h"
#include "wattlab/wattlab_c.h"

struct wattlab_options {
  wattlab::RecordingOptions rec;
  std::optional<int64_t> virtual_start_ns;
};

// What a window was told besides its edges: counts add up, labels replace.
struct WindowNotes {
  std::map<std::string, double> counts;
  std::map<std::string, std::string> labels;
};

struct wattlab_meter {
  // Declared first, destroyed last: the recording and its meter read this clock until they go.
  std::unique_ptr<wattlab::VirtualClock> virtual_clock;
  // The process that opened the meter (wattlab::capi::fork_generation() when it did).
  uint64_t fork_generation = 0;
  bool storing = false;
  std::vector<std::string> domain_ids;
  std::vector<std::string> domain_parents;
  mutable std::mutex notes_mu;
  std::vector<std::string> notes;  // the recording's notes; it writes them until it is gone
  // Counts and labels of windows, by id; pruned to the meter's finished-result capacity.
  std::mutex window_notes_mu;
  std::unordered_map<wattlab_window_id, WindowNotes> window_notes;
  std::atomic<wattlab_window_id> newest_id{0};
  // Declared last, destroyed first.
  std::unique_ptr<wattlab::Recording> recording;
};

struct wattlab_result {
  wattlab::WindowResult window;
  std::vector<std::string> estimators;  // to_string of each domain's estimator
  std::vector<std::pair<std::string, double>> counts;
  std::vector<std::pair<std::string, std::string>> labels;
};

namespace wattlab::capi {

// Sets this thread's last error and returns `status`.
wattlab_status fail(wattlab_status status, std::string message);
// For accessors that return a value: records the error, returns nothing.
void note_error(wattlab_status status, std::string message);

// A thrown failure that carries its C status.
struct CError {
  wattlab_status status;
  std::string message;
};

// Bumped in the child after fork(): a meter opened under an older generation is the parent's.
uint64_t fork_generation();
void watch_forks();

// Runs `body` (returning wattlab_status); every C++ exception becomes a status and a message
// that starts with `fn`, the C function's name.
template <class F>
wattlab_status guard(const char* fn, F&& body) noexcept {
  try {
    return body();
  } catch (const CError& e) {
    return fail(e.status, std::string(fn) + ": " + e.message);
  } catch (const wattlab::UsageError& e) {
    return fail(WATTLAB_ERR_INVALID_ARGUMENT, std::string(fn) + ": " + e.what());
  } catch (const wattlab::WattlabError& e) {
    const bool store = e.error().kind == ErrorKind::io || e.error().kind == ErrorKind::schema;
    return fail(store ? WATTLAB_ERR_STORE : WATTLAB_ERR_INTERNAL, std::string(fn) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return fail(WATTLAB_ERR_INTERNAL, std::string(fn) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(WATTLAB_ERR_INTERNAL, std::string(fn) + ": " + e.what());
  } catch (...) {
    return fail(WATTLAB_ERR_INTERNAL, std::string(fn) + ": an unknown exception");
  }
}

// Throws CError for a NULL pointer argument named `what`.
inline void need(const void* p, const char* what) {
  if (!p) throw CError{WATTLAB_ERR_INVALID_ARGUMENT, std::string(what) + " is NULL"};
}

// Throws CError for a NULL meter or one this process did not open (a forked child's copy).
void check_meter(const wattlab_meter* m);

}  // namespace wattlab::capi
