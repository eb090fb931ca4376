#include "record/provisional_run.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "meter/replay.h"
#include "store/run_readings.h"

namespace wattlab {
namespace {

// The earliest and the latest time of one kind of evidence in one domain.
struct Extent {
  int64_t first_ns = INT64_MAX;
  int64_t last_ns = INT64_MIN;
  bool any() const { return first_ns != INT64_MAX; }
  void add(int64_t t_ns) {
    first_ns = std::min(first_ns, t_ns);
    last_ns = std::max(last_ns, t_ns);
  }
};

struct DomainExtents {
  Extent reads;     // every power and energy reading
  Extent counter;   // the energy counter's reads
  Extent points;    // the counter's values placed in time (an edge there needs nothing else)
  Extent samples;   // the sample buffer: it carries the energy on past the counter's last value
};

// Whether every domain that has readings has an estimate (one without readings never has).
bool all_available(const WindowResult& r, const std::vector<DomainExtents>& ext) {
  for (std::size_t i = 0; i < r.domains.size(); ++i)
    if (!r.domains[i].available && (i >= ext.size() || ext[i].reads.any())) return false;
  return true;
}

}  // namespace

Status add_provisional_run_window(const Store& store, RunRecord& record) {
  if (record.complete() || record.domains.empty()) return {};
  auto readings = load_run_readings(store, record);
  if (!readings) return readings.error();
  if (readings->empty()) return {};
  const std::size_t n = record.domains.size();
  std::vector<DomainExtents> ext(n);
  for (const auto& r : *readings) {
    if (r.domain_index >= n) continue;
    DomainExtents& e = ext[r.domain_index];
    const int64_t t = r.reading.t_ns;
    e.reads.add(t);
    if (r.reading.kind == ReadingKind::energy_counter_j) e.counter.add(t);
    if (r.reading.kind == ReadingKind::power_sample_w) e.samples.add(t);
  }
  std::vector<PlacedCounterPoint> points;
  try {
    points = place_counter_points(record.domains, *readings);
  } catch (const std::exception& e) {
    return Error{ErrorKind::parse, "run " + std::to_string(record.run_id) + " in " + store.path().string() +
                                       ": its readings cannot be placed: " + e.what()};
  }
  for (const PlacedCounterPoint& p : points) ext[p.domain_index].points.add(p.t_ns);

  // Spans every domain's readings cover, widest first; the first whose estimate every domain has
  // is kept. A domain with a counter starts at its first read and ends where its sample buffer
  // ends past the counter's last value (the samples carry the energy on from there), else at the
  // counter's last read, else between its placed values. A domain without a counter spans its
  // readings.
  enum class End { samples, reads, points };
  auto span_for = [&](End end) -> std::optional<std::pair<int64_t, int64_t>> {
    int64_t begin_ns = INT64_MIN, end_ns = INT64_MAX;
    for (const DomainExtents& e : ext) {
      if (!e.reads.any()) continue;  // a domain without readings: unavailable in the result
      if (!e.counter.any()) {
        begin_ns = std::max(begin_ns, e.reads.first_ns);
        end_ns = std::min(end_ns, e.reads.last_ns);
        continue;
      }
      int64_t b = e.counter.first_ns, z = e.counter.last_ns;
      if (end == End::points && e.points.any()) {
        b = std::max(b, e.points.first_ns);
        z = e.points.last_ns;
      } else if (end == End::samples && e.points.any()) {
        z = std::max(e.points.last_ns, e.samples.any() ? e.samples.last_ns : INT64_MIN);
      }
      begin_ns = std::max(begin_ns, b);
      end_ns = std::min(end_ns, z);
    }
    if (begin_ns == INT64_MIN || end_ns <= begin_ns) return std::nullopt;
    return std::pair{begin_ns, end_ns};
  };

  WindowId id = 1;
  for (const auto& w : record.windows) id = std::max(id, w.id + 1);
  std::optional<WindowResult> kept;
  try {
    for (End end : {End::samples, End::reads, End::points}) {
      const auto span = span_for(end);
      if (!span) continue;
      const WindowSpan w{id, kProvisionalRunWindow, span->first, span->second};
      std::vector<WindowResult> r = reestimate_windows(record.domains, *readings, std::span(&w, 1), {.points = points});
      if (r.empty()) continue;
      const bool good = all_available(r[0], ext);
      if (!kept || good) kept = std::move(r[0]);
      if (good) break;
    }
  } catch (const std::exception& e) {
    return Error{ErrorKind::parse, "run " + std::to_string(record.run_id) + " in " + store.path().string() +
                                       ": its readings cannot be estimated: " + e.what()};
  }
  if (!kept) return {};
  kept->final = false;  // the run may have gone on past its newest stored reading
  record.windows.push_back(std::move(*kept));
  return {};
}

}  // namespace wattlab
