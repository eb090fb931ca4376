// Fuzzes the marks protocol (src/meter/marks.cpp, docs/marks.md): every line either parses or
// gives a parse error that names the problem; the collector, fed the same lines one per 1 ms of
// arrival time, never produces a window that ends before it begins or a count that is not a finite
// number >= 0, and accounts for every line.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "meter/marks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using wattlab::fuzz::check;
  namespace marks = wattlab::marks;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr int64_t run_start_ns = 1'000'000'000;
  marks::MarkCollector collector(run_start_ns);
  int64_t arrival_ns = run_start_ns;
  std::size_t lines = 0, windows = 0;
  auto check_window = [&](const marks::MarkedWindow& w) {
    check(w.t_end_ns >= w.t_begin_ns, "window '" + w.name + "' ends before it begins");
    check(w.t_begin_ns >= run_start_ns, "window '" + w.name + "' begins before the run");
    for (const auto& [k, v] : w.counts)
      check(std::isfinite(v) && v >= 0, "window '" + w.name + "' count '" + k + "' is " + std::to_string(v));
    ++windows;
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    std::string_view stripped = line;  // the collector ignores trailing blanks and blank lines
    while (!stripped.empty() && (stripped.back() == '\r' || stripped.back() == ' ' || stripped.back() == '\t'))
      stripped.remove_suffix(1);
    if (stripped.empty()) continue;
    auto m = marks::parse_mark(line);
    if (!m) {
      check(m.error().kind == wattlab::ErrorKind::parse, "a bad mark must be a parse error");
      check(!m.error().what.empty(), "a parse error names the problem");
    }
    arrival_ns += 1'000'000;
    ++lines;
    for (const auto& w : collector.feed(line, arrival_ns)) check_window(w);
  }
  for (const auto& w : collector.finish(arrival_ns + 1'000'000)) check_window(w);
  const auto& report = collector.report();
  check(report.lines == lines, "the report counts every non-empty line");
  check(report.windows == windows, "the report counts every window handed out");
  check(collector.open_windows() == 0, "finish closes every window");
  (void)report.as_run_tags();
  return 0;
}
