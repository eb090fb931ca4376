// Store: everything that reads runs back.
#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>

#include "codec.h"
#include "schema.h"
#include "store_impl.h"
#include "wattlab/store/store.h"

namespace wattlab {
namespace {

constexpr const char* kSummarySelect =
    "SELECT run_id, command_json, host, start_utc, start_t_ns, end_t_ns, exit_status, simulated, "
    "device_selection, devices_json, wattlab_version, reading_count, telemetry_count, "
    "(SELECT count(*) FROM windows w WHERE w.run_id = runs.run_id) FROM runs";

Result<RunSummary> summary_from_row(const sqlite::Stmt& q) {
  RunSummary s;
  s.run_id = q.int64(0);
  auto command = store_detail::strings_from_json(q.text(1), "runs.command_json");
  if (!command) return command.error();
  s.info.command = std::move(*command);
  s.info.host = q.text(2);
  s.info.start_utc = q.text(3);
  s.info.start_t_ns = q.int64(4);
  s.end_t_ns = q.opt_int64(5);
  if (auto status = q.opt_int64(6)) s.exit_status = static_cast<int>(*status);
  s.info.simulated = q.int64(7) != 0;
  s.info.device_selection = q.text(8);
  auto devices = store_detail::devices_from_json(q.text(9), "runs.devices_json");
  if (!devices) return devices.error();
  s.info.devices = std::move(*devices);
  s.wattlab_version = q.text(10);
  s.reading_count = q.int64(11);
  s.telemetry_count = q.int64(12);
  s.window_count = q.int64(13);
  return s;
}

Status load_domains(sqlite::Db& db, RunRecord& run) {
  auto q = db.prepare(
      "SELECT domain_id, vendor, name, uuid, scope, parent, simulated, sensor_model_json FROM domains "
      "WHERE run_id = ?1 ORDER BY domain_index");
  if (!q) return q.error();
  q->bind(1, run.run_id);
  for (;;) {
    auto row = q->step();
    if (!row) return row.error();
    if (!*row) return {};
    Domain d;
    d.id = q->text(0);
    d.vendor = q->text(1);
    d.name = q->text(2);
    d.uuid = q->text(3);
    d.scope = q->text(4);
    d.parent = q->text(5);
    d.simulated = q->int64(6) != 0;
    auto model = store_detail::sensor_model_from_json(q->text(7), "domains.sensor_model_json");
    if (!model) return model.error();
    d.model = std::move(*model);
    run.domains.push_back(std::move(d));
  }
}

Result<DomainEnergy> domain_energy_from_row(const sqlite::Stmt& q, int first) {
  DomainEnergy d;
  int c = first;
  d.domain_id = q.text(c++);
  d.simulated = q.int64(c++) != 0;
  d.available = q.int64(c++) != 0;
  d.energy_j = q.real(c++);
  d.uncertainty_j = q.real(c++);
  d.systematic_j = q.real(c++);
  d.mean_power_w = q.real(c++);
  d.peak_power_w = q.real(c++);
  auto estimator = store_detail::estimator_from_column(q.text(c++), "window_domains.estimator");
  if (!estimator) return estimator.error();
  d.estimator = *estimator;
  d.cross_check_j = q.opt_real(c++);
  auto cross_check = store_detail::estimator_from_column(q.text(c++), "window_domains.cross_check_estimator");
  if (!cross_check) return cross_check.error();
  d.cross_check_estimator = *cross_check;
  d.readings_used = static_cast<std::size_t>(q.int64(c++));
  auto issues = store_detail::strings_from_json(q.text(c++), "window_domains.issues_json");
  if (!issues) return issues.error();
  d.issues = std::move(*issues);
  for (const auto& f : store_detail::kTelemetryFields) d.telemetry.*(f.member) = q.opt_real(c++);
  if (auto mask = q.opt_int64(c)) d.telemetry.clock_event_reasons_seen = static_cast<uint64_t>(*mask);
  return d;
}

Status load_windows(sqlite::Db& db, RunRecord& run) {
  auto q = db.prepare(
      "SELECT window_row, window_id, name, t_begin_ns, t_end_ns, final FROM windows WHERE run_id = ?1 "
      "ORDER BY window_row");
  if (!q) return q.error();
  q->bind(1, run.run_id);
  std::map<int64_t, std::size_t> by_row;  // window_row -> index in run.windows
  for (;;) {
    auto row = q->step();
    if (!row) return row.error();
    if (!*row) break;
    WindowResult w;
    w.id = static_cast<WindowId>(q->int64(1));
    w.name = q->text(2);
    w.t_begin_ns = q->int64(3);
    w.t_end_ns = q->int64(4);
    w.final = q->int64(5) != 0;
    by_row[q->int64(0)] = run.windows.size();
    run.windows.push_back(std::move(w));
  }

  auto r = db.prepare("SELECT wd.window_row, " + store_detail::window_domain_columns() +
                      " FROM window_domains wd JOIN windows w ON w.window_row = wd.window_row "
                      "WHERE w.run_id = ?1 ORDER BY wd.window_row, wd.position");
  if (!r) return r.error();
  r->bind(1, run.run_id);
  for (;;) {
    auto row = r->step();
    if (!row) return row.error();
    if (!*row) return {};
    auto d = domain_energy_from_row(*r, 1);
    if (!d) return d.error();
    // The join and the windows query disagree only in a damaged file (an index that no longer
    // matches its table).
    const auto it = by_row.find(r->int64(0));
    if (it == by_row.end())
      return Error{ErrorKind::parse,
                   fmt::format("run {}: a window_domains row names window_row {}, which the windows table does not list",
                               run.run_id, r->int64(0)),
                   "the database is damaged: check it with `sqlite3 FILE 'PRAGMA integrity_check'`"};
    run.windows[it->second].domains.push_back(std::move(*d));
  }
}

// Version-2 annotations; a version-1 file opened read-only has none.
Status load_annotations(sqlite::Db& db, RunRecord& run) {
  if (!store_detail::has_annotation_tables(db)) return {};
  auto t = db.prepare("SELECT key, value FROM run_tags WHERE run_id = ?1");
  if (!t) return t.error();
  t->bind(1, run.run_id);
  for (;;) {
    auto row = t->step();
    if (!row) return row.error();
    if (!*row) break;
    run.info.tags[t->text(0)] = t->text(1);
  }
  std::map<int64_t, WindowResult*> by_row;
  auto w = db.prepare("SELECT window_row FROM windows WHERE run_id = ?1 ORDER BY window_row");
  if (!w) return w.error();
  w->bind(1, run.run_id);
  for (std::size_t i = 0;; ++i) {
    auto row = w->step();
    if (!row) return row.error();
    if (!*row) break;
    if (i < run.windows.size()) by_row[w->int64(0)] = &run.windows[i];
  }
  for (const char* table : {"window_counts", "window_labels"}) {
    const bool counts = std::string_view(table) == "window_counts";
    auto q = db.prepare(std::string("SELECT a.window_row, a.key, a.value FROM ") + table +
                        " a JOIN windows w ON w.window_row = a.window_row WHERE w.run_id = ?1");
    if (!q) return q.error();
    q->bind(1, run.run_id);
    for (;;) {
      auto row = q->step();
      if (!row) return row.error();
      if (!*row) break;
      auto it = by_row.find(q->int64(0));
      if (it == by_row.end()) continue;
      if (counts)
        it->second->counts[q->text(1)] = q->real(2);
      else
        it->second->labels[q->text(1)] = q->text(2);
    }
  }
  return {};
}

Status load_events(sqlite::Db& db, RunRecord& run) {
  auto q = db.prepare(
      "SELECT t_ns, domain_id, reading, kind, message FROM events WHERE run_id = ?1 ORDER BY t_ns, rowid");
  if (!q) return q.error();
  q->bind(1, run.run_id);
  for (;;) {
    auto row = q->step();
    if (!row) return row.error();
    if (!*row) return {};
    run.events.push_back(MeterEvent{q->int64(0), q->text(1), q->text(2), q->text(3), q->text(4)});
  }
}

}  // namespace

Result<RunRecord> Store::load_run(RunId run) const {
  std::lock_guard lock(impl_->mu);
  auto& db = impl_->db;
  auto q = db.prepare(std::string(kSummarySelect) + " WHERE run_id = ?1");
  if (!q) return q.error();
  q->bind(1, run);
  auto row = q->step();
  if (!row) return row.error();
  if (!*row) return impl_->run_not_found(run);
  auto summary = summary_from_row(*q);
  if (!summary) return summary.error();
  RunRecord record;
  static_cast<RunSummary&>(record) = std::move(*summary);
  if (auto s = load_domains(db, record); !s) return s.error();
  if (auto s = load_windows(db, record); !s) return s.error();
  if (auto s = load_events(db, record); !s) return s.error();
  if (auto s = load_annotations(db, record); !s) return s.error();
  return record;
}

Result<RunId> Store::latest_run_id() const {
  std::lock_guard lock(impl_->mu);
  auto q = impl_->db.prepare("SELECT max(run_id) FROM runs");
  if (!q) return q.error();
  auto row = q->step();
  if (!row) return row.error();
  if (!*row || q->is_null(0))
    return Error{ErrorKind::not_found, impl_->path.string() + " holds no runs yet",
                 "record one with `wattlab run -- CMD`"};
  return q->int64(0);
}

Result<std::vector<RunSummary>> Store::list_runs() const {
  std::lock_guard lock(impl_->mu);
  auto q = impl_->db.prepare(std::string(kSummarySelect) + " ORDER BY run_id");
  if (!q) return q.error();
  std::vector<RunSummary> out;
  for (;;) {
    auto row = q->step();
    if (!row) return row.error();
    if (!*row) return out;
    auto s = summary_from_row(*q);
    if (!s) return s.error();
    out.push_back(std::move(*s));
  }
}

Result<std::vector<Reading>> Store::load_readings(RunId run, uint32_t domain_index, ReadingKind kind,
                                                  int64_t t_begin_ns, int64_t t_end_ns) const {
  if (static_cast<std::size_t>(kind) >= kReadingKindCount)
    return Error{ErrorKind::invalid_argument,
                 "load_readings: reading kind " + std::to_string(static_cast<int>(kind)) + " is not a ReadingKind"};
  std::lock_guard lock(impl_->mu);
  auto count = impl_->domain_count(run);
  if (!count) return count.error();
  if (domain_index >= *count)
    return Error{ErrorKind::not_found,
                 "run " + std::to_string(run) + " has no domain " + std::to_string(domain_index) + " (it has " +
                     std::to_string(*count) + ")"};
  const char* table = is_power_or_energy(kind) ? "readings" : "telemetry";
  auto q = impl_->db.prepare(std::string("SELECT t_ns, value, read_dur_ns FROM ") + table +
                             " WHERE run_id = ?1 AND domain_index = ?2 AND kind = ?3 AND t_ns BETWEEN ?4 AND ?5"
                             " ORDER BY t_ns");
  if (!q) return q.error();
  q->bind(1, run).bind(2, int64_t{domain_index}).bind_static(3, to_string(kind)).bind(4, t_begin_ns).bind(5, t_end_ns);
  std::vector<Reading> out;
  for (;;) {
    auto row = q->step();
    if (!row) return row.error();
    if (!*row) return out;
    out.push_back(Reading{q->int64(0), kind, q->real(1), q->int64(2)});
  }
}

}  // namespace wattlab
