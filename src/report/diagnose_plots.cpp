#include "report/diagnose_plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace wattlab::report {

namespace {
constexpr std::array<const char*, 8> kColors{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                             "#9467bd", "#8c564b", "#e377c2", "#17becf"};
}

Plot frontier_plot(const std::vector<diagnose::Frontier>& frontiers, const std::string& model,
                           const std::string& source_label) {
  Plot p;
  p.title = fmt::format("Time-energy frontier: {}", model);
  p.subtitle = fmt::format("source: {}", source_label);
  std::size_t color = 0;
  for (const auto& f : frontiers) {
    if (f.points.empty()) continue;
    const auto& r0 = *f.points.front();
    p.x.label = fmt::format("{} (ms)", r0.latency_name());
    p.y.label = fmt::format("energy per {} (J)", r0.unit());
    p.x.log_base = 10;
    p.y.log_base = 10;
    if (f.deadline_ms) p.vline_x = *f.deadline_ms;
    if (f.num_gpus > 0) {
      Series s{fmt::format("{} x{}", f.gpu_model, f.num_gpus), Style::linespoints, {},
                       kColors[color++ % kColors.size()], true};
      // Each GPU count's curve over batch, labelled with the batch.
      auto pts = f.points;
      std::sort(pts.begin(), pts.end(), [](auto* a, auto* b) { return a->batch() < b->batch(); });
      for (const auto* r : pts)
        s.points.push_back({r->latency_ms(), r->energy_per_unit_j(), 0, fmt::format("{}", r->batch())});
      p.series.push_back(std::move(s));
    } else {
      Series s{fmt::format("{} frontier (all GPU counts)", f.gpu_model), Style::steps, {}, "#000000", false};
      for (const auto* r : f.frontier) s.points.push_back({r->latency_ms(), r->energy_per_unit_j(), 0, ""});
      p.series.push_back(std::move(s));
      if (f.min_energy) {
        Series m{fmt::format("{} minimum energy", f.gpu_model), Style::points, {}, "#000000", true};
        m.points.push_back({f.min_energy->latency_ms(), f.min_energy->energy_per_unit_j(), 0,
                            fmt::format("min {:.3g} J (x{}, batch {})", f.min_energy->energy_per_unit_j(),
                                        f.min_energy->num_gpus, f.min_energy->batch())});
        p.series.push_back(std::move(m));
      }
    }
  }
  return p;
}

Plot waterfall_plot(const diagnose::Decomposition& d, const std::string& source_label) {
  Plot p;
  p.title = fmt::format("Energy per response, B / A = {:.3f}x", d.total_ratio);
  p.subtitle = fmt::format("A = {} {} ({})\\nB = {} {} ({})\\nsource: {}", d.a->task, d.a->label(), d.a->where(), d.b->task,
                           d.b->label(), d.b->where(), source_label);
  p.height_px = 640;
  p.y.label = "energy per response relative to A (x, log scale)";
  p.y.log_base = 2;
  p.hline_y = 1.0;
  Series up{"raises energy", Style::range_bars, {}, "#d62728", true};
  Series down{"lowers energy", Style::range_bars, {}, "#2ca02c", true};
  Series total{"total B / A", Style::range_bars, {}, "#1f77b4", true};
  double cum = 1.0;
  double x = 0;
  p.x_tics.push_back({x, "A"});
  total.points.push_back({x, 1.0, 1.0, "1"});
  for (const auto& f : d.factors) {
    x += 1;
    const double next = cum * f.ratio;
    auto& s = f.ratio >= 1 ? up : down;
    s.points.push_back({x, next, cum, fmt::format("x{:.3f}", f.ratio)});
    p.x_tics.push_back({x, f.name});
    cum = next;
  }
  x += 1;
  total.points.push_back({x, d.total_ratio, 1.0, fmt::format("x{:.3f}", d.total_ratio)});
  p.x_tics.push_back({x, "B / A"});
  p.x.min = -0.7;
  p.x.max = x + 0.7;
  p.series = {up, down, total};
  return p;
}

}  // namespace wattlab::report
