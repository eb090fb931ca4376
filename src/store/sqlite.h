// A thin RAII layer over the SQLite C API that turns result codes into wattlab Errors.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "wattlab/core/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace wattlab::sqlite {

// Maps a SQLite result code onto an Error: what failed on which file, and what to do.
Error make_error(int code, std::string_view what, std::string_view detail, const std::string& file);

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3_stmt* stmt, std::string file) : stmt_(stmt), file_(std::move(file)) {}
  Stmt(Stmt&& other) noexcept;
  Stmt& operator=(Stmt&& other) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  // Parameters are 1-based, as in SQLite. A failed bind is reported by the next step().
  Stmt& bind(int index, int64_t value);
  Stmt& bind(int index, double value);
  Stmt& bind(int index, std::string_view text);         // copied
  Stmt& bind_static(int index, std::string_view text);  // must outlive the step (string literals)
  Stmt& bind(int index, std::optional<double> value);   // NULL when empty
  Stmt& bind_null(int index);

  // true: a row is ready; false: done. Errors carry the statement's SQL.
  Result<bool> step();
  // Runs a statement that returns no rows, then resets it for reuse.
  Status run();
  void reset();  // clears bindings too

  int64_t int64(int col) const;  // columns are 0-based, as in SQLite
  double real(int col) const;
  std::string text(int col) const;
  bool is_null(int col) const;
  std::optional<double> opt_real(int col) const;
  std::optional<int64_t> opt_int64(int col) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  std::string file_;
  int bind_error_ = 0;
};

class Db {
 public:
  // flags: SQLITE_OPEN_* bits. Opening is lazy in SQLite: a file that is not a database fails
  // at the first statement, not here.
  // `name` is what errors call the file (default: `file`, which may be a file: URI).
  static Result<Db> open(const std::string& file, int flags, const std::string& name = "");

  Db() = default;
  Db(Db&& other) noexcept;
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  Status exec(std::string_view sql);
  Result<Stmt> prepare(std::string_view sql);
  // The first column of the first row of a query, as text (NULL: empty string).
  Result<std::string> query_text(std::string_view sql);
  Result<int64_t> query_int64(std::string_view sql);
  int64_t last_insert_rowid() const;
  int64_t changes() const;  // rows changed by the last statement
  const std::string& file() const { return file_; }
  sqlite3* handle() const { return db_; }

 private:
  Db(sqlite3* db, std::string file) : db_(db), file_(std::move(file)) {}
  sqlite3* db_ = nullptr;
  std::string file_;
};

// BEGIN IMMEDIATE on construction (takes the write lock up front, so a batch never fails half
// way on a busy lock); rolls back unless commit() succeeded.
class Transaction {
 public:
  static Result<Transaction> begin(Db& db);
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  Status commit();

 private:
  explicit Transaction(Db& db) : db_(&db) {}
  Db* db_ = nullptr;
};

}  // namespace wattlab::sqlite
