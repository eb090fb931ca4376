// Timelines rebuilt from recorded readings, and windows estimated from them (replay.h): the
// readings are filed into each domain's timeline as the sampler files them, counter values placed
// by the same counter tracker the sampler uses.
#include "meter/replay.h"

#include <algorithm>
#include <stdexcept>

#include "counter_tracker.h"
#include "estimate.h"
#include "scheduler.h"
#include "timeline.h"

namespace wattlab {
namespace {

// A counter's reads only say when it published: the interval the tracker would ask for next is
// not used here.
constexpr int64_t kReplayIntervalNs = 1'000'000'000;

std::vector<const TimedReading*> in_time_order(std::span<const TimedReading> readings, std::size_t n_domains) {
  std::vector<const TimedReading*> out;
  out.reserve(readings.size());
  for (const TimedReading& r : readings) {
    if (r.domain_index >= n_domains)
      throw std::invalid_argument("reestimate_windows: a reading of domain index " + std::to_string(r.domain_index) +
                                  ", but there are " + std::to_string(n_domains) + " domains");
    out.push_back(&r);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TimedReading* x, const TimedReading* y) { return x->reading.t_ns < y->reading.t_ns; });
  return out;
}

}  // namespace

std::vector<PlacedCounterPoint> place_counter_points(const std::vector<Domain>& domains,
                                                     std::span<const TimedReading> readings) {
  std::vector<PlacedCounterPoint> out;
  const auto ordered = in_time_order(readings, domains.size());
  for (uint32_t d = 0; d < domains.size(); ++d) {
    const ReadingModel* m = domains[d].model.find(ReadingKind::energy_counter_j);
    if (m == nullptr) continue;
    // On the grid where the sampler puts it there (a dear counter), at plain intervals otherwise.
    const bool on_grid = m->read_cost_ns >= Scheduler::kExpensiveReadNs && m->update_period_ns > 0;
    CounterTracker tracker(m->update_period_ns, kReplayIntervalNs, on_grid);
    double cost_sum_ns = 0;
    std::size_t reads = 0;
    for (const TimedReading* tr : ordered) {
      if (tr->domain_index != d || tr->reading.kind != ReadingKind::energy_counter_j) continue;
      const Reading& r = tr->reading;
      const double cost_ns = reads > 0 ? cost_sum_ns / static_cast<double>(reads) : static_cast<double>(r.read_dur_ns);
      const CounterNext next = tracker.on_read({r.value, r.t_ns, r.read_dur_ns, r.t_ns + r.read_dur_ns / 2, cost_ns});
      cost_sum_ns += static_cast<double>(r.read_dur_ns);
      ++reads;
      if (next.point) out.push_back({d, r.t_ns, next.point->t_ns, next.point->sigma_ns, next.point->value});
    }
  }
  return out;
}

std::vector<WindowResult> reestimate_windows(const std::vector<Domain>& domains, std::span<const TimedReading> readings,
                                             std::span<const WindowSpan> windows, const ReplayOptions& options) {
  std::vector<PlacedCounterPoint> placed;
  std::span<const PlacedCounterPoint> points = options.points;
  if (points.empty()) {
    placed = place_counter_points(domains, readings);
    points = placed;
  }
  DomainTimelines tl;
  tl.domains = domains;
  for (const Domain& d : domains) tl.timelines.emplace_back(d, options.timeline_capacity);
  for (const Timeline& t : tl.timelines) tl.any_counter |= t.has_counter();
  tl.states.resize(domains.size());

  // Readings and counter points, each in the order the sampler would have filed them: a counter
  // value when its read came back.
  std::vector<const PlacedCounterPoint*> pts;
  for (const PlacedCounterPoint& p : points)
    if (p.domain_index < domains.size() && !(options.hide_counter_point && options.hide_counter_point(p))) pts.push_back(&p);
  std::stable_sort(pts.begin(), pts.end(),
                   [](const PlacedCounterPoint* x, const PlacedCounterPoint* y) { return x->t_read_ns < y->t_read_ns; });
  const auto ordered = in_time_order(readings, domains.size());
  std::size_t ip = 0;
  auto file_points_until = [&](int64_t t_ns) {
    for (; ip < pts.size() && pts[ip]->t_read_ns <= t_ns; ++ip)
      tl.timelines[pts[ip]->domain_index].add_counter(pts[ip]->raw_j, pts[ip]->t_ns, pts[ip]->sigma_ns);
  };
  for (const TimedReading* tr : ordered) {
    const Reading& r = tr->reading;
    file_points_until(r.t_ns);
    Timeline& t = tl.timelines[tr->domain_index];
    switch (r.kind) {
      case ReadingKind::energy_counter_j: break;  // placed above
      case ReadingKind::power_sample_w: t.add_sample(r); break;
      case ReadingKind::power_instant_w: t.add_instant(r); break;
      default: t.add_other(r); break;
    }
  }
  file_points_until(INT64_MAX);

  std::vector<WindowResult> out;
  out.reserve(windows.size());
  for (const WindowSpan& w : windows) {
    if (w.t_end_ns < w.t_begin_ns)
      throw std::invalid_argument("reestimate_windows: window '" + w.name + "' ends before it begins");
    bool covered = true;
    for (const Timeline& t : tl.timelines) covered = covered && end_is_covered(t, w.t_end_ns);
    out.push_back(build_window_result(tl, w.id, w.name, w.t_begin_ns, w.t_end_ns, {}, covered));
  }
  return out;
}

}  // namespace wattlab
