#include "sqlite.h"

#include <sqlite3.h>

#include <utility>

namespace wattlab::sqlite {

Error make_error(int code, std::string_view what, std::string_view detail, const std::string& file) {
  Error e;
  e.vendor_code = code;
  e.what = std::string(what) + " on " + file + ": " + std::string(detail);
  switch (code & 0xff) {  // primary code; extended codes keep their detail in vendor_code
    case SQLITE_NOTADB:
      e.kind = ErrorKind::parse;
      e.what = file + " is not a SQLite database (" + std::string(detail) + ")";
      e.hint = "give the path of a wattlab database (.db) or a new file name";
      break;
    case SQLITE_CORRUPT:
      e.kind = ErrorKind::parse;
      e.hint = "the database is damaged; restore it or start a new one";
      break;
    case SQLITE_CANTOPEN:
      e.kind = ErrorKind::not_found;
      e.hint = "check that the file (read-only) or its folder (read-write) exists";
      break;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      e.kind = ErrorKind::no_permission;
      e.hint = "check the permissions of the file and its folder (WAL needs the -wal/-shm files)";
      break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      e.kind = ErrorKind::unavailable;
      e.hint = "another process holds the database; retry when it is done";
      break;
    case SQLITE_FULL:
    case SQLITE_IOERR:
      e.kind = ErrorKind::io;
      e.hint = "check free space and the device the database is on";
      break;
    default:
      e.kind = ErrorKind::internal;
      break;
  }
  return e;
}

// --- Stmt ---

Stmt::Stmt(Stmt&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), file_(std::move(other.file_)), bind_error_(other.bind_error_) {}

Stmt& Stmt::operator=(Stmt&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    file_ = std::move(other.file_);
    bind_error_ = other.bind_error_;
  }
  return *this;
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

namespace {
void keep_first(int& slot, int rc) {
  if (slot == SQLITE_OK && rc != SQLITE_OK) slot = rc;
}
}  // namespace

Stmt& Stmt::bind(int index, int64_t value) {
  keep_first(bind_error_, sqlite3_bind_int64(stmt_, index, value));
  return *this;
}
Stmt& Stmt::bind(int index, double value) {
  keep_first(bind_error_, sqlite3_bind_double(stmt_, index, value));
  return *this;
}
Stmt& Stmt::bind(int index, std::string_view text) {
  keep_first(bind_error_, sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                                              SQLITE_UTF8));
  return *this;
}
Stmt& Stmt::bind_static(int index, std::string_view text) {
  keep_first(bind_error_, sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_STATIC,
                                              SQLITE_UTF8));
  return *this;
}
Stmt& Stmt::bind(int index, std::optional<double> value) {
  return value ? bind(index, *value) : bind_null(index);
}
Stmt& Stmt::bind_null(int index) {
  keep_first(bind_error_, sqlite3_bind_null(stmt_, index));
  return *this;
}

Result<bool> Stmt::step() {
  if (bind_error_ != SQLITE_OK) {
    int rc = std::exchange(bind_error_, SQLITE_OK);
    return make_error(rc, "binding a parameter", sqlite3_errstr(rc), file_);
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_);
  Error e = make_error(sqlite3_extended_errcode(db), std::string("running \"") + sqlite3_sql(stmt_) + "\"",
                       sqlite3_errmsg(db), file_);
  sqlite3_reset(stmt_);
  return e;
}

Status Stmt::run() {
  auto r = step();
  reset();
  if (!r) return r.error();
  return {};
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = SQLITE_OK;
}

int64_t Stmt::int64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Stmt::real(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Stmt::text(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
}
bool Stmt::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
std::optional<double> Stmt::opt_real(int col) const {
  if (is_null(col)) return std::nullopt;
  return real(col);
}
std::optional<int64_t> Stmt::opt_int64(int col) const {
  if (is_null(col)) return std::nullopt;
  return int64(col);
}

// --- Db ---

Result<Db> Db::open(const std::string& file, int flags, const std::string& name) {
  const std::string& shown = name.empty() ? file : name;
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    int code = db ? sqlite3_extended_errcode(db) : rc;
    sqlite3_close_v2(db);
    return make_error(code, "opening", detail, shown);
  }
  sqlite3_extended_result_codes(db, 1);
  return Db(db, shown);
}

Db::Db(Db&& other) noexcept : db_(std::exchange(other.db_, nullptr)), file_(std::move(other.file_)) {}

Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    file_ = std::move(other.file_);
  }
  return *this;
}

Db::~Db() { sqlite3_close_v2(db_); }

Status Db::exec(std::string_view sql) {
  std::string owned(sql);  // sqlite3_exec wants a NUL-terminated string
  char* msg = nullptr;
  int rc = sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &msg);
  if (rc == SQLITE_OK) return {};
  std::string detail = msg ? msg : sqlite3_errstr(rc);
  sqlite3_free(msg);
  return make_error(sqlite3_extended_errcode(db_), "running \"" + owned + "\"", detail, file_);
}

Result<Stmt> Db::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                              nullptr);
  if (rc != SQLITE_OK) {
    const std::string detail = sqlite3_errmsg(db_);
    Error e = make_error(sqlite3_extended_errcode(db_), "preparing \"" + std::string(sql) + "\"", detail, file_);
    // wattlab's statements name only its own tables and columns: a file without one of them is
    // damaged or not a wattlab store, which is bad input, not a fault of wattlab.
    if ((rc & 0xff) == SQLITE_ERROR && (detail.rfind("no such table", 0) == 0 || detail.rfind("no such column", 0) == 0)) {
      e.kind = ErrorKind::parse;
      e.hint = "the file lacks a table or column of wattlab's schema: it is damaged or was not written by wattlab";
    }
    return e;
  }
  return Stmt(stmt, file_);
}

Result<std::string> Db::query_text(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) return stmt.error();
  auto row = stmt->step();
  if (!row) return row.error();
  if (!*row) return std::string();
  return stmt->text(0);
}

Result<int64_t> Db::query_int64(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) return stmt.error();
  auto row = stmt->step();
  if (!row) return row.error();
  if (!*row) return int64_t{0};
  return stmt->int64(0);
}

int64_t Db::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int64_t Db::changes() const { return sqlite3_changes64(db_); }

// --- Transaction ---

Result<Transaction> Transaction::begin(Db& db) {
  if (auto s = db.exec("BEGIN IMMEDIATE"); !s) return s.error();
  return Transaction(db);
}

Transaction::~Transaction() {
  if (db_ != nullptr) (void)db_->exec("ROLLBACK");
}

Status Transaction::commit() {
  Status s = db_->exec("COMMIT");
  if (s) db_ = nullptr;  // on failure the destructor rolls back
  return s;
}

}  // namespace wattlab::sqlite
