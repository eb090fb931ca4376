// Typed access to the labels and counts of a stored window, for the record codecs
// (gemm_point_record.h, serve_bench_record.h, characterize_record.h). A reader keeps the first
// error it meets, naming the record, the label and the offending value; decode() returns it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "wattlab/core/error.h"

namespace wattlab::store_detail {

class FieldReader {
 public:
  // `context` prefixes every error ("gemm_point window 'gemm_point 3'"; empty: none); `noun` names
  // what a key is ("label", or "tag" where labels fall back to run tags).
  FieldReader(const std::map<std::string, std::string>& labels, const std::map<std::string, double>& counts,
              std::string context, std::string noun = "label");

  // Required labels: a missing or malformed one is an error (the returned value is then empty/0).
  std::string text(const char* key);
  int64_t integer(const char* key);
  uint64_t unsigned_integer(const char* key);
  bool flag(const char* key, std::string_view yes, std::string_view no);  // "1"/"0", "true"/"false", ...
  // Optional labels: absent is empty; present but malformed is an error.
  std::optional<std::string> optional_text(const char* key) const;
  std::optional<double> optional_number(const char* key);  // finite decimal
  std::optional<bool> optional_flag(const char* key, std::string_view yes, std::string_view no);
  // Counts: a missing required one is an error; counts are numbers by type.
  double count(const char* key);
  std::optional<double> optional_count(const char* key) const;

  bool failed() const { return error_.has_value(); }
  const Error& error() const { return *error_; }

 private:
  const std::string* find(const char* key) const;
  template <class T>
  T whole(const char* key, const char* what);
  void fail(std::string what);
  const std::map<std::string, std::string>& labels_;
  const std::map<std::string, double>& counts_;
  std::string context_, noun_;
  std::optional<Error> error_;
};

}  // namespace wattlab::store_detail
