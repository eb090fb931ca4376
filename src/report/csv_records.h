// RFC 4180 CSV records: fields separated by commas, records by LF or CRLF; a field in double
// quotes may hold commas, line breaks and "" for one quote. Each record keeps the line it starts
// on, so a reader can name the line of a bad row.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/core/error.h"

namespace wattlab::report {

struct CsvRecord {
  std::size_t line = 0;  // 1-based line of the record's first character
  std::vector<std::string> fields;
};

// Every record of `text` (a final line break is optional; empty lines are skipped). Errors
// (parse), naming `source` and the line: a quote inside an unquoted field, text after a closing
// quote, a quoted field that never closes.
Result<std::vector<CsvRecord>> parse_csv(std::string_view text, const std::string& source);

}  // namespace wattlab::report
