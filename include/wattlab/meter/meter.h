// The meter: one sampler thread per process for all domains; windows opened and closed by name
// from any thread; energy read off the timeline (DESIGN.md, "Measuring energy: rules").
#pragma once
#include <array>
#include <chrono>
#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/core/clock.h"
#include "wattlab/meter/window.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

struct MeterOptions {
  // Default rates keep the sampler under 1% of a core with H200 read costs (docs/sensors.md):
  // the energy counter costs ~3-4 ms a read, so it is read once a second and the power readings,
  // cheap at ~1-9 us, shape the energy in between. These are the shortest intervals; the CPU
  // budget below may stretch them.
  int64_t counter_interval_ns = 1'000'000'000;
  // Instant/average power fields. Where the domain has a sample buffer (the shape), and for an
  // averaged field always, a field is read once per refresh (NVML: every 100 ms): faster reads
  // return the value already read.
  int64_t power_interval_ns = 20'000'000;
  int64_t samples_interval_ns = 1'000'000'000;  // driver sample buffer (holds ~2.4 s)
  int64_t telemetry_interval_ns = 200'000'000;  // clocks, temperature, utilization, GPM...
  // Power and thermal violation counters: cumulative, so a slow rate loses nothing over windows of
  // seconds, and on an H200 a read costs ~0.6 ms (at 200 ms that alone was 0.6% of a core).
  int64_t violation_interval_ns = 1'000'000'000;
  // CPU budget of the sampler, in fractions of one core (docs/estimators.md, "Sampler CPU
  // budget"). The sampler measures what each read costs (wall time of the call, plus on real time
  // the sampler thread's CPU for the rest of that step: waking up, bookkeeping; an average over the
  // recent reads) and reads a reading no more often than its share allows: the interval above is
  // stretched, never shortened, when cost x reads per interval / interval exceeds the share. A
  // token bucket enforces it, so extra reads (the counter grid re-probing) are paid for by later
  // reads coming later. When the shares in use add up to more than sampler_cpu_share, telemetry is
  // scaled down first, then the energy readings. 0 (or less) turns a limit off. The estimators use
  // the readings actually taken, so a stretched interval widens the reported uncertainty instead
  // of biasing the energy.
  double counter_cpu_share = 0.006;  // the energy counter, the anchor of every estimate (0.6%)
  double reading_cpu_share = 0.002;  // each other reading of each domain (0.2%)
  double sampler_cpu_share = 0.008;  // all reads of all domains together (0.8%)
  // Real time: the whole sampler thread (reads, waking up, bookkeeping). What the thread spends
  // outside its reads, measured with getrusage since it started, comes off sampler_cpu_share (down
  // to half of it), so the thread stays under this on a host where waking up is dear (0.9%).
  double sampler_thread_cpu_share = 0.009;
  // Real time only: also charge each step's CPU besides the read (waking up, bookkeeping) to the
  // reading that ran, so the budget bounds the sampler thread's whole CPU. Off by default: on a
  // loaded VM a wake-up costs tens of us, and charging it cut the power readings to a few a second
  // and made live energy slopes (wattlab serve) miss by 4-9% in tests/export/prometheus_integration.
  bool budget_counts_step_cpu = false;
  // Where the energy counter's grid probe starts (docs/estimators.md): from where the domain's
  // cheap instant power field refreshes (two or three counter reads, where the field refreshes on
  // the counter's grid), or with the coarse probe alone (8-12 reads). real_time: the hint on a
  // real clock only, so that tests on virtual time keep the coarse probe's counter schedule
  // unless they ask for the hint (always).
  enum class ProbeHint { real_time, always, never };
  ProbeHint counter_probe_hint = ProbeHint::real_time;
  // Bounded memory: readings kept per domain and kind (at 50 Hz, 2^18 is ~87 minutes). Windows
  // longer than that still come out right: the meter anchors each window edge as soon as it can.
  std::size_t timeline_capacity = 1u << 18;
  // Finished window results kept for consumers that poll (result()/wait_result(): the C API's
  // and Python's window results); older ones are dropped. Open windows are never dropped. A
  // consumer that must have every result (a recording that stores them) takes each one as it
  // becomes final instead (Meter::set_result_sink), whatever this capacity.
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

// Health and newest value of one reading of one domain, since the meter started.
struct ReadingHealth {
  uint64_t reads_ok = 0;
  uint64_t read_errors = 0;
  int64_t last_ok_ns = INT64_MIN;     // INT64_MIN: never read successfully
  int64_t last_error_ns = INT64_MIN;  // INT64_MIN: never failed
  std::optional<Reading> latest;      // newest successful reading (the last of a batch of samples)
  std::string last_error;             // message of the newest failure
};

// The live state of one domain, for exporters and monitors (wattlab serve, wattlab monitor).
struct DomainLive {
  // Cumulative energy since the meter started, read off the timeline: the energy counter with
  // resets and wraps removed (a reset is bridged with integrated power), extended past the newest
  // counter point with integrated power up to energy_t_ns; where the domain has no counter, the
  // power readings integrated (gaps between them count nothing and are summed in unmeasured_ns).
  // It may be revised slightly later (a bridged reset, an extension replaced by the counter).
  bool energy_ok = false;
  double energy_j = 0;
  int64_t energy_t_ns = 0;
  std::string energy_estimator;  // "counter", "counter+instant", "integrated(instant)", ...
  int64_t unmeasured_ns = 0;     // no-counter domains only: time no power reading covered
  uint64_t counter_resets = 0;   // counter went backwards (reset or wrap not explained) and was bridged
  bool lost = false;
  int64_t lost_at_ns = 0;
  std::array<ReadingHealth, kReadingKindCount> readings;  // indexed by ReadingKind
  const ReadingHealth& health(ReadingKind k) const { return readings[static_cast<std::size_t>(k)]; }
};

// How the sampler keeps its schedule: how late each read started against the time it was due.
struct SamplerStats {
  // Histogram upper bounds (ns); counts[i] = reads with lateness <= bounds[i] (not cumulative),
  // counts.back() = the rest (+Inf).
  static constexpr std::array<int64_t, 9> kLatenessBoundsNs = {50'000,    100'000,    250'000,    500'000,   1'000'000,
                                                               2'500'000, 5'000'000, 10'000'000, 50'000'000};
  std::array<uint64_t, kLatenessBoundsNs.size() + 1> lateness_counts{};
  uint64_t reads = 0;
  double lateness_sum_s = 0;
  int64_t lateness_max_ns = 0;
  int64_t newest_read_ns = INT64_MIN;  // when the newest read (of any domain) started
  int64_t cpu_ns = 0;                  // CPU time the sampler thread has used
  int64_t read_ns = 0;                 // wall time spent inside sensor reads (what the budget counts)
  uint64_t stretched_reads = 0;        // reads the CPU budget put off past their configured interval
  // Real time: the sampler thread's CPU outside the reads it pays for, as a share of one core since
  // it started, and the share all reads may use after it (MeterOptions::sampler_thread_cpu_share).
  double rest_cpu_share = 0;
  double read_cpu_share = 0;
};

struct MeterSnapshot {
  int64_t t_ns = 0;        // clock time the snapshot was taken
  int64_t start_t_ns = 0;  // clock time the meter was made
  std::vector<DomainLive> domains;  // in the order of Meter::domains()
  SamplerStats sampler;
};

// Takes finished window results as they become final (Meter::set_result_sink): a few at a time, in
// the order the meter made them. The results are shared with the meter, never changed after.
using WindowResultSink = std::function<void(std::span<const std::shared_ptr<const WindowResult>> results)>;

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

  // Windows. Opening and closing record a timestamp and nothing else: no sensor is touched, and the caller never
  // waits for the sampler (a lock-free queue). An optional device sync runs first (so `meter` never links CUDA).
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
  // Hands every window result to `sink` once, as it becomes final, however many become final
  // together (an empty sink: none; results made final before it was set are not handed on). It is
  // called by the thread that made them final (the sampler thread; on virtual time the one in
  // advance_to, stop or wait_result), outside the meter's lock and one call at a time, so it must
  // be quick; it may call the meter, but not set_result_sink. It must not throw: an exception is
  // caught and that batch is then only among the newest finished_window_capacity results.
  // Memory: results wait for the sink only between being made final and the next hand-over (at
  // most a few dozen). Once set_result_sink returns, the sink it replaced is no longer called.
  void set_result_sink(WindowResultSink sink);
  // Energy over any interval the timeline still holds, without a window.
  WindowResult estimate(int64_t t_begin_ns, int64_t t_end_ns, std::string_view name = "") const;

  // Move out the readings sampled since the last call (for the store's flusher).
  std::size_t drain_readings(std::vector<TimedReading>& out);
  std::vector<MeterEvent> events() const;
  // The newest value, health and cumulative energy of every domain. Holds the meter's lock for
  // microseconds (no sensor is touched, no window is built): live views may call it often.
  MeterSnapshot snapshot() const;
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
