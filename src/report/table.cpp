#include "report/table.h"

#include <algorithm>
#include <cctype>

namespace wattlab::report {

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

namespace {
bool numeric(const std::string& s) {
  if (s.empty()) return true;
  bool digit = false;
  for (unsigned char c : s) {
    if (std::isdigit(c)) digit = true;
    else if (!(c == '.' || c == '-' || c == '+' || c == ',' || c == '%' || c == 'x' || c == 'e')) return false;
  }
  return digit;
}
}  // namespace

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  const std::size_t nc = headers_.size();
  std::vector<std::size_t> w(nc);
  std::vector<bool> right(nc, true);
  for (std::size_t c = 0; c < nc; ++c) {
    w[c] = display_width(headers_[c]);
    for (const auto& r : rows_) {
      w[c] = std::max(w[c], display_width(r[c]));
      if (!numeric(r[c])) right[c] = false;
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < nc; ++c) {
      const std::string pad(w[c] - display_width(cells[c]), ' ');
      out += c ? "  " : "";
      out += right[c] ? pad + cells[c] : cells[c] + (c + 1 < nc ? pad : "");
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers_);
  std::size_t total = 0;
  for (auto x : w) total += x;
  out += std::string(total + 2 * (nc ? nc - 1 : 0), '-') + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

}  // namespace wattlab::report
