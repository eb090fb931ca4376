#include "report/html_report.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "diagnose/frontier.h"
#include "diagnose/population.h"
#include "diagnose/readers.h"
#include "report/diagnose_plots.h"
#include "report/gemm_analysis.h"
#include "report/gemm_plots.h"
#include "report/gemm_tables.h"
#include "report/html.h"
#include "report/run_plots.h"

namespace wattlab::report {
namespace fs = std::filesystem;
namespace {

constexpr const char* kCss = R"(
body{font-family:sans-serif;margin:1.5em auto;max-width:1000px;color:#222;line-height:1.35}
h1{font-size:1.5em;margin-bottom:.2em} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
.simulated{background:#fff3cd;border:1px solid #e0b000;padding:.4em .7em;font-weight:bold}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0} td,th{border:1px solid #ccc;padding:.2em .45em;vertical-align:top}
th{background:#f2f2f2;text-align:left} td.n{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:.8em 0} figure svg{width:100%;height:auto;display:block} figcaption{font-size:.85em;color:#555}
.note{font-size:.85em;color:#555}
)";

std::string esc(const std::string& s) { return html_escape(s); }
std::string num(double v) { return fmt::format("{:.6g}", v); }

// One plot rendered by gnuplot and inlined.
class Figures {
 public:
  Result<std::string> figure(const Plot& plot, const std::string& caption) {
    const auto dir = fs::temp_directory_path() / fmt::format("wattlab-html-{}", static_cast<const void*>(this));
    std::error_code ec;
    fs::create_directories(dir, ec);
    const auto svg_path = (dir / fmt::format("p{}.svg", n_)).string();
    auto r = render(plot, svg_path, false);
    if (!r) return r.error();
    std::ifstream in(svg_path);
    std::stringstream ss;
    ss << in.rdbuf();
    fs::remove(svg_path, ec);
    fs::remove(dir, ec);
    const auto svg = inline_svg(ss.str(), fmt::format("p{}-", n_), plot.title);
    ++n_;
    return fmt::format("<figure id=\"fig{}\">{}<figcaption>{}</figcaption></figure>\n", n_, svg, esc(caption));
  }
  std::size_t count() const { return n_; }

 private:
  std::size_t n_ = 0;
};

std::string command_of(const RunRecord& run) {
  std::string cmd;
  for (const auto& a : run.info.command) cmd += (cmd.empty() ? "" : " ") + a;
  return cmd.empty() ? "(library use: no command)" : cmd;
}

std::string energy_text(const DomainEnergy& d) {
  if (!d.available) return "unavailable" + (d.issues.empty() ? std::string() : ": " + d.issues.front());
  return fmt::format("{} J ± {} J (95%) ± {} J gain", num(d.energy_j), num(d.uncertainty_j), num(d.systematic_j));
}

std::string header_section(const RunRecord& run) {
  std::string h;
  if (run.info.simulated)
    h += "<p class=\"simulated\">SIMULATED: these numbers come from wattlab's simulated GPU, not hardware.</p>\n";
  h += "<table class=\"header\">\n";
  auto row = [&](const std::string& k, const std::string& v) { h += "<tr><th>" + esc(k) + "</th><td>" + v + "</td></tr>\n"; };
  row("command", "<code>" + esc(command_of(run)) + "</code>");
  row("state", esc(std::string(run.state())) + (run.exit_status ? esc(fmt::format(", exit status {}", *run.exit_status)) : ""));
  row("host", esc(run.info.host));
  row("start (UTC)", esc(run.info.start_utc));
  row("duration", run.dur_s() ? esc(fmt::format("{:.3f} s", *run.dur_s())) : "unknown (the run never ended)");
  row("wattlab", esc(run.wattlab_version));
  std::string devs;
  for (const auto& d : run.domains)
    devs += esc(fmt::format("{}: {} {}{}", d.id, d.vendor, d.name, d.parent.empty() ? "" : " (inside " + d.parent + ")")) +
            (d.simulated ? " <b>SIMULATED</b>" : "") + "<br>";
  row(fmt::format("device (--device {})", run.info.device_selection.empty() ? "?" : run.info.device_selection), devs);
  std::string tags;
  for (const auto& [k, v] : run.info.tags) tags += esc(k + "=" + v) + "<br>";
  if (!tags.empty()) row("tags", tags);
  h += "</table>\n";
  const WindowResult* whole = nullptr;
  for (const auto& w : run.windows)
    if (w.name == "run") whole = &w;
  if (!whole) {
    h += "<p class=\"note\">No whole-command window ('run') is stored: see the windows below.</p>\n";
    return h;
  }
  h += "<table class=\"energy\"><tr><th>domain</th><th>energy of the whole run</th><th>mean W</th><th>peak W</th><th>estimator</th></tr>\n";
  for (const auto& d : whole->domains)
    h += fmt::format("<tr><td>{}{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>\n", esc(d.domain_id),
                     d.simulated ? " SIMULATED" : "", esc(energy_text(d)), d.available ? num(d.mean_power_w) : "",
                     d.available ? num(d.peak_power_w) : "", esc(to_string(d.estimator)));
  h += "</table>\n<p class=\"note\">± (95%): timing, shaping and noise of the window; ± gain: the sensor's gain tolerance, "
       "a bias shared by every window of the board (docs/estimators.md).</p>\n";
  return h;
}

std::string windows_section(const RunRecord& run) {
  std::string h = "<h2>Windows</h2>\n<table class=\"windows\"><tr><th>window</th><th>begin s</th><th>duration s</th>"
                  "<th>domain</th><th>energy</th><th>mean W</th><th>estimator</th><th>counts</th><th>labels</th></tr>\n";
  for (const auto& w : run.windows) {
    std::string counts, labels;
    for (const auto& [k, v] : w.counts) counts += esc(fmt::format("{} = {}", k, num(v))) + "<br>";
    for (const auto& [k, v] : w.labels) labels += esc(k + " = " + v) + "<br>";
    const std::size_t rows = std::max<std::size_t>(1, w.domains.size());
    const std::string span = fmt::format(" rowspan=\"{}\"", rows);
    for (std::size_t i = 0; i < rows; ++i) {
      h += "<tr>";
      if (i == 0)
        h += fmt::format("<td{0}>{1}{2}</td><td{0} class=\"n\">{3:.3f}</td><td{0} class=\"n\">{4:.3f}</td>", span, esc(w.name),
                         w.final ? "" : " (provisional)", static_cast<double>(w.t_begin_ns - run.info.start_t_ns) * 1e-9,
                         w.dur_s());
      if (i < w.domains.size()) {
        const auto& d = w.domains[i];
        h += fmt::format("<td>{}{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td>", esc(d.domain_id),
                         d.simulated ? " SIMULATED" : "", esc(energy_text(d)), d.available ? num(d.mean_power_w) : "",
                         esc(to_string(d.estimator)));
      } else {
        h += "<td colspan=\"4\">no domain</td>";
      }
      if (i == 0) h += fmt::format("<td{0}>{1}</td><td{0}>{2}</td>", span, counts, labels);
      h += "</tr>\n";
    }
  }
  return h + "</table>\n";
}

// Frontiers from the run's windows with token (image, video) counts, read as configurations by the
// diagnose layer's store reader.
Result<std::string> frontier_section(const Store& store, const RunRecord& run, Figures& figs) {
  std::set<std::string> unit_windows;
  for (const auto& w : run.windows)
    for (const char* k : {"tokens", "images", "videos"})
      if (w.counts.count(k)) unit_windows.insert(w.name);
  if (unit_windows.empty()) return std::string();
  std::string h = "<h2>Time-energy frontiers</h2>\n";
  diagnose::Dataset ds;
  try {
    ds = diagnose::read_store(store.path().string());
  } catch (const std::exception& e) {
    return h + "<p class=\"note\">Not drawn: the diagnose store reader failed: " + esc(e.what()) + "</p>\n";
  }
  const std::string id = std::to_string(run.run_id);
  diagnose::Rows rows;
  std::vector<std::string> models;
  for (const auto& r : ds.rows) {
    auto it = r.extra_json.find("wattlab_run");
    if (it == r.extra_json.end() || it->second != id) continue;
    rows.push_back(&r);
    if (std::find(models.begin(), models.end(), r.model_id) == models.end()) models.push_back(r.model_id);
  }
  const std::string run_tag = fmt::format(" run {} window '", run.run_id), run_end = fmt::format(" run {}", run.run_id);
  std::string rejected;
  for (const auto& r : ds.rejected) {
    const auto at = r.where.find(run_tag);
    if (at == std::string::npos) continue;
    const auto name = r.where.substr(at + run_tag.size(), r.where.size() - at - run_tag.size() - 1);
    if (unit_windows.count(name)) rejected += "<li>" + esc(r.message()) + "</li>";
  }
  for (const auto& m : models) {
    diagnose::Rows mine;
    for (const auto* r : rows)
      if (r->model_id == m) mine.push_back(r);
    const auto frs = diagnose::frontiers_for_model(mine, m);
    auto f = figs.figure(frontier_plot(frs, m, fmt::format("wattlab run {}{}", run.run_id, run.info.simulated ? " (SIMULATED)" : "")),
                         fmt::format("Each window with counts is one configuration (docs/diagnose.md); {} configurations of {}; "
                                     "the black staircase is the Pareto frontier.", mine.size(), m));
    if (!f) return f.error();
    h += *f;
  }
  if (models.empty()) h += "<p class=\"note\">No window of this run makes a configuration record, so no frontier.</p>\n";
  if (!rejected.empty()) h += "<p class=\"note\">Windows not used:</p><ul class=\"note\">" + rejected + "</ul>\n";
  return h;
}

// Per analyzed sweep: the tables, then energy per GEMM and power normalized to the reference.
Result<std::string> gemm_analysis_html(const std::vector<GemmSweepAnalysis>& analyses, Figures& figs) {
  std::string h;
  for (const auto& a : analyses) {
    if (a.references.empty() && !a.control_reference) continue;  // nothing to normalize to
    h += "<h3>" + esc(gemm_sweep_heading(a)) + "</h3>\n";
    if (a.simulated) h += "<p class=\"simulated\">SIMULATED: these points come from wattlab's simulated GPU, not hardware.</p>\n";
    for (const auto& key : gemm_plot_keys(a))
      for (GemmQty q : {GemmQty::energy_per_gemm, GemmQty::power}) {
        auto plot = gemm_normalized_plot(a, key, q);
        if (!plot) continue;
        auto f = figs.figure(*plot, fmt::format("Experiment {} ({}): each engine's {} divided by its reference of the same "
                                                "seed; mean ± SD across seeds; 1.0 = the reference.",
                                                key.experiment, key.shape, q == GemmQty::power ? "power" : "energy per GEMM"));
        if (!f) return f.error();
        h += *f;
      }
    h += render_html(gemm_tables(a));
  }
  return h;
}

Result<std::string> gemm_section(const RunRecord& run, Figures& figs) {
  const auto sweeps = gemm_sweeps(run);
  if (sweeps.empty()) return std::string();
  std::string h = "<h2>GEMM sweeps</h2>\n";
  auto normalized = gemm_analysis_html(analyze_gemm(gemm_measurements({run})), figs);
  if (!normalized) return normalized.error();
  if (!normalized->empty()) h += "<p class=\"note\">Against the reference points (docs/report-gemm.md), then the raw points.</p>\n" + *normalized;
  for (const auto& sw : sweeps) {
    std::size_t n = 0;
    for (const auto& e : sw.engines) n += e.second.size();
    const auto cap = fmt::format("Experiment {}: {} points over {}, one line per engine.", sw.experiment, n, sw.param);
    auto e = figs.figure(gemm_energy_plot(sw, run.info.simulated), cap + " Error bars: the point's energy uncertainty.");
    if (!e) return e.error();
    auto p = figs.figure(gemm_power_plot(sw, run.info.simulated), cap);
    if (!p) return p.error();
    h += *e + *p;
  }
  return h;
}

}  // namespace

Result<std::string> gemm_html_report(const std::vector<RunRecord>& runs, const std::string& what) {
  const auto analyses = analyze_gemm(gemm_measurements(runs));
  if (analyses.empty()) return Error{ErrorKind::not_found, "no gemm_point windows in " + what, "run wattlab gemm first"};
  bool simulated = false;
  for (const auto& a : analyses) simulated = simulated || a.simulated;
  Figures figs;
  auto body = gemm_analysis_html(analyses, figs);
  if (!body) return body.error();
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += fmt::format("<title>wattlab GEMM study{}</title>\n<style>{}</style></head><body>\n", simulated ? " (SIMULATED)" : "", kCss);
  h += fmt::format("<h1>wattlab GEMM study: {}</h1>\n", esc(what));
  if (simulated) h += "<p class=\"simulated\">SIMULATED: some or all points come from wattlab's simulated GPU, not hardware.</p>\n";
  h += "<p class=\"note\">Every gemm_point window, grouped by sweep id; each point against the reference points of the same "
       "shape, engine and seed in its sweep, drift-corrected in time; mean ± SD across seeds, ΔE with its bootstrap 95 % CI "
       "(docs/report-gemm.md).</p>\n";
  h += body->empty() ? "<p class=\"note\">No sweep has reference points, so nothing is normalized.</p>\n" : *body;
  h += fmt::format("<p class=\"note\">{} plots rendered by gnuplot. Written by wattlab report --gemm --html.</p>\n", figs.count());
  return h + "</body></html>\n";
}

Result<std::string> html_report(const Store& store, RunId id, const HtmlReportOptions& o) {
  auto rec = store.load_run(id);
  if (!rec) return rec.error();
  const RunRecord& run = *rec;
  Figures figs;
  const auto spans = window_spans(run, o.max_window_labels);
  std::string timelines, telemetry;
  constexpr int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  for (std::size_t i = 0; i < run.domains.size(); ++i) {
    ReadingsByKind readings;
    for (std::size_t k = 0; k < kReadingKindCount; ++k) {
      const auto kind = static_cast<ReadingKind>(k);
      auto rs = store.load_readings(id, static_cast<uint32_t>(i), kind, lo, hi);
      if (!rs) return rs.error();
      if (!rs->empty()) readings[kind] = std::move(*rs);
    }
    const std::string spans_note =
        spans.empty() ? "" : fmt::format(" Shaded: the run's {} windows{}.", spans.size(),
                                         spans.size() > o.max_window_labels ? " (names in the table)" : "");
    if (auto p = power_timeline_plot(run, i, readings, spans, o.max_points_per_series)) {
      auto f = figs.figure(*p, "Stored power readings of " + run.domains[i].id + "." + spans_note);
      if (!f) return f.error();
      timelines += *f;
    }
    for (const auto& p : telemetry_plots(run, i, readings, spans, o.max_points_per_series)) {
      auto f = figs.figure(p, "Telemetry of " + run.domains[i].id + " on the same timeline." + spans_note);
      if (!f) return f.error();
      telemetry += *f;
    }
  }
  auto gemm = gemm_section(run, figs);
  if (!gemm) return gemm.error();
  auto frontier = frontier_section(store, run, figs);
  if (!frontier) return frontier.error();

  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += fmt::format("<title>wattlab run {}{}</title>\n<style>{}</style></head><body>\n", run.run_id,
                   run.info.simulated ? " (SIMULATED)" : "", kCss);
  h += fmt::format("<h1>wattlab run {}</h1>\n", run.run_id) + header_section(run);
  h += "<h2>Power</h2>\n" + (timelines.empty() ? "<p class=\"note\">No power or energy readings are stored for this run.</p>\n" : timelines);
  if (!telemetry.empty()) h += "<h2>Telemetry</h2>\n" + telemetry;
  h += windows_section(run) + *gemm + *frontier;
  if (!run.events.empty()) {
    h += "<h2>Events</h2>\n<ul>";
    for (const auto& e : run.events)
      h += "<li>" + esc(fmt::format("{:.3f} s {} {} {}: {}", static_cast<double>(e.t_ns - run.info.start_t_ns) * 1e-9, e.kind,
                                    e.domain_id, e.reading, e.message)) + "</li>";
    h += "</ul>\n";
  }
  h += fmt::format("<p class=\"note\">{} plots rendered by gnuplot. Written by wattlab report --html (docs/report-html.md).</p>\n",
                   figs.count());
  return h + "</body></html>\n";
}

}  // namespace wattlab::report
