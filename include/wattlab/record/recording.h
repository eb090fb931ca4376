// The run lifecycle in one object (DESIGN.md, "record"): open the sensors a device selection
// names, begin the run in the store, start the meter, move its readings to the store every 500 ms,
// store windows as their results become final, and end the run with its status, on success,
// failure or a stop request. The CLI, the C API and the Python package all drive runs through it.
// It prints nothing: notes go to RecordingOptions::on_note, errors are thrown as WattlabError.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/core/clock.h"
#include "wattlab/core/error.h"
#include "wattlab/meter/meter.h"
#include "wattlab/meter/window.h"
#include "wattlab/record/flusher.h"
#include "wattlab/sensors/registry.h"
#include "wattlab/store/run_record.h"
#include "wattlab/store/store.h"

namespace wattlab {

struct RecordingOptions {
  // What to measure: auto|sim|nvml|rapl, GPU indices or UUIDs, the simulator's script; a virtual
  // clock here runs the simulated device (and the meter) on virtual time. devices.device is stored
  // as the run's device selection, also for a recording attached to a meter.
  BackendOptions devices;
  MeterOptions meter;
  // false: no meter; the caller reads the sensors itself (sensors()) and hands its readings to
  // append_readings() (wattlab sensors --characterize).
  bool use_meter = true;
  // Where the run goes: `store` (borrowed, must outlive the recording) if set, else the SQLite file
  // `db` (created if missing). Neither: measure without storing (wattlab serve, monitor).
  Store* store = nullptr;
  std::filesystem::path db;
  std::vector<std::string> command;          // argv recorded with the run
  std::map<std::string, std::string> tags;   // run tags known at the start
  // Real time: how often readings, events and finished windows reach the store.
  int64_t flush_interval_ns = 500'000'000;
  // Real time: how long start() waits for every reading of every domain to be read once.
  std::chrono::milliseconds first_reads_timeout{10'000};
  // At the end, what measuring cost as run tags: the sampler thread's and this process's CPU over
  // the span the sampler ran (wattlab.sampler_cpu_s, ..., docs/json-output.md).
  bool cpu_cost_tags = false;
  // Notes for a person (a store error met by the flush thread, a window still open at the end).
  // Called from the caller's thread or the flush thread; never while holding the recording's lock.
  std::function<void(std::string_view)> on_note;
};

class Recording {
 public:
  // The exit status a recording ends with when it is destroyed without end() (a failed command).
  static constexpr int kAbandonedStatus = 1;

  // Opens the sensors options.devices selects. Throws UsageError for a bad selection (unknown
  // device, a simulator script that does not parse).
  explicit Recording(RecordingOptions options);
  // A recording over a meter someone else owns (a GEMM executor's): nothing is opened; the meter
  // is neither started nor stopped here. `devices` and `simulated` describe its sensors.
  Recording(Meter& meter, std::vector<DeviceProperties> devices, bool simulated, RecordingOptions options);
  // Ends a begun run that end() did not end, with kAbandonedStatus; errors go to on_note.
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  // What opening the sensors found (backends that loaded and why others did not). Its sensors
  // move into the meter at start().
  const OpenedSensors& opened() const { return opened_; }
  bool simulated() const { return simulated_; }
  std::size_t domain_count() const;
  // use_meter = false: the sensors the caller reads; a reading of domain i of the flattened list
  // (every sensor's domains in order) goes to append_readings() with domain_index i.
  std::vector<SensorPtr>& sensors() { return opened_.sensors; }

  // Begins the run (store opened, RunInfo with command line, host, devices, driver and library
  // versions, the domains), makes the meter and, on real time, starts its sampler thread, waits
  // for the first reads and starts the flush thread. Returns false when some sensor did not answer
  // within first_reads_timeout (the recording goes on). Throws WattlabError when the store fails.
  bool start();

  Clock& clock() const { return *clock_; }
  Meter& meter();                              // after start(), use_meter only
  bool storing() const { return store_ != nullptr; }
  Store& store();                              // after start(), when storing
  RunId run_id() const { return run_id_; }     // 0 when not storing
  int64_t start_t_ns() const { return start_t_ns_; }

  // Windows tracked by the recording: each is stored as soon as its result is final, and again at
  // end() in the order they were opened (annotations applied). Thread-safe.
  WindowId open(std::string_view name, const std::function<void()>& sync = {});
  void close(WindowId id, const std::function<void()>& sync = {});
  // A window with explicit edges (marks, a span known only afterwards), with what it held.
  WindowId add_window(std::string_view name, int64_t t_begin_ns, int64_t t_end_ns,
                      std::map<std::string, std::string> labels = {}, std::map<std::string, double> counts = {});
  // Adds labels and counts to a tracked window (they replace keys already there).
  void annotate(WindowId id, const std::map<std::string, std::string>& labels,
                const std::map<std::string, double>& counts = {});
  // The window's result with its annotations: waits (real time) up to `timeout` for the final one.
  WindowResult result(WindowId id, std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Stores a window the caller built (not tracked): one with the same id replaces the stored one.
  void store_window(const WindowResult& window);

  // Sets (or replaces) a run tag now. Throws WattlabError when the store fails.
  void set_tag(const std::string& key, const std::string& value);
  // use_meter = false: readings the caller took, stored at the next flush. Thread-safe; after
  // end() they are dropped and the status says so.
  Status append_readings(std::span<const TimedReading> readings);
  // Moves what is pending to the store now: readings, new meter events, tracked windows whose
  // result became final. The flush thread calls it on real time; on virtual time the caller does.
  // Returns the first store error of the recording (kept, and thrown again by end()).
  Status flush();

  // Ends the run: closes tracked windows still open, waits for their final results (a meter it
  // owns on virtual time: advances it until they are final), stops the meter it owns, flushes, stores the
  // tracked windows in order, the cost tags, and the end with `exit_status`. Thread-safe and
  // idempotent: the first call's status is the run's, so a signal watcher may call it while the
  // owner still works (a stop request); the owner's later calls return. Throws WattlabError with
  // the first store error met during the run, after doing all it can.
  void end(int exit_status);
  bool ended() const;

 private:
  struct Tracked {
    WindowId id = 0;
    std::string name;
    bool closed = false;
    bool stored_final = false;  // its final result, with the annotations of `version`, is stored
    unsigned version = 0;       // bumped by annotate()
    std::map<std::string, std::string> labels;
    std::map<std::string, double> counts;
  };
  void begin_run(const std::vector<Domain>& domains);
  Tracked* find(WindowId id);
  WindowResult annotated(const Tracked& t, WindowResult r) const;
  void keep_error(const Error& e, bool note);
  void note(std::string_view text) const;
  Status flush_locked();
  void finish_windows(std::vector<WindowResult>& results);
  std::optional<Error> end_locked(int exit_status);

  RecordingOptions opt_;
  OpenedSensors opened_;
  bool simulated_ = false;
  std::vector<DeviceProperties> devices_;
  Clock* clock_ = nullptr;
  std::unique_ptr<Meter> own_meter_;
  Meter* meter_ = nullptr;
  std::optional<Store> own_store_;
  Store* store_ = nullptr;
  RunId run_id_ = 0;
  int64_t start_t_ns_ = 0;
  bool started_ = false;
  int64_t cpu0_ns_ = 0, span0_ns_ = 0;

  mutable std::mutex end_mu_;    // end(): one at a time, the first one wins
  mutable std::mutex flush_mu_;  // store writes of flush() and end()
  mutable std::mutex mu_;        // the state below
  bool ended_ = false;
  std::vector<Tracked> tracked_;  // in the order they were opened
  std::vector<TimedReading> pending_;
  std::size_t events_stored_ = 0;
  std::optional<Error> first_error_;
  // Last: destroyed first, while everything its thread touches is still there.
  std::unique_ptr<Flusher> flusher_;
};

}  // namespace wattlab
