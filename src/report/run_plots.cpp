#include "report/run_plots.h"

#include <fmt/format.h>

#include <array>

namespace wattlab::report {
namespace {

constexpr std::array<const char*, 8> kColors{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                             "#9467bd", "#8c564b", "#e377c2", "#17becf"};

double seconds_since_start(const RunRecord& run, int64_t t_ns) {
  return static_cast<double>(t_ns - run.info.start_t_ns) * 1e-9;
}

std::string domain_title(const RunRecord& run, std::size_t i) {
  const auto& d = run.domains[i];
  std::string t = d.id;
  if (!d.name.empty()) t += " (" + d.name + ")";
  if (d.simulated) t += " SIMULATED";
  return t;
}

const std::vector<Reading>* find(const ReadingsByKind& r, ReadingKind k) {
  auto it = r.find(k);
  return it == r.end() || it->second.empty() ? nullptr : &it->second;
}

Series series_of(const RunRecord& run, const std::vector<Reading>& rs, std::string title, Style style,
                 std::string color, std::size_t max_points) {
  Series s{std::move(title), style, {}, std::move(color), false};
  s.points.reserve(rs.size());
  for (const auto& r : rs) s.points.push_back({seconds_since_start(run, r.t_ns), r.value, 0, ""});
  s.points = bucket_means(s.points, max_points);
  return s;
}

// Every timeline of a run spans the same seconds, so they line up on the page.
void same_time_axis(const RunRecord& run, Plot& p) {
  if (const auto dur = run.dur_s(); dur && *dur > 0) {
    p.x.min = 0;
    p.x.max = *dur;
  }
}

}  // namespace

std::vector<Point> bucket_means(const std::vector<Point>& points, std::size_t max_points) {
  if (points.size() <= max_points || max_points == 0) return points;
  const double x0 = points.front().x, x1 = points.back().x;
  const double width = (x1 - x0) / static_cast<double>(max_points);
  std::vector<Point> out;
  double sx = 0, sy = 0;
  std::size_t n = 0, bucket = 0;
  for (const auto& p : points) {
    const auto b = width > 0 ? std::min(max_points - 1, static_cast<std::size_t>((p.x - x0) / width)) : 0;
    if (b != bucket && n > 0) {
      out.push_back({sx / static_cast<double>(n), sy / static_cast<double>(n), 0, ""});
      sx = sy = 0;
      n = 0;
    }
    bucket = b;
    sx += p.x;
    sy += p.y;
    ++n;
  }
  if (n > 0) out.push_back({sx / static_cast<double>(n), sy / static_cast<double>(n), 0, ""});
  return out;
}

std::vector<Span> window_spans(const RunRecord& run, std::size_t max_labels) {
  std::vector<const WindowResult*> ws;
  for (const auto& w : run.windows)
    if (w.name != "run") ws.push_back(&w);
  std::vector<Span> spans;
  for (std::size_t i = 0; i < ws.size(); ++i)
    spans.push_back({seconds_since_start(run, ws[i]->t_begin_ns), seconds_since_start(run, ws[i]->t_end_ns),
                     ws.size() <= max_labels ? ws[i]->name : "", kColors[i % kColors.size()]});
  return spans;
}

std::optional<Plot> power_timeline_plot(const RunRecord& run, std::size_t domain_index, const ReadingsByKind& readings,
                                        const std::vector<Span>& spans, std::size_t max_points) {
  Plot p;
  p.title = "Power: " + domain_title(run, domain_index);
  p.x.label = "time since run start (s)";
  p.y.label = "power (W)";
  p.x_spans = spans;
  p.height_px = 420;
  same_time_axis(run, p);
  if (const auto* s = find(readings, ReadingKind::power_sample_w))
    p.series.push_back(series_of(run, *s, "driver power samples (W)", Style::line, "#1f77b4", max_points));
  else if (const auto* i = find(readings, ReadingKind::power_instant_w))
    p.series.push_back(series_of(run, *i, "instant power (W)", Style::line, "#1f77b4", max_points));
  if (const auto* a = find(readings, ReadingKind::power_average_w))
    p.series.push_back(series_of(run, *a, "1 s average power (W)", Style::line, "#ff7f0e", max_points));
  if (p.series.empty()) {
    // No power reading (RAPL): the counter's increments over the time between its reads.
    const auto* e = find(readings, ReadingKind::energy_counter_j);
    if (!e || e->size() < 2) return std::nullopt;
    Series s{"power from the energy counter (W)", Style::steps, {}, "#2ca02c", false};
    for (std::size_t k = 1; k < e->size(); ++k) {
      const double dt_s = static_cast<double>((*e)[k].t_ns - (*e)[k - 1].t_ns) * 1e-9;
      const double de_j = (*e)[k].value - (*e)[k - 1].value;
      if (dt_s > 0 && de_j >= 0) s.points.push_back({seconds_since_start(run, (*e)[k - 1].t_ns), de_j / dt_s, 0, ""});
    }
    s.points = bucket_means(s.points, max_points);
    p.series.push_back(std::move(s));
  }
  return p;
}

std::vector<Plot> telemetry_plots(const RunRecord& run, std::size_t domain_index, const ReadingsByKind& readings,
                                  const std::vector<Span>& spans, std::size_t max_points) {
  struct Group {
    const char* what;
    const char* y_label;
    std::vector<std::pair<ReadingKind, const char*>> kinds;
  };
  const std::vector<Group> groups{
      {"Clocks", "clock (MHz)", {{ReadingKind::sm_clock_mhz, "SM clock (MHz)"}, {ReadingKind::mem_clock_mhz, "memory clock (MHz)"}}},
      {"Temperature", "temperature (degC)",
       {{ReadingKind::temperature_c, "GPU temperature (degC)"}, {ReadingKind::mem_temperature_c, "memory temperature (degC)"}}},
      {"Utilization and activity", "share of time or of peak (%)",
       {{ReadingKind::utilization_gpu_pct, "GPU utilization (%)"},
        {ReadingKind::utilization_mem_pct, "memory utilization (%)"},
        {ReadingKind::gpm_sm_activity_pct, "SM activity (%)"},
        {ReadingKind::gpm_sm_occupancy_pct, "SM occupancy (%)"},
        {ReadingKind::gpm_tensor_activity_pct, "tensor activity (%)"},
        {ReadingKind::gpm_dram_bw_pct, "DRAM bandwidth (%)"}}},
  };
  std::vector<Plot> plots;
  for (const auto& g : groups) {
    Plot p;
    p.title = fmt::format("{}: {}", g.what, domain_title(run, domain_index));
    p.x.label = "time since run start (s)";
    p.y.label = g.y_label;
    p.height_px = 360;
    same_time_axis(run, p);
    p.x_spans = spans;
    for (auto& sp : p.x_spans) sp.label.clear();  // named once, on the power plot
    std::size_t c = 0;
    for (const auto& [kind, title] : g.kinds)
      if (const auto* rs = find(readings, kind))
        p.series.push_back(series_of(run, *rs, title, Style::line, kColors[c++ % kColors.size()], max_points));
    if (!p.series.empty()) plots.push_back(std::move(p));
  }
  return plots;
}

}  // namespace wattlab::report
