// The run lifecycle in one object (DESIGN.md, "record"): open the sensors a device selection
// names, begin the run in the store, start the meter, move its readings to the store every 500 ms,
// store windows as their results become final, and end the run with its status, on success,
// failure or a stop request. The CLI, the C API and the Python package all drive runs through it.
// It prints nothing: notes go to RecordingOptions::on_note, errors are thrown as WattlabError.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
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

// What the store failed to take, so far (docs/record.md, "Store failures"). Everything counted in
// readings_pending, windows_pending and annotations_pending is still held in memory and tried
// again at every flush.
struct StoreHealth {
  uint64_t failures = 0;          // store calls that failed (each flush's readings, events, window...)
  uint64_t readings_pending = 0;  // readings not stored yet, held in memory
  uint64_t readings_lost = 0;     // readings dropped: more than kMaxPendingReadings were waiting
  uint64_t windows_pending = 0;   // final windows not stored yet, held in memory
  uint64_t windows_lost = 0;      // windows whose result could be neither stored nor held
  uint64_t events_pending = 0;    // meter events not stored yet (the meter keeps them)
  uint64_t annotations_pending = 0;  // stored windows whose later annotate() is not stored yet
  bool end_stored = true;         // false: end_run failed (the store says the run is incomplete)
  std::optional<Error> first_error;
  // Something measured is not in the store.
  bool incomplete() const {
    return readings_pending || readings_lost || windows_pending || windows_lost || events_pending ||
           annotations_pending || !end_stored;
  }
};

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
  // Notes for a person (a store failure when it happens, the store working again, a window still
  // open at the end).
  // Called from the caller's thread or the flush thread; never while holding the recording's lock.
  std::function<void(std::string_view)> on_note;
};

class Recording {
 public:
  // The exit status a recording ends with when it is destroyed without end() (a failed command).
  static constexpr int kAbandonedStatus = 1;
  // Readings held in memory while the store fails; past this the oldest are dropped (and counted).
  static constexpr std::size_t kMaxPendingReadings = std::size_t{1} << 20;
  // Final windows held in memory while the store fails; past this a window is lost (and counted).
  static constexpr std::size_t kMaxPendingWindows = std::size_t{1} << 16;
  // Windows stored final stay known (for annotate()) until this many newer ones are stored (a
  // stored window's annotation, once stored, counts as storing it again).
  static constexpr std::size_t kKeepStoredWindows = std::size_t{1} << 16;

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

  // Windows tracked by the recording: each is stored (with its annotations) at the first flush after
  // its result is final, and forgotten kKeepStoredWindows stored windows later, so memory stays
  // bounded however many windows a run has. Thread-safe.
  WindowId open(std::string_view name, const std::function<void()>& sync = {});
  void close(WindowId id, const std::function<void()>& sync = {});
  // A window with explicit edges (marks, a span known only afterwards), with what it held.
  WindowId add_window(std::string_view name, int64_t t_begin_ns, int64_t t_end_ns,
                      std::map<std::string, std::string> labels = {}, std::map<std::string, double> counts = {});
  // Adds labels and counts to a tracked window (they replace keys already there). A window not
  // stored yet is stored with them; a stored one has its labels and counts set in the store at the
  // next flush (Store::annotate_windows), its energies kept as stored: the meter's result is not
  // needed again. Throws ErrorKind::not_found for a window no longer tracked.
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
  // A store failure is noted when it happens (on_note, naming the file and SQLite's error) and
  // what failed stays in memory to be tried again at the next flush. Returns the first store
  // error of the recording while something is still not stored, success once all of it is.
  Status flush();
  // What the store failed to take so far.
  StoreHealth store_health() const;
  // Windows the recording tracks now: open, waiting to be stored, or stored recently (at most
  // kKeepStoredWindows of those). Its memory for windows grows with this, not with the run.
  std::size_t windows_tracked() const;
  // The run as stored, completed from memory with what the store lacks (windows held in memory,
  // the end and exit status when end_run failed), or built from memory alone when the store cannot
  // be read: what a summary prints after a store failure. After end(), when storing.
  RunRecord summary() const;

  // Ends the run: closes tracked windows still open, waits for their final results (a meter it
  // owns on virtual time: advances it until they are final), stops the meter it owns, flushes, stores the
  // tracked windows in order, the cost tags, and the end with `exit_status`. Thread-safe and
  // idempotent: the first call's status is the run's, so a signal watcher may call it while the
  // owner still works (a stop request); the owner's later calls return. Throws WattlabError
  // (ErrorKind::io) when the store lacks part of the run at the end (store_health().incomplete()),
  // after doing all it can; a failure that a later flush made good is noted, not thrown.
  void end(int exit_status);
  bool ended() const;

 private:
  struct Tracked {
    WindowId id = 0;
    std::string name;
    bool closed = false;
    bool stored_final = false;  // its final result is stored
    bool annotation_due = false;  // stored_final, and annotate() said more since: the store lacks it
    bool queued = false;        // listed in due_
    unsigned version = 0;       // bumped by annotate()
    std::map<std::string, std::string> labels;
    std::map<std::string, double> counts;
    // The result to store, held here when the meter may no longer keep it (a store failure, end()).
    std::shared_ptr<const WindowResult> held;
    uint64_t stored_seq = 0;  // its newest entry in stored_
  };
  void begin_run(const std::vector<Domain>& domains);
  Tracked* find(WindowId id);
  void queue(Tracked& t);
  void remember_stored(Tracked& t);  // caller holds mu_
  void take(std::span<const std::shared_ptr<const WindowResult>> results);  // the meter's result sink
  void store_failed(const Error& e);
  void store_due_windows();
  WindowResult annotated(const Tracked& t, WindowResult r) const;
  void note(std::string_view text) const;
  Status flush_locked();
  void finish_windows();
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
  bool taking_results_ = false;  // the meter hands results to take()
  int64_t cpu0_ns_ = 0, span0_ns_ = 0;

  mutable std::mutex end_mu_;    // end(): one at a time, the first one wins
  mutable std::mutex flush_mu_;  // store writes of flush() and end()
  mutable std::mutex mu_;        // the state below
  bool ended_ = false;
  RunInfo info_;
  std::vector<Domain> domains_;
  std::unordered_map<WindowId, Tracked> tracked_;  // open, waiting to be stored, or stored recently
  std::deque<WindowId> due_;                       // closed, final result not stored yet
  // Stored final (or a stored window's annotation), oldest first, with the sequence number that
  // each store got: kKeepStoredWindows of them are remembered.
  std::deque<std::pair<WindowId, uint64_t>> stored_;
  uint64_t stored_seq_ = 0;                        // the last sequence number given
  std::vector<TimedReading> pending_;              // readings not stored yet, oldest first
  std::size_t events_stored_ = 0;
  std::size_t windows_held_ = 0;                   // Tracked::held set
  std::size_t annotations_due_ = 0;                // Tracked::annotation_due set
  std::optional<int> end_status_;                  // end()'s status, for summary()
  int64_t end_t_ns_ = 0;
  StoreHealth health_;
  bool failing_ = false;                           // the last store call failed
  // Last: destroyed first, while everything its thread touches is still there.
  std::unique_ptr<Flusher> flusher_;
};

}  // namespace wattlab
