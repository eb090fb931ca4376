#include "report/gemm_plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "wattlab/core/error.h"
#include "report/gemm_analysis.h"  // decode_gemm_point; param_number: "2^-5" and "0xFF" are numbers too
#include "store/gemm_point_record.h"

namespace wattlab::report {
namespace {

constexpr std::array<const char*, 8> kColors{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                             "#9467bd", "#8c564b", "#e377c2", "#17becf"};

Plot sweep_plot(const GemmSweep& sw, bool simulated, const char* what, const char* y_label, bool energy) {
  Plot p;
  p.title = fmt::format("GEMM {}: {} vs {}{}", sw.experiment, what, sw.param, simulated ? " (SIMULATED)" : "");
  p.x.label = sw.param;
  p.y.label = y_label;
  p.height_px = 420;
  double lo = 0, hi = 0;
  bool first = true;
  for (std::size_t e = 0; e < sw.engines.size(); ++e) {
    Series s{"engine " + sw.engines[e].first, energy ? Style::errorlines : Style::linespoints, {},
             kColors[e % kColors.size()], false};
    for (const auto& pt : sw.engines[e].second) {
      const auto y = energy ? pt.energy_per_gemm_j : pt.mean_power_w;
      if (!y) continue;
      s.points.push_back({pt.x, *y, 0, "", energy ? pt.energy_per_gemm_u_j.value_or(0) : 0});
      lo = first ? pt.x : std::min(lo, pt.x);
      hi = first ? pt.x : std::max(hi, pt.x);
      first = false;
    }
    p.series.push_back(std::move(s));
  }
  if (!sw.numeric) {
    for (std::size_t i = 0; i < sw.categories.size(); ++i) p.x_tics.push_back({static_cast<double>(i), sw.categories[i]});
    p.x.min = -0.5;
    p.x.max = static_cast<double>(sw.categories.size()) - 0.5;
  } else if (!first && lo > 0 && hi / lo >= 100) {
    p.x.log_base = 2;  // sizes and similar sweeps span decades
    p.x.label += " (log scale)";
  }
  return p;
}

}  // namespace

std::vector<GemmSweep> gemm_sweeps(const RunRecord& run) {
  std::vector<GemmSweep> sweeps;
  for (const auto& w : run.windows) {
    if (!is_gemm_point(w)) continue;
    const GemmPointRecord point = decode_gemm_point(run, w);
    const std::string& exp = point.experiment;
    const std::string& param = point.param;
    auto sw = std::find_if(sweeps.begin(), sweeps.end(), [&](auto& s) { return s.experiment == exp && s.param == param; });
    if (sw == sweeps.end()) {
      sweeps.push_back({exp, param, true, {}, {}});
      sw = sweeps.end() - 1;
    }
    const std::string& engine = point.engine;
    auto en = std::find_if(sw->engines.begin(), sw->engines.end(), [&](auto& e) { return e.first == engine; });
    if (en == sw->engines.end()) {
      sw->engines.push_back({engine, {}});
      en = sw->engines.end() - 1;
    }
    const GemmPointCounts& c = point.counts;
    GemmPoint pt{w.name, point.param_value, 0, c.energy_per_gemm_j, c.energy_per_gemm_u_j, c.mean_power_w, c.tflops};
    en->second.push_back(std::move(pt));
  }
  for (auto& sw : sweeps) {
    for (const auto& [engine, pts] : sw.engines)
      for (const auto& pt : pts) sw.numeric = sw.numeric && param_number(pt.param_value).has_value();
    for (auto& [engine, pts] : sw.engines) {
      for (auto& pt : pts) {
        if (sw.numeric) {
          pt.x = *param_number(pt.param_value);
          continue;
        }
        auto c = std::find(sw.categories.begin(), sw.categories.end(), pt.param_value);
        if (c == sw.categories.end()) c = sw.categories.insert(sw.categories.end(), pt.param_value);
        pt.x = static_cast<double>(c - sw.categories.begin());
      }
      std::stable_sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
    }
  }
  return sweeps;
}

Plot gemm_energy_plot(const GemmSweep& sweep, bool simulated) {
  return sweep_plot(sweep, simulated, "energy per GEMM", "energy per GEMM (J), bars: ± uncertainty", true);
}

Plot gemm_power_plot(const GemmSweep& sweep, bool simulated) {
  return sweep_plot(sweep, simulated, "mean power", "mean power (W)", false);
}

}  // namespace wattlab::report

namespace wattlab::report {

std::vector<GemmPlotKey> gemm_plot_keys(const GemmSweepAnalysis& a) {
  std::vector<GemmPlotKey> keys;
  for (const auto* rows : {&a.rows, &a.controls})
    for (const auto& r : *rows)
      if (std::none_of(keys.begin(), keys.end(), [&](const auto& k) { return k.shape == r.shape && k.experiment == r.experiment; }))
        keys.push_back({r.shape, r.experiment});
  return keys;
}

std::optional<Plot> gemm_normalized_plot(const GemmSweepAnalysis& a, const GemmPlotKey& key, GemmQty q) {
  std::vector<const GemmRow*> rows;
  for (const auto* list : {&a.rows, &a.controls})
    for (const auto& r : *list)
      if (r.shape == key.shape && r.experiment == key.experiment) rows.push_back(&r);
  if (rows.empty()) return std::nullopt;
  const bool numeric = std::all_of(rows.begin(), rows.end(), [](const GemmRow* r) { return r->x.has_value(); });
  std::vector<std::string> categories;  // rows are sorted by value already
  if (!numeric)
    for (const auto* r : rows)
      if (std::find(categories.begin(), categories.end(), r->param_value) == categories.end()) categories.push_back(r->param_value);
  const bool control = rows.front()->engine == "control";
  if (control && q != GemmQty::power) return std::nullopt;  // no GEMMs: only power means something
  const char* what = q == GemmQty::power ? "power" : "energy per GEMM";
  Plot p;
  p.title = fmt::format("GEMM {} {}: {} / reference vs {}{}", key.experiment, control ? "control" : key.shape, what,
                        rows.front()->param, a.simulated ? " (SIMULATED)" : "");
  std::size_t max_seeds = 0;
  for (const auto* r : rows) max_seeds = std::max(max_seeds, r->delta[idx(q)].n);
  p.subtitle = fmt::format("sweep {}; reference = {} of the same seed (1.0); bars: ± SD across seeds (up to {}){}", a.sweep,
                           control ? "idle" : "each engine's baseline", max_seeds,
                           max_seeds < 2 ? ", none with one seed" : "");
  p.x.label = rows.front()->param;
  p.y.label = fmt::format("{} / reference (1 = reference)", what);
  p.hline_y = 1.0;
  p.height_px = 420;
  std::vector<std::string> engines;
  for (const auto* r : rows)
    if (std::find(engines.begin(), engines.end(), r->engine) == engines.end()) engines.push_back(r->engine);
  bool any = false;
  double lo = 0, hi = 0;
  for (std::size_t e = 0; e < engines.size(); ++e) {
    Series s{"engine " + engines[e], Style::errorlines, {}, kColors[e % kColors.size()], false};
    for (const auto* r : rows) {
      const Stat& d = r->delta[idx(q)];
      if (r->engine != engines[e] || d.n == 0) continue;
      const double x = numeric ? *r->x
                               : static_cast<double>(std::find(categories.begin(), categories.end(), r->param_value) -
                                                     categories.begin());
      s.points.push_back({x, 1.0 + d.mean / 100.0, 0, "", d.sd.value_or(0) / 100.0});
      lo = any ? std::min(lo, x) : x;
      hi = any ? std::max(hi, x) : x;
      any = true;
    }
    if (!s.points.empty()) p.series.push_back(std::move(s));
  }
  if (!any) return std::nullopt;
  if (!numeric) {
    for (std::size_t i = 0; i < categories.size(); ++i) p.x_tics.push_back({static_cast<double>(i), categories[i]});
    p.x.min = -0.5;
    p.x.max = static_cast<double>(categories.size()) - 0.5;
  } else if (lo > 0 && hi / lo >= 100) {
    p.x.log_base = 2;
    p.x.label += " (log scale)";
  }
  return p;
}

}  // namespace wattlab::report
