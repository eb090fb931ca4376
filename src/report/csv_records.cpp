#include "report/csv_records.h"

#include <fmt/format.h>

namespace wattlab::report {

Result<std::vector<CsvRecord>> parse_csv(std::string_view text, const std::string& source) {
  std::vector<CsvRecord> out;
  std::size_t i = 0, line = 1;
  auto fail = [&](std::size_t at_line, const std::string& why) -> Error {
    return Error{ErrorKind::parse, fmt::format("{} line {}: {}", source, at_line, why),
                 "the file must be CSV as RFC 4180 writes it (python/bench/gemm_points_csv.py)"};
  };
  while (i < text.size()) {
    if (text[i] == '\n' || (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {  // an empty line
      i += text[i] == '\r' ? 2 : 1;
      ++line;
      continue;
    }
    CsvRecord rec;
    rec.line = line;
    while (true) {  // one field per pass
      std::string field;
      if (i < text.size() && text[i] == '"') {
        const std::size_t opened = line;
        ++i;
        while (true) {
          if (i >= text.size()) return fail(opened, "a quoted field is not closed before the end of the file");
          const char c = text[i++];
          if (c == '"') {
            if (i < text.size() && text[i] == '"') {
              field += '"';
              ++i;
              continue;
            }
            break;
          }
          if (c == '\n') ++line;
          field += c;
        }
        if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
          return fail(line, fmt::format("field {} has text after its closing quote", rec.fields.size() + 1));
      } else {
        while (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          if (text[i] == '"')
            return fail(line, fmt::format("field {} has a quote but does not start with one", rec.fields.size() + 1));
          field += text[i++];
        }
      }
      rec.fields.push_back(std::move(field));
      if (i >= text.size()) break;
      if (text[i] == ',') {
        ++i;
        continue;
      }
      if (text[i] == '\r') {
        if (i + 1 >= text.size() || text[i + 1] != '\n') return fail(line, "a carriage return not followed by a line feed");
        ++i;
      }
      ++i;  // the line feed
      ++line;
      break;
    }
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace wattlab::report
