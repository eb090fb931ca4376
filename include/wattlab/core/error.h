// Errors as values: what failed, the offending value, and what to do (DESIGN.md conventions).
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace wattlab {

// A few kinds that callers branch on; backends map vendor codes onto these once, keeping the raw code.
enum class ErrorKind {
  invalid_argument,  // bad input from the user: exit 2
  not_found,         // a file, device, run or symbol that is not there
  not_supported,     // the device or driver lacks the reading
  no_permission,     // the OS or driver refused
  unavailable,       // exists but cannot be used now (library missing, busy)
  io,                // a read or write failed
  parse,             // malformed data
  device_lost,       // the device went away mid-run
  counter_reset,     // a cumulative counter went backwards
  schema,            // a database from another schema version
  internal,          // a broken invariant inside wattlab
};

const char* to_string(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::internal;
  std::string what;      // what failed, with the value: "nvmlDeviceGetPowerUsage(gpu:0) returned 3"
  std::string hint;      // what to do about it; may be empty
  int vendor_code = 0;   // raw vendor return code, where there is one

  std::string message() const;  // "what (kind); hint"
};

// Thrown for bad usage or bad input; the CLI turns it into exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown where an Error must unwind (outside hot paths); carries the Error.
class WattlabError : public std::runtime_error {
 public:
  explicit WattlabError(Error e) : std::runtime_error(e.message()), error_(std::move(e)) {}
  const Error& error() const { return error_; }

 private:
  Error error_;
};

// A value or the reason there is none. std::expected is C++23; this is the small part we need.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return check(), std::get<0>(v_); }
  const T& value() const& { return check(), std::get<0>(v_); }
  T&& value() && { return check(), std::get<0>(std::move(v_)); }
  const Error& error() const { return std::get<1>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }

 private:
  void check() const {
    if (!ok()) throw WattlabError(std::get<1>(v_));
  }
  std::variant<T, Error> v_;
};

// Success or the reason for failure.
class Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT
  static Status success() { return {}; }
  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

}  // namespace wattlab
