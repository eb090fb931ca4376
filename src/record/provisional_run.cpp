#include "record/provisional_run.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "meter/replay.h"
#include "store/run_readings.h"

namespace wattlab {

Status add_provisional_run_window(const Store& store, RunRecord& record) {
  if (record.complete() || record.domains.empty()) return {};
  auto readings = load_run_readings(store, record);
  if (!readings) return readings.error();
  if (readings->empty()) return {};
  // The span every domain's readings cover: from the latest first reading to the earliest last
  // one, of the energy counter where a domain has one (an edge needs the counter on both sides).
  const std::size_t n = record.domains.size();
  std::vector<int64_t> first(n, INT64_MAX), last(n, INT64_MIN), first_any(n, INT64_MAX), last_any(n, INT64_MIN);
  for (const auto& r : *readings) {
    if (r.domain_index >= n) continue;
    const int64_t t = r.reading.t_ns;
    first_any[r.domain_index] = std::min(first_any[r.domain_index], t);
    last_any[r.domain_index] = std::max(last_any[r.domain_index], t);
    if (r.reading.kind != ReadingKind::energy_counter_j) continue;
    first[r.domain_index] = std::min(first[r.domain_index], t);
    last[r.domain_index] = std::max(last[r.domain_index], t);
  }
  int64_t begin_ns = INT64_MIN, end_ns = INT64_MAX;
  for (std::size_t d = 0; d < n; ++d) {
    if (first_any[d] == INT64_MAX) continue;  // a domain without readings: unavailable in the result
    const bool counter = first[d] != INT64_MAX;
    begin_ns = std::max(begin_ns, counter ? first[d] : first_any[d]);
    end_ns = std::min(end_ns, counter ? last[d] : last_any[d]);
  }
  if (begin_ns == INT64_MIN || end_ns <= begin_ns) return {};
  WindowId id = 1;
  for (const auto& w : record.windows) id = std::max(id, w.id + 1);
  const WindowSpan span{id, kProvisionalRunWindow, begin_ns, end_ns};
  try {
    std::vector<WindowResult> r = reestimate_windows(record.domains, *readings, std::span(&span, 1));
    if (r.empty()) return {};
    r[0].final = false;  // the run may have gone on past its newest stored reading
    record.windows.push_back(std::move(r[0]));
  } catch (const std::exception& e) {
    return Error{ErrorKind::parse, "run " + std::to_string(record.run_id) + " in " + store.path().string() +
                                       ": its readings cannot be estimated: " + e.what()};
  }
  return {};
}

}  // namespace wattlab
