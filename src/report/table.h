// Plain-text tables for the terminal: a header, rows of cells, right-aligned numbers.
#pragma once
#include <string>
#include <vector>

namespace wattlab::report {

class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  void add_row(std::vector<std::string> cells);  // pads or truncates to the header's width
  std::size_t rows() const { return rows_.size(); }
  // Columns whose every cell looks like a number are right-aligned.
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// Display width of UTF-8 text (code points; enough for the arrows and x signs used here).
std::size_t display_width(const std::string& s);

}  // namespace wattlab::report
