// meter_validate's results: one CSV row per window, holding wattlab's estimate (an in-process
// Meter window), the energy counter read at the window's edges on the caller's thread (Zeus's
// method), the 10 ms power polls integrated, the memory domain, and the reference the window is
// judged against. Rows are written once wattlab's result is final (or, at the end, as they are).
#pragma once
#include <cstdint>
#include <deque>
#include <fstream>
#include <optional>
#include <string>

#include "direct_counter.h"
#include "nvml_poller.h"
#include "wattlab/meter/meter.h"
#include "wattlab/record/recording.h"

namespace wattlab::device {

struct WindowPlan {
  std::string part, level, set;
  std::string role = "window";  // window | rate | span | whole | part | phase | scan | zeus
  int repeat = 0;
  std::string name;
  // wattlab: opened and closed on the caller's thread (wl_id set, edges from the result), or
  // added with the explicit edges below (WindowLog::add).
  std::optional<WindowId> wl_id;
  std::string wl_api;  // open_close | add_window
  int64_t t_begin_ns = 0, t_end_ns = 0;
  // The energy counter read at the edges on the caller's thread; for edges on counter updates,
  // the first read showing the new value.
  std::optional<CounterRead> ctr_begin, ctr_end;
  double planned_s = kNaN;        // the length asked for
  double shift_ms = kNaN;         // edge windows: planned shift against the transition
  double shift_actual_ms = kNaN;  // and the shift it got
  double work_units = kNaN;       // units of the level's load inside the window
  double busy_s = kNaN;           // time the load ran inside the window
  double ref_j = kNaN;            // the reference energy (ref_kind says what it is)
  double ref_u_j = kNaN;          // its own uncertainty where known (edges on counter updates)
  std::string ref_kind;           // counter-updates | steady-rate | steady-work | step-model
  double ref_alt_j = kNaN;        // a second reference (per time where ref_j is per work, ...)
};

// The midpoint of a counter read: the time a Zeus-style edge is taken at.
inline int64_t mid_ns(const CounterRead& r) { return r.t_begin_ns + (r.t_end_ns - r.t_begin_ns) / 2; }

class WindowLog {
 public:
  // Throws std::runtime_error when the CSV cannot be written.
  WindowLog(Meter& meter, const NvmlPoller& poller, std::string gpu_domain, std::string mem_domain,
            const std::string& csv_path, std::string half);
  // Adds `p` to the meter with its explicit edges (add_window) and queues it.
  void add(WindowPlan p);
  // Queues a window already opened and closed (p.wl_id set).
  void queue(WindowPlan p);
  // Writes the queued windows whose result is final, in order, stopping at the first that is not.
  void flush();
  // Waits for the rest until `until_ns` and writes everything, provisional results marked so.
  void finish(int64_t until_ns);
  // Every row written from now on is also stored as a window of `recording`'s run, its CSV
  // fields as labels and counts (docs/results/meter-validation-h200.md, "The store").
  void store_into(Recording* recording) { recording_ = recording; }
  int rows() const { return rows_; }
  int provisional_rows() const { return provisional_; }

 private:
  void write(const WindowPlan& p, const WindowResult& r);
  void store(const WindowPlan& p, const WindowResult& r, const PollIntegral& poll, double ctr_j);
  Meter& meter_;
  Recording* recording_ = nullptr;
  bool store_failed_ = false;
  const NvmlPoller& poller_;
  std::string gpu_domain_, mem_domain_, half_;
  std::ofstream csv_;
  std::deque<WindowPlan> queue_;
  int rows_ = 0, provisional_ = 0;
};

}  // namespace wattlab::device
