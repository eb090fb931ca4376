#include "wattlab/core/error.h"

namespace wattlab {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_argument: return "invalid argument";
    case ErrorKind::not_found: return "not found";
    case ErrorKind::not_supported: return "not supported";
    case ErrorKind::no_permission: return "no permission";
    case ErrorKind::unavailable: return "unavailable";
    case ErrorKind::io: return "I/O error";
    case ErrorKind::parse: return "parse error";
    case ErrorKind::device_lost: return "device lost";
    case ErrorKind::counter_reset: return "counter reset";
    case ErrorKind::schema: return "schema mismatch";
    case ErrorKind::internal: return "internal error";
  }
  return "unknown error";
}

std::string Error::message() const {
  std::string m = what + " (" + to_string(kind) + ")";
  if (!hint.empty()) m += "; " + hint;
  return m;
}

}  // namespace wattlab
