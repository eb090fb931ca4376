// The meter: one sampler thread per process for all domains; windows opened and closed by name
// from any thread; energy read off the timeline (DESIGN.md, "Measuring energy: rules").
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/core/clock.h"
#include "wattlab/meter/window.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

struct MeterOptions {
  // Default rates keep the sampler under 1% of a core with H200 read costs (docs/sensors.md):
  // the energy counter costs ~4.2 ms a read, so it is read once a second and the power readings,
  // cheap at ~2-9 us, shape the energy in between.
  int64_t counter_interval_ns = 1'000'000'000;
  int64_t power_interval_ns = 20'000'000;       // instant/average power fields
  int64_t samples_interval_ns = 1'000'000'000;  // driver sample buffer (holds ~2.4 s)
  int64_t telemetry_interval_ns = 200'000'000;  // clocks, temperature, utilization, GPM...
  // Bounded memory: readings kept per domain and kind (at 50 Hz, 2^18 is ~87 minutes). Windows
  // longer than that still come out right: the meter anchors each window edge as soon as it can.
  std::size_t timeline_capacity = 1u << 18;
  // Finished window results kept for result()/wait_result(); older ones are dropped (take them,
  // or store them, before). Open windows are never dropped.
  std::size_t finished_window_capacity = 1u << 16;
  // Readings handed to the export queue (the store's flusher) before the oldest are dropped.
  std::size_t export_capacity = 1u << 20;
};

// An event on the timeline: a read that failed, a counter that went backwards, a lost device.
struct MeterEvent {
  int64_t t_ns = 0;
  std::string domain_id;
  std::string reading;   // to_string(ReadingKind)
  std::string kind;      // "read_error", "counter_reset", "device_lost", "recovered"
  std::string message;
};

struct TimedReading {
  uint32_t domain_index = 0;
  Reading reading;
};

class Meter {
 public:
  Meter(std::vector<SensorPtr> sensors, Clock& clock, MeterOptions options = {});
  ~Meter();
  Meter(const Meter&) = delete;
  Meter& operator=(const Meter&) = delete;

  const std::vector<Domain>& domains() const;
  Clock& clock() const;
  const MeterOptions& options() const;

  // Real time: start the sampler thread. Virtual time: do not start it; call advance_to().
  void start();
  void stop();  // reads once more at the end, then joins the thread
  // Real time: wait until every reading of every domain has been read once, so that a window
  // opened next has a reading before its begin edge. False on timeout.
  bool wait_first_reads(std::chrono::milliseconds timeout);
  // Virtual time only: run the sampler's schedule up to t_ns on the calling thread.
  void advance_to(int64_t t_ns);

  // Windows. Opening and closing record a timestamp and nothing else: no sensor is touched.
  // An optional device-synchronize callback runs first (so `meter` never links CUDA).
  WindowId open(std::string_view name, const std::function<void()>& sync = {});
  void close(WindowId id, const std::function<void()>& sync = {});
  // Windows with explicit edges, e.g. marks timestamped by another process on the same clock.
  WindowId add_window(std::string_view name, int64_t t_begin_ns, int64_t t_end_ns);

  // The result once the timeline covers the window's end; std::nullopt before that.
  std::optional<WindowResult> result(WindowId id) const;
  // Wait (real time) until final or until `timeout`; returns a provisional result on timeout.
  WindowResult wait_result(WindowId id, std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // The best estimate now, final or not.
  WindowResult provisional_result(WindowId id) const;
  // Energy over any interval the timeline still holds, without a window.
  WindowResult estimate(int64_t t_begin_ns, int64_t t_end_ns, std::string_view name = "") const;

  // Move out the readings sampled since the last call (for the store's flusher).
  std::size_t drain_readings(std::vector<TimedReading>& out);
  std::vector<MeterEvent> events() const;
  // CPU time the sampler thread has used (getrusage RUSAGE_THREAD on the sampler), in ns.
  int64_t sampler_cpu_ns() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// RAII window: opens on construction, closes on destruction.
class ScopedWindow {
 public:
  ScopedWindow(Meter& meter, std::string_view name, std::function<void()> sync = {});
  ~ScopedWindow();
  ScopedWindow(const ScopedWindow&) = delete;
  ScopedWindow& operator=(const ScopedWindow&) = delete;
  WindowId id() const { return id_; }

 private:
  Meter& meter_;
  WindowId id_;
  std::function<void()> sync_;
};

}  // namespace wattlab
