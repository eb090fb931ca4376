// CSV reader: a header of leaderboard field names, one configuration per line (RFC 4180 quoting).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "row_parser.h"
#include "wattlab/core/error.h"
#include "diagnose/readers.h"

namespace wattlab::diagnose {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot open for reading (does it exist?)", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

struct CsvLine {
  std::vector<std::string> cells;
  std::size_t line_no = 0;  // 1-based line where the record starts
};

// The offset of the first byte that does not belong to well-formed UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), or npos. Records go out as JSON, which is UTF-8.
std::size_t first_invalid_utf8(std::string_view text) {
  const auto* b = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = b[i];
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    else return i;
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      const unsigned char lo_k = k == 1 ? lo : 0x80, hi_k = k == 1 ? hi : 0xBF;
      if (b[i + k] < lo_k || b[i + k] > hi_k) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

std::vector<CsvLine> split_csv(std::string_view text, const std::string& source) {
  if (const auto bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    throw UsageError(fmt::format("{}: line {}: not UTF-8 text (byte 0x{:02X} at offset {})", source, line,
                                 static_cast<unsigned char>(text[bad]), bad));
  }
  std::vector<CsvLine> out;
  CsvLine cur;
  std::string cell;
  bool quoted = false, any = false;
  std::size_t line = 1;
  cur.line_no = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cell += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      cur.cells.push_back(std::move(cell));
      cell.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !cell.empty()) {
        cur.cells.push_back(std::move(cell));
        out.push_back(std::move(cur));
      }
      cell.clear();
      cur = {};
      any = false;
      cur.line_no = ++line;
    } else {
      cell += c;
      any = true;
    }
  }
  if (quoted) throw UsageError(fmt::format("{}: line {}: unterminated quoted field", source, cur.line_no));
  if (any || !cell.empty()) {
    cur.cells.push_back(std::move(cell));
    out.push_back(std::move(cur));
  }
  return out;
}

// A cell as JSON: a number when the whole cell parses as one, else a string; empty is null.
nlohmann::json cell_value(const std::string& s) {
  if (s.empty()) return nullptr;
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (end == s.c_str() + s.size() && errno == 0) {
    if (s.find_first_of(".eE") == std::string::npos && std::abs(x) < 9e15) return static_cast<long long>(x);
    return x;
  }
  return s;
}

}  // namespace

Dataset parse_csv(std::string_view text, const std::string& source) {
  auto lines = split_csv(text, source);
  if (lines.empty()) throw UsageError(fmt::format("{}: empty CSV (a header row is required)", source));
  const auto& header = lines.front().cells;
  std::string task = std::filesystem::path(source).stem().string();
  std::vector<ConfigRecord> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto& l = lines[i];
    const std::size_t row = i - 1;
    const std::string where = fmt::format("{}: row {} (line {})", source, row, l.line_no);
    if (l.cells.size() != header.size())
      throw UsageError(fmt::format("{}: has {} fields, the header has {}", where, l.cells.size(), header.size()));
    nlohmann::json obj = nlohmann::json::object();
    for (std::size_t c = 0; c < header.size(); ++c) obj[header[c]] = cell_value(l.cells[c]);
    auto r = detail::parse_row(obj, where, "");
    r.source = source;
    r.row_index = row;
    r.task = obj.contains("task") && obj["task"].is_string() ? obj["task"].get<std::string>() : task;
    rows.push_back(std::move(r));
  }
  if (!rows.empty()) task = rows.front().task;
  return make_dataset(source, fmt::format("CSV {}", std::filesystem::path(source).filename().string()), task,
                      std::move(rows));
}

Dataset read_csv(const std::string& path) { return parse_csv(read_text_file(path), path); }

}  // namespace wattlab::diagnose
