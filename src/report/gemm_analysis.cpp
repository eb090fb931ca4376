#include "report/gemm_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <tuple>

#include "report/gemm_nonfinite.h"

namespace wattlab::report {
namespace {

using Values = std::array<std::optional<double>, kGemmQtyCount>;

// A count the analysis can use: present and finite.
std::optional<double> finite(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::optional<double> parse_double(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// Mean over the points of each quantity that has a value.
Values mean_values(const std::vector<const GemmMeasurement*>& pts) {
  Values out{};
  for (std::size_t q = 0; q < kGemmQtyCount; ++q) {
    double sum = 0;
    std::size_t n = 0;
    for (const auto* p : pts)
      if (p->q[q]) sum += *p->q[q], ++n;
    if (n > 0) out[q] = sum / static_cast<double>(n);
  }
  return out;
}

std::optional<double> delta_of(GemmQty q, const std::optional<double>& v, const std::optional<double>& ref) {
  if (!v || !ref) return std::nullopt;
  if (!relative_delta(q)) return *v - *ref;
  if (*ref == 0) return std::nullopt;
  return 100.0 * (*v / *ref - 1.0);
}

// Rows sort by x when both have one, else by the value's text.
bool value_less(const GemmRow& a, const GemmRow& b) {
  if (a.x && b.x) return *a.x < *b.x;
  if (a.x != b.x) return a.x.has_value();
  return a.param_value < b.param_value;
}

bool shape_less(const std::string& a, const std::string& b) {
  auto dims = [](const std::string& s) {
    std::array<double, 3> d{0, 0, 0};
    std::size_t at = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      const auto x = s.find('x', at);
      d[i] = parse_double(s.substr(at, x == std::string::npos ? std::string::npos : x - at)).value_or(0);
      if (x == std::string::npos) break;
      at = x + 1;
    }
    return d;
  };
  const auto da = dims(a), db = dims(b);
  return da != db ? da < db : a < b;
}

// A point's value of `q` and the reference points it is compared with: those of its own run when
// it has a time and its run has any (drift-corrected), else every reference point of its seed.
std::optional<DeltaSample> delta_sample(const GemmMeasurement& p, const std::vector<const GemmMeasurement*>& seed_refs,
                                        GemmQty q) {
  if (!p.q[idx(q)]) return std::nullopt;
  DeltaSample s;
  s.value = *p.q[idx(q)];
  if (p.t_ns)
    for (const auto* r : seed_refs)
      if (r->run == p.run && r->t_ns && r->q[idx(q)]) s.refs.push_back({*r->t_ns, *r->q[idx(q)]});
  if (!s.refs.empty()) {
    s.t_ns = p.t_ns;
    std::sort(s.refs.begin(), s.refs.end(), [](const RefPoint& x, const RefPoint& y) { return x.t_ns < y.t_ns; });
    return s;
  }
  for (const auto* r : seed_refs)
    if (r->q[idx(q)]) s.refs.push_back({r->t_ns.value_or(0), *r->q[idx(q)]});
  if (s.refs.empty()) return std::nullopt;
  return s;
}

struct RefKey {
  std::string shape, engine;
  auto operator<=>(const RefKey&) const = default;
};

GemmReference reference_of(const std::string& shape, const std::string& engine,
                           const std::map<std::string, std::vector<const GemmMeasurement*>>& by_seed,
                           const GemmAnalysisOptions& o) {
  GemmReference r;
  r.shape = shape;
  r.engine = engine;
  r.seeds = by_seed.size();
  std::array<std::vector<double>, kGemmQtyCount> per_seed;
  auto widen = [](std::optional<double>& lo, std::optional<double>& hi, const std::optional<double>& v) {
    if (!v) return;
    lo = lo ? std::min(*lo, *v) : *v;
    hi = hi ? std::max(*hi, *v) : *v;
  };
  for (const auto& [seed, pts] : by_seed) {
    r.points += pts.size();
    const Values m = mean_values(pts);
    for (std::size_t q = 0; q < kGemmQtyCount; ++q)
      if (m[q]) per_seed[q].push_back(*m[q]);
    std::optional<double> elo, ehi, plo, phi;
    for (const auto* p : pts) {
      widen(elo, ehi, p->q[idx(GemmQty::energy_per_gemm)]);
      widen(plo, phi, p->q[idx(GemmQty::power)]);
      widen(r.min_energy_j, r.max_energy_j, p->q[idx(GemmQty::energy_per_gemm)]);
      widen(r.min_power_w, r.max_power_w, p->q[idx(GemmQty::power)]);
    }
    auto drift = [](std::optional<double>& out, const std::optional<double>& lo, const std::optional<double>& hi,
                    const std::optional<double>& mean) {
      if (!lo || !mean || *mean == 0) return;
      const double d = 100.0 * (*hi - *lo) / *mean;
      out = out ? std::max(*out, d) : d;
    };
    drift(r.drift_energy_pct, elo, ehi, m[idx(GemmQty::energy_per_gemm)]);
    drift(r.drift_power_pct, plo, phi, m[idx(GemmQty::power)]);
  }
  for (std::size_t q = 0; q < kGemmQtyCount; ++q) r.value[q] = stat_of(per_seed[q]);
  auto cv = [](const Stat& s) -> std::optional<double> {
    if (!s.sd || s.mean == 0) return std::nullopt;
    return 100.0 * *s.sd / std::fabs(s.mean);
  };
  r.cv_energy_pct = cv(r.value[idx(GemmQty::energy_per_gemm)]);
  r.cv_power_pct = cv(r.value[idx(GemmQty::power)]);
  if (r.cv_energy_pct) r.cv_pass = *r.cv_energy_pct <= o.cv_target_pct;
  const Stat& cap = r.value[idx(GemmQty::capped_fraction)];
  r.capped = cap.n > 0 && cap.mean > o.capped_fraction;
  return r;
}

GemmEffect effect_of(const std::vector<const GemmRow*>& rows, const GemmReference* ref, const GemmAnalysisOptions& o) {
  GemmEffect e;
  e.shape = rows.front()->shape;
  e.engine = rows.front()->engine;
  e.experiment = rows.front()->experiment;
  e.param = rows.front()->param;
  e.values = rows.size();
  for (const auto* r : rows) e.seeds = std::max(e.seeds, r->seeds);
  e.reference_capped = ref && ref->capped;
  // End against start, seed by seed.
  auto start_end = [&](GemmQty q) -> std::optional<Stat> {
    if (rows.size() < 2) return std::nullopt;
    std::vector<double> d;
    for (const auto& [seed, first] : rows.front()->per_seed) {
      auto last = rows.back()->per_seed.find(seed);
      if (last == rows.back()->per_seed.end()) continue;
      if (auto v = delta_of(q, last->second[idx(q)], first[idx(q)])) d.push_back(*v);
    }
    if (d.empty()) return std::nullopt;
    return stat_of(d);
  };
  e.start_to_end_energy_pct = start_end(GemmQty::energy_per_gemm);
  e.start_to_end_power_pct = start_end(GemmQty::power);
  auto largest = [&](GemmQty q, std::string& at) -> const GemmRow* {
    const GemmRow* best = nullptr;
    for (const auto* r : rows) {
      const Stat& d = r->delta[idx(q)];
      if (d.n == 0) continue;
      if (!best || std::fabs(d.mean) > std::fabs(best->delta[idx(q)].mean)) best = r;
    }
    if (best) at = best->param_value;
    return best;
  };
  const GemmRow* be = largest(GemmQty::energy_per_gemm, e.max_energy_at);
  const GemmRow* bp = largest(GemmQty::power, e.max_power_at);
  if (be) {
    e.max_energy_pct = be->delta[idx(GemmQty::energy_per_gemm)];
    e.max_energy_ci = be->energy_ci;
    auto mean_if = [](const Stat& s) -> std::optional<double> { return s.n ? std::optional<double>(s.mean) : std::nullopt; };
    e.clock_at_max_energy_pct = mean_if(be->delta[idx(GemmQty::sm_clock)]);
    e.tflops_at_max_energy_pct = mean_if(be->delta[idx(GemmQty::tflops)]);
  }
  if (bp) e.max_power_pct = bp->delta[idx(GemmQty::power)];
  // Where the effect shows, judged at the largest-|ΔE| value.
  const std::optional<double> dp = be && be->delta[idx(GemmQty::power)].n
                                       ? std::optional<double>(be->delta[idx(GemmQty::power)].mean)
                                       : std::nullopt;
  const bool moved = (e.clock_at_max_energy_pct && std::fabs(*e.clock_at_max_energy_pct) >= o.moved_pct) ||
                     (e.tflops_at_max_energy_pct && std::fabs(*e.tflops_at_max_energy_pct) >= o.moved_pct);
  if (!be || !dp) {
    e.shows_in = "no reference";
  } else if (std::fabs(*dp) >= o.flat_pct) {
    e.shows_in = "power";
  } else if (moved) {
    e.cap_shifted = e.reference_capped;
    e.shows_in = e.cap_shifted ? "clock/throughput (at the cap)" : "clock/throughput";
  } else {
    e.shows_in = std::fabs(e.max_energy_pct->mean) >= o.flat_pct ? "energy only" : "not resolved";
  }
  auto curve = [&](GemmQty q) {
    std::vector<double> pct;
    for (const auto* r : rows) {
      if (r->all_excluded()) continue;  // non-finite inputs: no Δ to draw
      if (r->delta[idx(q)].n == 0) return Curve::unknown;
      pct.push_back(r->delta[idx(q)].mean);
    }
    return classify_curve(pct, o.flat_pct);
  };
  e.power_curve = curve(GemmQty::power);
  e.energy_curve = curve(GemmQty::energy_per_gemm);
  return e;
}

GemmSweepAnalysis analyze_sweep(const std::string& id, const std::vector<const GemmMeasurement*>& pts,
                                const GemmAnalysisOptions& o) {
  GemmSweepAnalysis a;
  a.sweep = id;
  a.points = pts.size();
  std::set<RunId> runs;
  // References per (shape, engine), then per seed.
  std::map<RefKey, std::map<std::string, std::vector<const GemmMeasurement*>>> refs;
  struct RowKey {
    std::string shape, engine, experiment, param_value;
    auto operator<=>(const RowKey&) const = default;
  };
  std::map<RowKey, std::map<std::string, std::vector<const GemmMeasurement*>>> rows;
  for (const auto* p : pts) {
    runs.insert(p->run);
    a.simulated = a.simulated || p->simulated;
    if (p->reference) refs[{p->shape, p->engine}][p->seed].push_back(p);
    else rows[{p->shape, p->engine, p->experiment, p->param_value}][p->seed].push_back(p);
  }
  a.runs.assign(runs.begin(), runs.end());
  for (const auto& [key, by_seed] : refs) {
    auto r = reference_of(key.shape, key.engine, by_seed, o);
    if (key.engine == "control") a.control_reference = std::move(r);
    else a.references.push_back(std::move(r));
  }
  for (const auto& [key, by_seed] : rows) {
    GemmRow row;
    row.shape = key.shape;
    row.engine = key.engine;
    row.experiment = key.experiment;
    row.param = by_seed.begin()->second.front()->param;
    row.param_value = key.param_value;
    row.x = param_number(key.param_value);
    row.seeds = by_seed.size();
    std::array<std::vector<double>, kGemmQtyCount> vals, deltas;
    std::vector<std::vector<DeltaSample>> energy_samples;
    const auto rs = refs.find({key.shape, key.engine});
    for (const auto& [seed, sp] : by_seed) {
      const Values v = mean_values(sp);
      std::vector<const GemmMeasurement*> kept;
      for (const auto* p : sp) {
        ++row.points;
        if (p->rel_error) row.max_rel_error = std::max(row.max_rel_error.value_or(0), *p->rel_error);
        if (p->nonfinite_fraction) row.max_nonfinite_fraction = std::max(row.max_nonfinite_fraction.value_or(0), *p->nonfinite_fraction);
        if (p->nonfinite != GemmNonfinite::none && row.nonfinite_label.empty()) row.nonfinite_label = p->nonfinite_label;
        row.nonfinite_input_points += p->nonfinite == GemmNonfinite::inputs;
        row.overflow_points += p->nonfinite == GemmNonfinite::overflow;
        row.unchecked_points += p->nonfinite == GemmNonfinite::unchecked;
        if (!p->excluded()) kept.push_back(p);
      }
      for (std::size_t q = 0; q < kGemmQtyCount; ++q)
        if (v[q]) vals[q].push_back(*v[q]);
      const std::vector<const GemmMeasurement*>* seed_refs = nullptr;
      if (rs != refs.end())
        if (auto it = rs->second.find(seed); it != rs->second.end()) seed_refs = &it->second;
      if (seed_refs) ++row.referenced_seeds;
      if (kept.empty()) continue;
      row.per_seed[seed] = mean_values(kept);
      if (!seed_refs) continue;
      // Per point against its drift-corrected reference, then the seed's mean.
      for (std::size_t q = 0; q < kGemmQtyCount; ++q) {
        const auto qq = static_cast<GemmQty>(q);
        double sum = 0;
        std::size_t n = 0;
        std::vector<DeltaSample> samples;
        for (const auto* p : kept) {
          auto s = delta_sample(*p, *seed_refs, qq);
          if (!s) continue;
          if (auto d = delta_of(qq, s->value, drift_reference(s->refs, s->t_ns))) sum += *d, ++n;
          samples.push_back(std::move(*s));
        }
        if (n > 0) deltas[q].push_back(sum / static_cast<double>(n));
        if (qq == GemmQty::energy_per_gemm && !samples.empty()) energy_samples.push_back(std::move(samples));
      }
    }
    for (std::size_t q = 0; q < kGemmQtyCount; ++q) {
      row.value[q] = stat_of(vals[q]);
      row.delta[q] = stat_of(deltas[q]);
    }
    row.energy_ci = delta_ci(energy_samples, o.ci);
    (row.engine == "control" ? a.controls : a.rows).push_back(std::move(row));
  }
  auto row_less = [](const GemmRow& x, const GemmRow& y) {
    if (x.shape != y.shape) return shape_less(x.shape, y.shape);
    if (x.engine != y.engine) return x.engine < y.engine;
    if (x.experiment != y.experiment) return experiment_less(x.experiment, y.experiment);
    return value_less(x, y);
  };
  std::sort(a.rows.begin(), a.rows.end(), row_less);
  std::sort(a.controls.begin(), a.controls.end(), row_less);
  std::sort(a.references.begin(), a.references.end(), [](const GemmReference& x, const GemmReference& y) {
    return x.shape != y.shape ? shape_less(x.shape, y.shape) : x.engine < y.engine;
  });
  for (std::size_t i = 0; i < a.rows.size();) {
    std::size_t j = i;
    std::vector<const GemmRow*> group;
    while (j < a.rows.size() && a.rows[j].shape == a.rows[i].shape && a.rows[j].engine == a.rows[i].engine &&
           a.rows[j].experiment == a.rows[i].experiment)
      group.push_back(&a.rows[j++]);
    const GemmReference* ref = nullptr;
    for (const auto& r : a.references)
      if (r.shape == a.rows[i].shape && r.engine == a.rows[i].engine) ref = &r;
    a.effects.push_back(effect_of(group, ref, o));
    i = j;
  }
  return a;
}

}  // namespace

bool relative_delta(GemmQty q) { return q != GemmQty::capped_fraction && q != GemmQty::temperature; }

std::optional<double> param_number(const std::string& v) {
  if (v.rfind("2^", 0) == 0) {
    if (auto e = parse_double(v.substr(2))) return std::exp2(*e);
    return std::nullopt;
  }
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    try {
      std::size_t used = 0;
      const auto n = std::stoull(v.substr(2), &used, 16);
      if (used == v.size() - 2) return static_cast<double>(n);
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }
  return parse_double(v);
}

Stat stat_of(const std::vector<double>& xs) {
  Stat s;
  s.n = xs.size();
  if (xs.empty()) return s;
  double sum = 0;
  for (double x : xs) sum += x;
  s.mean = sum / static_cast<double>(xs.size());
  if (xs.size() >= 2) {
    double ss = 0;
    for (double x : xs) ss += (x - s.mean) * (x - s.mean);
    s.sd = std::sqrt(ss / static_cast<double>(xs.size() - 1));
  }
  return s;
}

std::string_view to_string(Curve c) {
  switch (c) {
    case Curve::flat: return "flat";
    case Curve::up: return "up";
    case Curve::down: return "down";
    case Curve::peak: return "peak (inverted U)";
    case Curve::dip: return "dip (U)";
    case Curve::unknown: break;
  }
  return "unknown";
}

Curve classify_curve(const std::vector<double>& pct, double flat_pct) {
  if (pct.size() < 2) return Curve::unknown;
  // Each value against the start value, in %.
  std::vector<double> r;
  for (double p : pct) r.push_back(100.0 * ((1 + p / 100) / (1 + pct.front() / 100) - 1));
  const double hi = *std::max_element(r.begin(), r.end()), lo = *std::min_element(r.begin(), r.end());
  if (hi < flat_pct && lo > -flat_pct) return Curve::flat;
  const double end = r.back();
  if (hi - std::max(end, 0.0) >= flat_pct && std::max_element(r.begin(), r.end()) != r.end() - 1) return Curve::peak;
  if (end >= flat_pct) return Curve::up;
  if (end <= -flat_pct) return Curve::down;
  return Curve::dip;
}

bool experiment_less(const std::string& a, const std::string& b) {
  auto key = [](const std::string& s) {
    std::size_t i = 0;
    while (i < s.size() && !std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    const std::string prefix = s.substr(0, i);
    // E first, then other names (TF32), then the controls X.
    const int group = prefix == "E" ? 0 : prefix == "X" ? 2 : 1;
    const double n = i < s.size() ? parse_double(s.substr(i)).value_or(0) : 0;
    return std::make_tuple(group, prefix, n, s);
  };
  return key(a) < key(b);
}

GemmPointRecord decode_gemm_point(const RunRecord& run, const WindowResult& w) {
  auto rec = GemmPointRecord::decode(w);
  if (!rec) {
    Error e = rec.error();
    e.what = fmt::format("run {}: {}", run.run_id, e.what);
    throw WattlabError(std::move(e));
  }
  return *std::move(rec);
}

std::vector<GemmMeasurement> gemm_measurements(const std::vector<RunRecord>& runs) {
  std::vector<GemmMeasurement> out;
  for (const auto& run : runs) {
    for (const auto& w : run.windows) {
      if (!is_gemm_point(w)) continue;
      const GemmPointRecord p = decode_gemm_point(run, w);
      const GemmPointCounts& c = p.counts;
      GemmMeasurement m;
      m.run = run.run_id;
      m.window = w.name;
      m.sweep = p.sweep;
      m.point = p.point;
      m.experiment = p.experiment;
      m.engine = p.engine;
      m.param = p.param;
      m.param_value = p.param_value;
      m.shape = fmt::format("{}x{}x{}", p.m, p.n, p.k);
      m.seed = std::to_string(p.seed);
      m.reference = p.reference;
      m.simulated = run.info.simulated || p.simulated;
      m.q[idx(GemmQty::energy_per_gemm)] = finite(c.energy_per_gemm_j);
      m.q[idx(GemmQty::power)] = finite(c.mean_power_w);
      m.q[idx(GemmQty::tflops)] = finite(c.tflops);
      m.q[idx(GemmQty::sm_clock)] = finite(c.mean_sm_clock_mhz);
      m.q[idx(GemmQty::capped_fraction)] = finite(c.power_capped_fraction);
      m.q[idx(GemmQty::temperature)] = finite(c.temperature_c);
      m.energy_per_gemm_u_j = finite(c.energy_per_gemm_u_j);
      m.rel_error = finite(c.rel_error);
      m.nonfinite_fraction = finite(c.nonfinite_fraction);
      m.m = p.m;
      m.n = p.n;
      m.k = p.k;
      m.seed_number = p.seed;
      m.recipe_a = p.recipe_a;
      m.recipe_b = p.recipe_b;
      if (w.t_end_ns > 0) m.t_ns = w.t_begin_ns + (w.t_end_ns - w.t_begin_ns) / 2;
      m.output_nonfinite = c.rel_error_nonfinite || (c.nonfinite_fraction && *c.nonfinite_fraction > 0) ||
                           (c.nonfinite_fraction && std::isnan(*c.nonfinite_fraction));
      out.push_back(std::move(m));
    }
  }
  classify_nonfinite(out);
  return out;
}

std::vector<GemmSweepAnalysis> analyze_gemm(const std::vector<GemmMeasurement>& points, const GemmAnalysisOptions& o) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const GemmMeasurement*>> by_sweep;
  for (const auto& p : points) {
    auto [it, fresh] = by_sweep.try_emplace(p.sweep);
    if (fresh) order.push_back(p.sweep);
    it->second.push_back(&p);
  }
  std::vector<GemmSweepAnalysis> out;
  for (const auto& id : order) out.push_back(analyze_sweep(id, by_sweep[id], o));
  return out;
}

}  // namespace wattlab::report
