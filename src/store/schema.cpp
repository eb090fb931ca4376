#include "schema.h"

#include <string_view>

#include "codec.h"

namespace wattlab::store_detail {
namespace {

// Version 1 (version 2 adds kTablesV2 below). Changing any of this means a new kSchemaVersion and a migration in prepare_schema.
constexpr std::string_view kTablesV1 = R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE runs (
  run_id           INTEGER PRIMARY KEY,
  command_json     TEXT NOT NULL,     -- JSON array of argv
  host             TEXT NOT NULL,
  start_utc        TEXT NOT NULL,     -- ISO-8601 UTC
  start_t_ns       INTEGER NOT NULL,  -- monotonic
  end_t_ns         INTEGER,           -- NULL: never ended (killed or running)
  exit_status      INTEGER,
  simulated        INTEGER NOT NULL,
  device_selection TEXT NOT NULL,
  devices_json     TEXT NOT NULL,     -- [{"backend":..., "properties":{...}}]
  wattlab_version  TEXT NOT NULL,
  reading_count    INTEGER NOT NULL DEFAULT 0,  -- kept in the same transaction as the rows
  telemetry_count  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE domains (
  run_id            INTEGER NOT NULL REFERENCES runs(run_id),
  domain_index      INTEGER NOT NULL,  -- TimedReading::domain_index
  domain_id         TEXT NOT NULL,
  vendor            TEXT NOT NULL,
  name              TEXT NOT NULL,
  uuid              TEXT NOT NULL,
  scope             TEXT NOT NULL,
  parent            TEXT NOT NULL,
  simulated         INTEGER NOT NULL,
  sensor_model_json TEXT NOT NULL,
  PRIMARY KEY (run_id, domain_index)
) WITHOUT ROWID;
CREATE TABLE readings (
  run_id       INTEGER NOT NULL REFERENCES runs(run_id),
  domain_index INTEGER NOT NULL,
  kind         TEXT NOT NULL,  -- to_string(ReadingKind)
  t_ns         INTEGER NOT NULL,
  value        REAL NOT NULL,
  read_dur_ns  INTEGER NOT NULL
);
CREATE INDEX readings_by_run_domain_kind_t ON readings (run_id, domain_index, kind, t_ns);
CREATE TABLE telemetry (
  run_id       INTEGER NOT NULL REFERENCES runs(run_id),
  domain_index INTEGER NOT NULL,
  kind         TEXT NOT NULL,
  t_ns         INTEGER NOT NULL,
  value        REAL NOT NULL,
  read_dur_ns  INTEGER NOT NULL
);
CREATE INDEX telemetry_by_run_domain_kind_t ON telemetry (run_id, domain_index, kind, t_ns);
CREATE TABLE windows (
  window_row INTEGER PRIMARY KEY,
  run_id     INTEGER NOT NULL REFERENCES runs(run_id),
  window_id  INTEGER NOT NULL,  -- the meter's WindowId
  name       TEXT NOT NULL,
  t_begin_ns INTEGER NOT NULL,
  t_end_ns   INTEGER NOT NULL,
  final      INTEGER NOT NULL,
  UNIQUE (run_id, window_id)
);
CREATE TABLE events (
  run_id    INTEGER NOT NULL REFERENCES runs(run_id),
  t_ns      INTEGER NOT NULL,
  domain_id TEXT NOT NULL,
  reading   TEXT NOT NULL,
  kind      TEXT NOT NULL,
  message   TEXT NOT NULL
);
CREATE INDEX events_by_run_t ON events (run_id, t_ns);
)sql";

// Version 2: what callers say about runs and windows (RunInfo::tags, WindowResult::counts/labels).
constexpr std::string_view kTablesV2 = R"sql(
CREATE TABLE run_tags (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  key    TEXT NOT NULL,
  value  TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE TABLE window_counts (
  window_row INTEGER NOT NULL REFERENCES windows(window_row),
  key        TEXT NOT NULL,
  value      REAL NOT NULL,
  PRIMARY KEY (window_row, key)
) WITHOUT ROWID;
CREATE TABLE window_labels (
  window_row INTEGER NOT NULL REFERENCES windows(window_row),
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  PRIMARY KEY (window_row, key)
) WITHOUT ROWID;
)sql";

// window_domains: one row per DomainEnergy, its telemetry columns from kTelemetryFields.
std::string window_domains_sql() {
  std::string sql = R"sql(
CREATE TABLE window_domains (
  window_row            INTEGER NOT NULL REFERENCES windows(window_row),
  position              INTEGER NOT NULL,  -- order within WindowResult::domains
  domain_id             TEXT NOT NULL,
  simulated             INTEGER NOT NULL,
  available             INTEGER NOT NULL,
  energy_j              REAL NOT NULL,
  uncertainty_j         REAL NOT NULL,
  systematic_j          REAL NOT NULL,
  mean_power_w          REAL NOT NULL,
  peak_power_w          REAL NOT NULL,
  estimator             TEXT NOT NULL,
  cross_check_j         REAL,
  cross_check_estimator TEXT NOT NULL,
  readings_used         INTEGER NOT NULL,
  issues_json           TEXT NOT NULL,  -- JSON array of strings
)sql";
  for (const auto& f : kTelemetryFields) sql += std::string("  ") + f.name + " REAL,\n";
  sql += std::string("  ") + kClockEventReasonsField + " INTEGER,\n";
  sql += "  PRIMARY KEY (window_row, position)\n) WITHOUT ROWID;\n";
  return sql;
}

Status newer_schema_error(sqlite::Db& db, int64_t version) {
  // meta is read only for the message: a newer schema may have changed anything else.
  auto writer = db.query_text("SELECT value FROM meta WHERE key = 'created_by'");
  std::string by = writer && !writer->empty() ? " (created by " + *writer + ")" : "";
  return Error{ErrorKind::schema,
               db.file() + " was written by schema version " + std::to_string(version) + by +
                   "; this wattlab reads up to " + std::to_string(kSchemaVersion) + ": upgrade wattlab",
               "", static_cast<int>(version)};
}

Status not_a_store_error(const sqlite::Db& db, std::string_view why) {
  return Error{ErrorKind::parse, db.file() + " is a SQLite database but not a wattlab store (" + std::string(why) + ")",
               "give the path of a database written by wattlab, or a new file name"};
}

Status create_schema(sqlite::Db& db, const std::string& wattlab_version) {
  auto tx = sqlite::Transaction::begin(db);
  if (!tx) return tx.error();
  if (auto s = db.exec(schema_sql()); !s) return s;
  auto put = db.prepare("INSERT INTO meta (key, value) VALUES (?1, ?2)");
  if (!put) return put.error();
  if (auto s = put->bind(1, std::string_view("schema_version")).bind(2, std::to_string(kSchemaVersion)).run(); !s)
    return s;
  if (auto s = put->bind(1, std::string_view("created_by")).bind(2, "wattlab " + wattlab_version).run(); !s)
    return s;
  if (auto s = db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion)); !s) return s;
  return tx->commit();
}

Status migrate_v1_to_v2(sqlite::Db& db) {
  auto tx = sqlite::Transaction::begin(db);
  if (!tx) return tx.error();
  if (auto s = db.exec(std::string(kTablesV2)); !s) return s;
  if (auto s = db.exec("UPDATE meta SET value = '2' WHERE key = 'schema_version'"); !s) return s;
  if (auto s = db.exec("PRAGMA user_version = 2"); !s) return s;
  return tx->commit();
}

}  // namespace

static_assert(kWindowDomainColumnCount == 13 + static_cast<int>(kTelemetryFields.size()) + 1,
              "window_domain_columns() and kWindowDomainColumnCount disagree");

std::string window_domain_columns() {
  std::string cols =
      "domain_id, simulated, available, energy_j, uncertainty_j, systematic_j, mean_power_w, peak_power_w, "
      "estimator, cross_check_j, cross_check_estimator, readings_used, issues_json";
  for (const auto& f : kTelemetryFields) cols += std::string(", ") + f.name;
  cols += std::string(", ") + kClockEventReasonsField;
  return cols;
}

std::string schema_sql() { return std::string(kTablesV1) + window_domains_sql() + std::string(kTablesV2); }

bool has_annotation_tables(sqlite::Db& db) {
  auto n = db.query_int64("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'run_tags'");
  return n && *n == 1;
}

Status prepare_schema(sqlite::Db& db, bool read_only, const std::string& wattlab_version) {
  // The first statement that reads the file: a non-database fails here with SQLITE_NOTADB.
  auto version = db.query_int64("PRAGMA user_version");
  if (!version) return version.error();
  if (*version > kSchemaVersion) return newer_schema_error(db, *version);

  if (!read_only) {
    // WAL: readers (wattlab report) never block the writer, and a killed writer loses only the
    // transaction it was in. NORMAL: durable against process crashes, cheap commits.
    auto mode = db.query_text("PRAGMA journal_mode = WAL");
    if (!mode) return mode.error();
    if (*mode != "wal")
      return Error{ErrorKind::unavailable, db.file() + ": SQLite refused WAL mode (journal_mode is " + *mode + ")",
                   "put the database on a local file system"};
    if (auto s = db.exec("PRAGMA synchronous = NORMAL"); !s) return s;
  }

  if (*version == 0) {
    auto tables = db.query_int64("SELECT count(*) FROM sqlite_schema");
    if (!tables) return tables.error();
    if (*tables != 0) return not_a_store_error(db, "user_version is 0 and it has tables");
    if (read_only) return not_a_store_error(db, "it is empty");
    return create_schema(db, wattlab_version);
  }
  auto meta = db.query_int64("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'meta'");
  if (!meta) return meta.error();
  if (*meta != 1) return not_a_store_error(db, "it has no meta table");
  // Migrations, oldest first. Read-only opens leave the file as it is (loaders cope with v1).
  if (*version == 1 && !read_only) return migrate_v1_to_v2(db);
  return {};
}

}  // namespace wattlab::store_detail
