// The run database: one SQLite file (WAL) holding runs, their domains, readings, telemetry,
// windows and events. Safe to call from several threads (one connection, serialized inside).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wattlab/core/error.h"
#include "wattlab/meter/meter.h"
#include "wattlab/meter/window.h"
#include "wattlab/sensors/reading.h"
#include "wattlab/sensors/sensor.h"
#include "wattlab/store/run_record.h"

namespace wattlab {

// Labels and counts said about a stored window after it was stored (Recording::annotate()).
struct WindowAnnotation {
  WindowId id = 0;
  std::map<std::string, std::string> labels;
  std::map<std::string, double> counts;
};

enum class OpenMode {
  read_write,  // create the file and schema if missing; switch it to WAL
  read_only,   // the file must exist and hold a wattlab store
};

class Store {
 public:
  // The schema version this build writes and the newest it reads (PRAGMA user_version).
  static constexpr int kSchemaVersion = 2;

  // Errors: `schema` for a file from a newer wattlab, `parse` for a file that is not a wattlab
  // store, `not_found` for a missing file in read_only mode, `io`/`no_permission` otherwise.
  // read_only on a read-only file system (no -shm file can be made for WAL) reads the file as
  // SQLite's immutable (docs/store.md, "Read-only stores").
  static Result<Store> open(const std::filesystem::path& path, OpenMode mode = OpenMode::read_write);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const;
  bool read_only() const;

  // Writing a run. Each call is one transaction: once it returns success, a crash loses nothing
  // of it (WAL, synchronous=NORMAL: only a power loss can take the last commits).
  Result<RunId> begin_run(const RunInfo& info);
  // Appends domains; the first one added gets index 0 (the meter's domain order).
  Status add_domains(RunId run, std::span<const Domain> domains);
  // Power/energy kinds go to `readings`, the others to `telemetry`. domain_index must be added.
  Status append_readings(RunId run, std::span<const TimedReading> readings);
  Status append_events(RunId run, std::span<const MeterEvent> events);
  // A window with the same WindowResult::id replaces the earlier one (provisional -> final).
  Status add_window(RunId run, const WindowResult& window);
  // Several windows in one transaction (all stored or none), each as add_window.
  Status add_windows(RunId run, std::span<const WindowResult> windows);
  // Sets labels and counts of windows already stored, in one transaction (all or none): a key
  // given replaces the stored value, keys not given keep theirs, the energies stay as stored.
  // not_found for a window not stored in the run.
  Status annotate_windows(RunId run, std::span<const WindowAnnotation> annotations);
  Status end_run(RunId run, int64_t end_t_ns, int exit_status);
  // Sets (or replaces) one tag of a run, e.g. a configuration fact learned while it runs.
  Status set_run_tag(RunId run, const std::string& key, const std::string& value);

  // Reading. A run id that is not there gives `not_found`.
  Result<RunRecord> load_run(RunId run) const;
  Result<RunId> latest_run_id() const;  // not_found in an empty store
  Result<std::vector<RunSummary>> list_runs() const;  // oldest first
  // Readings of one domain and kind with t_ns in [t_begin_ns, t_end_ns], in time order.
  Result<std::vector<Reading>> load_readings(RunId run, uint32_t domain_index, ReadingKind kind,
                                             int64_t t_begin_ns, int64_t t_end_ns) const;

  class Impl;

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  static Result<Store> open_as(const std::filesystem::path& path, OpenMode mode, bool immutable);
  std::unique_ptr<Impl> impl_;
};

}  // namespace wattlab
