#include "record_fields.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace wattlab::store_detail {

FieldReader::FieldReader(const std::map<std::string, std::string>& labels, const std::map<std::string, double>& counts,
                         std::string context, std::string noun)
    : labels_(labels), counts_(counts), context_(std::move(context)), noun_(std::move(noun)) {}

const std::string* FieldReader::find(const char* key) const {
  auto it = labels_.find(key);
  return it == labels_.end() ? nullptr : &it->second;
}

void FieldReader::fail(std::string what) {
  if (error_) return;
  error_ = Error{ErrorKind::parse, context_.empty() ? std::move(what) : context_ + ": " + what,
                 "the window was written by something other than wattlab, or changed since; re-record it"};
}

std::string FieldReader::text(const char* key) {
  if (const std::string* v = find(key)) return *v;
  fail(fmt::format("{} '{}' is missing", noun_, key));
  return {};
}

// A whole decimal number of type T (std::from_chars: no sign for unsigned, nothing may follow).
template <class T>
T FieldReader::whole(const char* key, const char* what) {
  const std::string* v = find(key);
  if (!v) {
    fail(fmt::format("{} '{}' is missing", noun_, key));
    return 0;
  }
  T out = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || end != v->data() + v->size() || v->empty())
    fail(fmt::format("{} '{}' = '{}' is not {}", noun_, key, *v, what));
  return out;
}

int64_t FieldReader::integer(const char* key) { return whole<int64_t>(key, "an integer"); }

uint64_t FieldReader::unsigned_integer(const char* key) { return whole<uint64_t>(key, "a non-negative integer"); }

bool FieldReader::flag(const char* key, std::string_view yes, std::string_view no) {
  if (!find(key)) {
    fail(fmt::format("{} '{}' is missing", noun_, key));
    return false;
  }
  return optional_flag(key, yes, no).value_or(false);
}

std::optional<std::string> FieldReader::optional_text(const char* key) const {
  if (const std::string* v = find(key)) return *v;
  return std::nullopt;
}

std::optional<double> FieldReader::optional_number(const char* key) {
  const std::string* v = find(key);
  if (!v) return std::nullopt;
  // strtod semantics (as std::stod): leading blanks, decimal or hex, "1e3"; nothing may follow.
  try {
    std::size_t used = 0;
    const double out = std::stod(*v, &used);
    if (used == v->size() && std::isfinite(out)) return out;
  } catch (const std::exception&) {
  }
  fail(fmt::format("{} '{}' = '{}' is not a number", noun_, key, *v));
  return std::nullopt;
}

std::optional<bool> FieldReader::optional_flag(const char* key, std::string_view yes, std::string_view no) {
  const std::string* v = find(key);
  if (!v) return std::nullopt;
  if (*v == yes) return true;
  if (*v == no) return false;
  fail(fmt::format("{} '{}' = '{}' is neither '{}' nor '{}'", noun_, key, *v, yes, no));
  return std::nullopt;
}

double FieldReader::count(const char* key) {
  if (auto v = optional_count(key)) return *v;
  fail(fmt::format("count '{}' is missing", key));
  return 0;
}

std::optional<double> FieldReader::optional_count(const char* key) const {
  auto it = counts_.find(key);
  if (it == counts_.end()) return std::nullopt;
  return it->second;
}

}  // namespace wattlab::store_detail
