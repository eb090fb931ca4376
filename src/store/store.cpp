// Store: opening, and everything that writes a run.
#include "wattlab/store/store.h"

#include <sqlite3.h>

#include <string>
#include <utility>

#include "codec.h"
#include "schema.h"
#include "store_impl.h"

namespace wattlab {

static_assert(Store::kSchemaVersion == store_detail::kSchemaVersion, "store.h and schema.h disagree on the version");

namespace {
constexpr const char* kVersion = WATTLAB_VERSION;  // from CMake's project(VERSION)

int64_t as_int(bool b) { return b ? 1 : 0; }

Status put_run_tag(sqlite::Db& db, RunId run, const std::string& key, const std::string& value) {
  auto q = db.prepare("INSERT OR REPLACE INTO run_tags (run_id, key, value) VALUES (?1, ?2, ?3)");
  if (!q) return q.error();
  return q->bind(1, run).bind(2, key).bind(3, value).run();
}
}  // namespace

// --- Impl ---

Status Store::Impl::prepare_writes() {
  struct Want {
    sqlite::Stmt* stmt;
    const char* sql;
  };
  const Want wants[] = {
      {&insert_reading,
       "INSERT INTO readings (run_id, domain_index, kind, t_ns, value, read_dur_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"},
      {&insert_telemetry,
       "INSERT INTO telemetry (run_id, domain_index, kind, t_ns, value, read_dur_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"},
      {&add_counts,
       "UPDATE runs SET reading_count = reading_count + ?2, telemetry_count = telemetry_count + ?3 WHERE run_id = ?1"},
      {&insert_event,
       "INSERT INTO events (run_id, t_ns, domain_id, reading, kind, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"},
  };
  for (const auto& w : wants) {
    auto s = db.prepare(w.sql);
    if (!s) return s.error();
    *w.stmt = std::move(*s);
  }
  return {};
}

Status Store::Impl::require_writable(std::string_view operation) const {
  if (!read_only) return {};
  return Error{ErrorKind::invalid_argument,
               std::string(operation) + " on " + path.string() + ", which was opened read-only",
               "open the store with OpenMode::read_write"};
}

Error Store::Impl::run_not_found(RunId run) const {
  return Error{ErrorKind::not_found, "run " + std::to_string(run) + " is not in " + path.string(),
               "list the runs it holds with `wattlab report " + path.string() + "`"};
}

Result<uint32_t> Store::Impl::domain_count(RunId run) {
  // Only a writer may trust its cache: a reader's file can gain domains from another process.
  if (!read_only)
    if (auto it = domain_counts.find(run); it != domain_counts.end()) return it->second;
  auto q = db.prepare("SELECT (SELECT count(*) FROM domains WHERE run_id = ?1) FROM runs WHERE run_id = ?1");
  if (!q) return q.error();
  q->bind(1, run);
  auto row = q->step();
  if (!row) return row.error();
  if (!*row) return run_not_found(run);
  auto n = static_cast<uint32_t>(q->int64(0));
  if (!read_only) domain_counts[run] = n;
  return n;
}

// --- open ---

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

namespace {
// "file:" URI of a path with SQLite's immutable flag: no locks, no -wal or -shm file.
std::string immutable_uri(const std::filesystem::path& path) {
  std::string uri = "file:";
  for (const char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#') {
      constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[(static_cast<unsigned char>(c) >> 4) & 0xF];
      uri += kHex[static_cast<unsigned char>(c) & 0xF];
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}
}  // namespace

Result<Store> Store::open(const std::filesystem::path& path, OpenMode mode) {
  auto s = open_as(path, mode, false);
  if (s || mode != OpenMode::read_only) return s;
  // A read-only file system: a WAL reader needs a -shm file that cannot be made there (SQLite says
  // it cannot open the file, or that it is read-only). Nothing can write such a file, so it is read
  // as immutable: without locks, and without a -wal file left beside it by a killed writer.
  const ErrorKind k = s.error().kind;
  std::error_code ec;
  if ((k == ErrorKind::not_found || k == ErrorKind::no_permission || k == ErrorKind::io) &&
      std::filesystem::is_regular_file(path, ec))
    if (auto im = open_as(path, mode, true)) return im;
  return s;
}

Result<Store> Store::open_as(const std::filesystem::path& path, OpenMode mode, bool immutable) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->read_only = mode == OpenMode::read_only;
  int flags = impl->read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  auto db = immutable ? sqlite::Db::open(immutable_uri(path), flags | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, path.string())
                      : sqlite::Db::open(path.string(), flags | SQLITE_OPEN_FULLMUTEX);
  if (!db) return db.error();
  impl->db = std::move(*db);
  // A reader and the writer share the file; wait for the other's lock rather than fail at once.
  sqlite3_busy_timeout(impl->db.handle(), 5000);
  if (auto s = store_detail::prepare_schema(impl->db, impl->read_only, kVersion); !s) return s.error();
  if (auto s = impl->db.exec("PRAGMA foreign_keys = ON"); !s) return s.error();
  if (!impl->read_only)
    if (auto s = impl->prepare_writes(); !s) return s.error();
  return Store(std::move(impl));
}

const std::filesystem::path& Store::path() const { return impl_->path; }
bool Store::read_only() const { return impl_->read_only; }

// --- writes ---

Result<RunId> Store::begin_run(const RunInfo& info) {
  std::lock_guard lock(impl_->mu);
  if (auto s = impl_->require_writable("begin_run"); !s) return s.error();
  auto q = impl_->db.prepare(
      "INSERT INTO runs (command_json, host, start_utc, start_t_ns, simulated, device_selection, devices_json, "
      "wattlab_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!q) return q.error();
  auto tx = sqlite::Transaction::begin(impl_->db);
  if (!tx) return tx.error();
  q->bind(1, store_detail::json_column_text(store_detail::strings_to_json(info.command)))
      .bind(2, info.host)
      .bind(3, info.start_utc)
      .bind(4, info.start_t_ns)
      .bind(5, as_int(info.simulated))
      .bind(6, info.device_selection)
      .bind(7, store_detail::json_column_text(store_detail::devices_to_json(info.devices)))
      .bind(8, std::string_view(kVersion));
  if (auto s = q->run(); !s) return s.error();
  RunId run = impl_->db.last_insert_rowid();
  for (const auto& [key, value] : info.tags)
    if (auto s = put_run_tag(impl_->db, run, key, value); !s) return s.error();
  if (auto s = tx->commit(); !s) return s.error();
  impl_->domain_counts[run] = 0;
  return run;
}

Status Store::set_run_tag(RunId run, const std::string& key, const std::string& value) {
  std::lock_guard lock(impl_->mu);
  if (auto s = impl_->require_writable("set_run_tag"); !s) return s;
  if (auto count = impl_->domain_count(run); !count) return count.error();
  return put_run_tag(impl_->db, run, key, value);
}

Status Store::add_domains(RunId run, std::span<const Domain> domains) {
  std::lock_guard lock(impl_->mu);
  if (auto s = impl_->require_writable("add_domains"); !s) return s;
  auto count = impl_->domain_count(run);
  if (!count) return count.error();
  auto tx = sqlite::Transaction::begin(impl_->db);
  if (!tx) return tx.error();
  auto q = impl_->db.prepare(
      "INSERT INTO domains (run_id, domain_index, domain_id, vendor, name, uuid, scope, parent, simulated, "
      "sensor_model_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  if (!q) return q.error();
  uint32_t index = *count;
  for (const auto& d : domains) {
    q->bind(1, run)
        .bind(2, int64_t{index++})
        .bind(3, d.id)
        .bind(4, d.vendor)
        .bind(5, d.name)
        .bind(6, d.uuid)
        .bind(7, d.scope)
        .bind(8, d.parent)
        .bind(9, as_int(d.simulated))
        .bind(10, store_detail::json_column_text(store_detail::sensor_model_to_json(d.model)));
    if (auto s = q->run(); !s) return s;
  }
  if (auto s = tx->commit(); !s) return s;
  impl_->domain_counts[run] = index;
  return {};
}

Status Store::append_readings(RunId run, std::span<const TimedReading> readings) {
  std::lock_guard lock(impl_->mu);
  if (auto s = impl_->require_writable("append_readings"); !s) return s;
  auto count = impl_->domain_count(run);
  if (!count) return count.error();
  // Check the whole batch first: a batch is stored entirely or not at all.
  for (const auto& r : readings) {
    if (r.domain_index >= *count)
      return Error{ErrorKind::invalid_argument,
                   "append_readings: domain index " + std::to_string(r.domain_index) + " of run " +
                       std::to_string(run) + ", which has " + std::to_string(*count) + " domains",
                   "add the meter's domains with add_domains() before its readings"};
    if (static_cast<std::size_t>(r.reading.kind) >= kReadingKindCount)
      return Error{ErrorKind::invalid_argument,
                   "append_readings: reading kind " + std::to_string(static_cast<int>(r.reading.kind)) +
                       " is not a ReadingKind"};
  }
  if (readings.empty()) return {};

  auto tx = sqlite::Transaction::begin(impl_->db);
  if (!tx) return tx.error();
  int64_t power_rows = 0;
  int64_t telemetry_rows = 0;
  for (const auto& r : readings) {
    bool power = is_power_or_energy(r.reading.kind);
    sqlite::Stmt& q = power ? impl_->insert_reading : impl_->insert_telemetry;
    (power ? power_rows : telemetry_rows) += 1;
    q.bind(1, run)
        .bind(2, int64_t{r.domain_index})
        .bind_static(3, to_string(r.reading.kind))  // names live in a static table
        .bind(4, r.reading.t_ns)
        .bind(5, r.reading.value)
        .bind(6, r.reading.read_dur_ns);
    if (auto s = q.run(); !s) return s;
  }
  impl_->add_counts.bind(1, run).bind(2, power_rows).bind(3, telemetry_rows);
  if (auto s = impl_->add_counts.run(); !s) return s;
  return tx->commit();
}

Status Store::append_events(RunId run, std::span<const MeterEvent> events) {
  std::lock_guard lock(impl_->mu);
  if (auto s = impl_->require_writable("append_events"); !s) return s;
  if (auto count = impl_->domain_count(run); !count) return count.error();
  if (events.empty()) return {};
  auto tx = sqlite::Transaction::begin(impl_->db);
  if (!tx) return tx.error();
  for (const auto& e : events) {
    impl_->insert_event.bind(1, run).bind(2, e.t_ns).bind(3, e.domain_id).bind(4, e.reading).bind(5, e.kind).bind(
        6, e.message);
    if (auto s = impl_->insert_event.run(); !s) return s;
  }
  return tx->commit();
}

namespace {
void bind_domain_energy(sqlite::Stmt& q, int64_t window_row, int64_t position, const DomainEnergy& d) {
  q.bind(1, window_row)
      .bind(2, position)
      .bind(3, d.domain_id)
      .bind(4, as_int(d.simulated))
      .bind(5, as_int(d.available))
      .bind(6, d.energy_j)
      .bind(7, d.uncertainty_j)
      .bind(8, d.systematic_j)
      .bind(9, d.mean_power_w)
      .bind(10, d.peak_power_w)
      .bind(11, to_string(d.estimator))
      .bind(12, d.cross_check_j)
      .bind(13, to_string(d.cross_check_estimator))
      .bind(14, static_cast<int64_t>(d.readings_used))
      .bind(15, store_detail::json_column_text(store_detail::strings_to_json(d.issues)));
  int index = 16;
  for (const auto& f : store_detail::kTelemetryFields) q.bind(index++, d.telemetry.*(f.member));
  if (d.telemetry.clock_event_reasons_seen)
    q.bind(index, static_cast<int64_t>(*d.telemetry.clock_event_reasons_seen));  // bit pattern kept
  else
    q.bind_null(index);
}
}  // namespace

namespace {
// The statements that store one window, prepared once per batch.
struct WindowStatements {
  sqlite::Stmt drop_counts, drop_labels, drop_results, drop_window, insert_window, insert_result, insert_count,
      insert_label;
  static Result<WindowStatements> prepare(sqlite::Db& db) {
    WindowStatements w;
    const std::pair<sqlite::Stmt*, std::string> sql[] = {
        {&w.drop_counts,
         "DELETE FROM window_counts WHERE window_row IN (SELECT window_row FROM windows WHERE run_id = ?1 AND window_id = ?2)"},
        {&w.drop_labels,
         "DELETE FROM window_labels WHERE window_row IN (SELECT window_row FROM windows WHERE run_id = ?1 AND window_id = ?2)"},
        {&w.drop_results,
         "DELETE FROM window_domains WHERE window_row IN (SELECT window_row FROM windows WHERE run_id = ?1 AND window_id = ?2)"},
        {&w.drop_window, "DELETE FROM windows WHERE run_id = ?1 AND window_id = ?2"},
        {&w.insert_window,
         "INSERT INTO windows (run_id, window_id, name, t_begin_ns, t_end_ns, final) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"},
        {&w.insert_result, [] {
           std::string q = "INSERT INTO window_domains (window_row, position, " + store_detail::window_domain_columns() +
                           ") VALUES (?1";
           for (int i = 2; i <= 2 + store_detail::kWindowDomainColumnCount; ++i) q += ", ?" + std::to_string(i);
           return q + ")";
         }()},
        {&w.insert_count, "INSERT INTO window_counts (window_row, key, value) VALUES (?1, ?2, ?3)"},
        {&w.insert_label, "INSERT INTO window_labels (window_row, key, value) VALUES (?1, ?2, ?3)"},
    };
    for (const auto& [stmt, text] : sql) {
      auto q = db.prepare(text);
      if (!q) return q.error();
      *stmt = std::move(*q);
    }
    return w;
  }
};

Status put_window(sqlite::Db& db, WindowStatements& w, RunId run, const WindowResult& window) {
  const auto window_id = static_cast<int64_t>(window.id);
  // Replace an earlier (provisional) copy of the same window.
  for (sqlite::Stmt* drop : {&w.drop_counts, &w.drop_labels, &w.drop_results, &w.drop_window})
    if (auto s = drop->bind(1, run).bind(2, window_id).run(); !s) return s;
  w.insert_window.bind(1, run)
      .bind(2, window_id)
      .bind(3, window.name)
      .bind(4, window.t_begin_ns)
      .bind(5, window.t_end_ns)
      .bind(6, as_int(window.final));
  if (auto s = w.insert_window.run(); !s) return s;
  const int64_t window_row = db.last_insert_rowid();
  int64_t position = 0;
  for (const auto& d : window.domains) {
    bind_domain_energy(w.insert_result, window_row, position++, d);
    if (auto s = w.insert_result.run(); !s) return s;
  }
  for (const auto& [key, value] : window.counts)
    if (auto s = w.insert_count.bind(1, window_row).bind(2, key).bind(3, value).run(); !s) return s;
  for (const auto& [key, value] : window.labels)
    if (auto s = w.insert_label.bind(1, window_row).bind(2, key).bind(3, value).run(); !s) return s;
  return {};
}
}  // namespace

Status Store::add_window(RunId run, const WindowResult& window) { return add_windows(run, std::span(&window, 1)); }

Status Store::add_windows(RunId run, std::span<const WindowResult> windows) {
  std::lock_guard lock(impl_->mu);
  if (auto s = impl_->require_writable("add_window"); !s) return s;
  if (auto count = impl_->domain_count(run); !count) return count.error();
  if (windows.empty()) return {};
  auto& db = impl_->db;
  auto stmts = WindowStatements::prepare(db);
  if (!stmts) return stmts.error();
  auto tx = sqlite::Transaction::begin(db);
  if (!tx) return tx.error();
  for (const auto& window : windows)
    if (auto s = put_window(db, *stmts, run, window); !s) return s;
  return tx->commit();
}

Status Store::annotate_windows(RunId run, std::span<const WindowAnnotation> annotations) {
  std::lock_guard lock(impl_->mu);
  if (auto s = impl_->require_writable("annotate_windows"); !s) return s;
  if (auto count = impl_->domain_count(run); !count) return count.error();
  if (annotations.empty()) return {};
  auto& db = impl_->db;
  auto find = db.prepare("SELECT window_row FROM windows WHERE run_id = ?1 AND window_id = ?2");
  if (!find) return find.error();
  auto put_label = db.prepare("INSERT OR REPLACE INTO window_labels (window_row, key, value) VALUES (?1, ?2, ?3)");
  if (!put_label) return put_label.error();
  auto put_count = db.prepare("INSERT OR REPLACE INTO window_counts (window_row, key, value) VALUES (?1, ?2, ?3)");
  if (!put_count) return put_count.error();
  auto tx = sqlite::Transaction::begin(db);
  if (!tx) return tx.error();
  for (const auto& a : annotations) {
    find->bind(1, run).bind(2, static_cast<int64_t>(a.id));
    auto row = find->step();
    if (!row) return row.error();
    if (!*row)
      return Error{ErrorKind::not_found,
                   "window " + std::to_string(a.id) + " of run " + std::to_string(run) + " is not in " +
                       impl_->path.string(),
                   "store the window (add_window) before annotating it"};
    const int64_t window_row = find->int64(0);
    find->reset();
    for (const auto& [key, value] : a.labels)
      if (auto s = put_label->bind(1, window_row).bind(2, key).bind(3, value).run(); !s) return s;
    for (const auto& [key, value] : a.counts)
      if (auto s = put_count->bind(1, window_row).bind(2, key).bind(3, value).run(); !s) return s;
  }
  return tx->commit();
}

Status Store::end_run(RunId run, int64_t end_t_ns, int exit_status) {
  std::lock_guard lock(impl_->mu);
  if (auto s = impl_->require_writable("end_run"); !s) return s;
  auto q = impl_->db.prepare("UPDATE runs SET end_t_ns = ?2, exit_status = ?3 WHERE run_id = ?1");
  if (!q) return q.error();
  q->bind(1, run).bind(2, end_t_ns).bind(3, int64_t{exit_status});
  if (auto s = q->run(); !s) return s;
  if (impl_->db.changes() != 1) return impl_->run_not_found(run);
  return {};
}

}  // namespace wattlab
