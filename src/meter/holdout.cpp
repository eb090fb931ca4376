// The hold-out check (holdout.h): windows snapped to counter updates, the updates at their edges
// hidden, the windows re-estimated from the rest of the readings, errors against U95.
#include "meter/holdout.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <stdexcept>
#include <tuple>
#include <fmt/format.h>

#include "meter/replay.h"

namespace wattlab {
namespace {

constexpr double kNs = 1e-9;
constexpr const char* kClasses[] = {"<0.15 s", "0.15-0.4 s", "0.4-1 s", "1-3 s", "3-15 s", ">=15 s"};

std::string label_of(const WindowResult& w, const char* key) {
  const auto it = w.labels.find(key);
  return it == w.labels.end() || it->second.empty() ? "-" : it->second;
}

// Index of the point nearest t among those `allowed`, or -1.
template <class Allowed>
long nearest(const std::vector<PlacedCounterPoint>& p, int64_t t, Allowed allowed) {
  long best = -1;
  int64_t best_d = std::numeric_limits<int64_t>::max();
  const auto it = std::lower_bound(p.begin(), p.end(), t, [](const PlacedCounterPoint& x, int64_t v) { return x.t_ns < v; });
  const long mid = static_cast<long>(it - p.begin());
  // Look outwards from t until an allowed point on each side.
  for (long i = mid; i < static_cast<long>(p.size()); ++i)
    if (allowed(i)) {
      best = i, best_d = p[static_cast<std::size_t>(i)].t_ns - t;
      break;
    }
  for (long i = mid - 1; i >= 0; --i)
    if (allowed(i)) {
      if (t - p[static_cast<std::size_t>(i)].t_ns < best_d) best = i;
      break;
    }
  return best;
}

double median_of_sorted(const std::vector<double>& v) {
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct DomainPoints {
  uint32_t domain = 0;
  std::vector<PlacedCounterPoint> p;
  int keep_every = 1;
  int64_t max_sigma_ns = 0;
  double update_s = 0;  // the counter's update period  // an edge placed less well than this is no truth
  bool kept(long i) const { return i % keep_every == 0; }
  bool hideable(long i) const { return keep_every == 1 || !kept(i); }
  // Point i sits on the update grid of its neighbours: each interval beside it within a quarter
  // of an update period of a whole number of updates. A point off the grid (a value placed in a
  // probe's bracket) is no truth.
  bool on_grid(long i) const {
    const auto& x = p[static_cast<std::size_t>(i)];
    if (x.sigma_ns > max_sigma_ns) return false;
    for (long j : {i - 1, i + 1}) {
      if (j < 0 || j >= static_cast<long>(p.size())) continue;
      const double r = std::abs(static_cast<double>(x.t_ns - p[static_cast<std::size_t>(j)].t_ns)) * kNs / update_s;
      if (std::round(r) < 1 || std::abs(r - std::round(r)) > 0.25) return false;
    }
    return true;
  }
  // The power around point i: the higher of the two update intervals beside it (the truth's
  // timing error is the point's placement error times this).
  double power_near_w(long i) const {
    double w = 0;
    for (long j : {i - 1, i})
      if (j >= 0 && j + 1 < static_cast<long>(p.size())) {
        const auto& x = p[static_cast<std::size_t>(j)];
        const auto& y = p[static_cast<std::size_t>(j + 1)];
        if (y.t_ns > x.t_ns) w = std::max(w, (y.raw_j - x.raw_j) / (static_cast<double>(y.t_ns - x.t_ns) * kNs));
      }
    return w;
  }
};

}  // namespace

bool HoldoutWindow::inside() const { return std::abs(error_j()) <= std::hypot(u95_j, truth_u95_j); }

double HoldoutWindow::ratio() const {
  if (u95_j > 0) return std::abs(error_j()) / u95_j;
  return error_j() == 0 ? 0.0 : std::numeric_limits<double>::infinity();
}

void wilson95(std::size_t k, std::size_t n, double& lo, double& hi) {
  if (n == 0) {
    lo = 0, hi = 1;
    return;
  }
  const double z = 1.959963984540054, nn = static_cast<double>(n), p = static_cast<double>(k) / nn;
  const double denom = 1 + z * z / nn;
  const double center = (p + z * z / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  lo = std::max(0.0, center - half);
  hi = std::min(1.0, center + half);
}

std::string length_class(double dur_s) {
  const double bounds[] = {0.15, 0.4, 1.0, 3.0, 15.0};
  for (std::size_t i = 0; i < std::size(bounds); ++i)
    if (dur_s < bounds[i]) return kClasses[i];
  return kClasses[std::size(kClasses) - 1];
}

std::vector<HoldoutCell> summarize_holdout(std::span<const HoldoutWindow> windows) {
  std::map<std::pair<std::string, std::string>, std::vector<const HoldoutWindow*>> by_cell;
  std::set<std::string> levels;
  std::map<std::string, std::set<std::string>> class_levels;
  for (const HoldoutWindow& w : windows) {
    class_levels[w.length_class].insert(w.level);
    by_cell[{w.length_class, w.level}].push_back(&w);
    by_cell[{w.length_class, "all"}].push_back(&w);
    by_cell[{"all", "all"}].push_back(&w);
    levels.insert(w.level);
  }
  auto cell = [&](const std::string& cls, const std::string& level) {
    HoldoutCell c;
    c.length_class = cls;
    c.level = level;
    std::vector<double> ratios;
    for (const HoldoutWindow* w : by_cell[{cls, level}]) {
      ++c.n;
      c.inside += w->inside();
      ratios.push_back(w->ratio());
    }
    std::sort(ratios.begin(), ratios.end());
    c.share = c.n ? static_cast<double>(c.inside) / static_cast<double>(c.n) : 0;
    wilson95(c.inside, c.n, c.wilson_lo, c.wilson_hi);
    if (!ratios.empty()) {
      c.median_ratio = median_of_sorted(ratios);
      c.p95_ratio = ratios[static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(ratios.size()))) - 1];
    }
    return c;
  };
  std::vector<HoldoutCell> out;
  for (const char* cls : kClasses) {
    for (const std::string& level : levels)
      if (by_cell.count({cls, level})) out.push_back(cell(cls, level));
    if (class_levels[cls].size() > 1) out.push_back(cell(cls, "all"));
  }
  if (!windows.empty()) out.push_back(cell("all", "all"));
  return out;
}

HoldoutResult holdout(const std::vector<Domain>& domains, std::span<const TimedReading> readings,
                      std::span<const WindowResult> stored, const HoldoutOptions& o) {
  if (stored.empty()) throw std::invalid_argument("holdout: the run has no stored windows to snap to counter updates");
  if (!(o.keep_every_s > 0)) throw std::invalid_argument("holdout: keep_every_s must be positive");
  HoldoutResult res;
  std::vector<DomainPoints> doms;
  for (const PlacedCounterPoint& p : place_counter_points(domains, readings)) {
    if (doms.empty() || doms.back().domain != p.domain_index) doms.push_back({p.domain_index, {}});
    doms.back().p.push_back(p);
  }
  std::erase_if(doms, [](const DomainPoints& d) { return d.p.size() < 3; });
  if (doms.empty()) throw std::invalid_argument("holdout: the run has no energy counter with at least 3 updates read");
  for (DomainPoints& d : doms) {
    std::vector<double> gaps;
    for (std::size_t i = 1; i < d.p.size(); ++i) gaps.push_back(static_cast<double>(d.p[i].t_ns - d.p[i - 1].t_ns) * kNs);
    std::sort(gaps.begin(), gaps.end());
    const double spacing = median_of_sorted(gaps);
    d.keep_every = std::max(1, static_cast<int>(std::lround(o.keep_every_s / spacing)));
    const ReadingModel* m = domains[d.domain].model.find(ReadingKind::energy_counter_j);
    d.update_s = m != nullptr && m->update_period_ns > 0 ? static_cast<double>(m->update_period_ns) * kNs : spacing;
    d.max_sigma_ns = static_cast<int64_t>(d.update_s * 0.25e9);
    res.point_spacing_s = spacing;
    res.keep_every = d.keep_every;
  }
  std::vector<TimedReading> sorted(readings.begin(), readings.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const TimedReading& x, const TimedReading& y) { return x.reading.t_ns < y.reading.t_ns; });
  const int64_t context_ns = static_cast<int64_t>(o.context_s * 1e9);
  std::set<std::tuple<uint32_t, long, long>> seen;
  for (const WindowResult& w : stored) {
    for (const DomainPoints& d : doms) {
      ++res.candidates;
      const long ia = nearest(d.p, w.t_begin_ns, [&](long i) { return o.hide_begin ? d.hideable(i) : d.kept(i); });
      const long ib = nearest(d.p, w.t_end_ns, [&](long i) { return d.hideable(i); });
      bool ok = ia >= 0 && ib > ia && d.on_grid(ia) && d.on_grid(ib);
      for (long i = std::max(ia, 0L) + 1; ok && i <= ib; ++i)
        ok = d.p[static_cast<std::size_t>(i)].raw_j >= d.p[static_cast<std::size_t>(i - 1)].raw_j;  // no reset inside
      if (!ok) {
        ++res.not_on_updates;
        continue;
      }
      if (!seen.insert({d.domain, ia, ib}).second) continue;
      const PlacedCounterPoint& pa = d.p[static_cast<std::size_t>(ia)];
      const PlacedCounterPoint& pb = d.p[static_cast<std::size_t>(ib)];
      // The readings around the window, and the domain's counter points among them.
      const auto lo = std::lower_bound(sorted.begin(), sorted.end(), pa.t_ns - context_ns,
                                       [](const TimedReading& x, int64_t v) { return x.reading.t_ns < v; });
      const auto hi = std::upper_bound(sorted.begin(), sorted.end(), pb.t_ns + context_ns,
                                       [](int64_t v, const TimedReading& x) { return v < x.reading.t_ns; });
      const std::span<const TimedReading> near(lo, hi);
      const long i0 = static_cast<long>(std::lower_bound(d.p.begin(), d.p.end(), pa.t_ns - context_ns,
                                                         [](const PlacedCounterPoint& x, int64_t v) { return x.t_ns < v; }) -
                                        d.p.begin());
      const long i1 = static_cast<long>(std::upper_bound(d.p.begin(), d.p.end(), pb.t_ns + context_ns,
                                                         [](int64_t v, const PlacedCounterPoint& x) { return v < x.t_ns; }) -
                                        d.p.begin());
      const std::span<const PlacedCounterPoint> pts(d.p.data() + i0, static_cast<std::size_t>(i1 - i0));
      ReplayOptions ro;
      ro.points = pts;
      ro.timeline_capacity = std::max<std::size_t>(1024, std::bit_ceil(near.size()));
      ro.hide_counter_point = [&](const PlacedCounterPoint& p) {
        const long i = i0 + static_cast<long>(&p - pts.data());
        return !d.kept(i) || (o.hide_begin && i == ia) || i == ib;
      };
      const WindowSpan span{0, w.name, pa.t_ns, pb.t_ns};
      const WindowResult r = reestimate_windows(domains, near, std::span<const WindowSpan>(&span, 1), ro).front();
      const DomainEnergy& e = r.domains.at(d.domain);
      if (!e.available) {
        ++res.not_estimated;
        continue;
      }
      HoldoutWindow h;
      h.name = w.name;
      h.domain_id = domains[d.domain].id;
      h.level = label_of(w, "level");
      h.t_begin_ns = pa.t_ns;
      h.t_end_ns = pb.t_ns;
      h.dur_s = static_cast<double>(pb.t_ns - pa.t_ns) * kNs;
      h.length_class = length_class(h.dur_s);
      h.truth_j = pb.raw_j - pa.raw_j;
      h.truth_u95_j = 2 * std::hypot(d.power_near_w(ia) * static_cast<double>(pa.sigma_ns),
                                     d.power_near_w(ib) * static_cast<double>(pb.sigma_ns)) * kNs;
      h.energy_j = e.energy_j;
      h.u95_j = e.uncertainty_j;
      h.estimator = to_string(e.estimator);
      res.windows.push_back(std::move(h));
    }
  }
  res.cells = summarize_holdout(res.windows);
  return res;
}

void write_holdout_csv(std::ostream& out, const HoldoutResult& r) {
  out << "domain,name,level,length_class,t_begin_ns,t_end_ns,dur_s,truth_j,truth_u95_j,energy_j,u95_j,error_j,"
         "ratio,inside,estimator\n";
  auto q = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string t = "\"";
    for (char c : s) t += c == '"' ? std::string("\"\"") : std::string(1, c);
    return t + "\"";
  };
  for (const HoldoutWindow& w : r.windows)
    out << fmt::format("{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.4f},{},{}\n", q(w.domain_id),
                       q(w.name), q(w.level), w.length_class, w.t_begin_ns, w.t_end_ns, w.dur_s, w.truth_j,
                       w.truth_u95_j, w.energy_j, w.u95_j, w.error_j(), w.ratio(), w.inside() ? 1 : 0, q(w.estimator));
}

}  // namespace wattlab
