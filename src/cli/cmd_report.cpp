// wattlab report RUN_ID|latest [--db FILE] [--json] [--html FILE]: print a stored run again, or
// write it as one self-contained HTML page with plots (docs/report-html.md).
// wattlab report --gemm [RUN_ID|latest|all] [--format text|md] [--plots-dir DIR] [--html FILE]
// [--sweep ID]: the GEMM study's tables and plots against the reference (docs/report-gemm.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "cli.h"
#include "run_summary.h"
#include "wattlab/report/gemm_analysis.h"
#include "wattlab/report/gemm_plots.h"
#include "wattlab/report/gemm_tables.h"
#include "wattlab/report/html_report.h"
#include "wattlab/store/run_json.h"
#include "wattlab/store/store.h"

namespace wattlab::cli {
namespace {

struct ReportOptions {
  std::string run;  // empty: "latest", or "all" with --gemm
  std::string db = "wattlab.db";
  bool json = false;
  std::string html;  // write the HTML report here
  bool gemm = false;
  std::string format;  // --gemm: "text" (default) or "md"
  std::string plots_dir;
  std::string sweep;   // --gemm: only this sweep id
};

// The HTML file's folder must exist and the path must not be a folder: checked before any work.
void check_html_path(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (path.empty() || fs::is_directory(p, ec))
    throw UsageError("report: --html '" + path + "' is not a file path (give e.g. --html run.html)");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw UsageError("report: --html '" + path + "': folder '" + dir.string() + "' does not exist");
}

int write_html(const Store& store, RunId id, const std::string& path, Io& io) {
  auto html = report::html_report(store, id);
  if (!html) {
    io.err << "wattlab: " << html.error().message() << "\n";
    return html.error().kind == ErrorKind::not_found ? kExitUsage : kExitFailure;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << *html;
  out.close();
  if (!out) {
    io.err << "wattlab: cannot write '" << path << "' (report --html): check the path and its permissions\n";
    return kExitUsage;
  }
  io.out << "wrote " << path << " (run " << id << ")\n";
  return kExitOk;
}

// A run id: a positive number, or "latest" (then looked up).
RunId parse_run_id(const std::string& run, bool gemm) {
  try {
    std::size_t used = 0;
    const RunId id = std::stoll(run, &used);
    if (used != run.size() || id <= 0) throw std::invalid_argument("");
    return id;
  } catch (const std::exception&) {
    throw UsageError("report: '" + run + "' is not a run id; give a positive number, 'latest'" + (gemm ? " or 'all'" : ""));
  }
}

std::string file_part(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
  return s;
}

// Every analyzed sweep's normalized plots as DIR/gemm_<sweep>_<experiment>_<shape>_<energy|power>.svg.
int write_gemm_plots(const std::vector<report::GemmSweepAnalysis>& analyses, const std::string& dir, Io& io) {
  std::size_t n = 0;
  for (const auto& a : analyses)
    for (const auto& key : report::gemm_plot_keys(a))
      for (auto q : {report::GemmQty::energy_per_gemm, report::GemmQty::power}) {
        auto plot = report::gemm_normalized_plot(a, key, q);
        if (!plot) continue;
        const bool control = key.shape == "0x0x0";
        const auto path = (std::filesystem::path(dir) /
                           file_part(fmt::format("gemm_{}_{}_{}_{}.svg", a.sweep.empty() ? "nosweep" : a.sweep, key.experiment,
                                                 control ? "control" : key.shape, q == report::GemmQty::power ? "power" : "energy")))
                              .string();
        auto r = report::render(*plot, path, false);
        if (!r) {
          io.err << "wattlab: " << r.error().message() << "\n";
          return kExitFailure;  // gnuplot missing or failing: the message names the package or its stderr
        }
        ++n;
      }
  io.out << "wrote " << n << " plots to " << dir << (n == 0 ? " (no sweep has reference points)" : "") << "\n";
  return kExitOk;
}

int report_gemm(const ReportOptions& o, const Store& store, Io& io) {
  const std::string sel = o.run.empty() ? "all" : o.run;
  std::vector<RunRecord> runs;
  std::string what;
  auto load = [&](RunId id) -> bool {
    auto rec = store.load_run(id);
    if (!rec) {
      io.err << "wattlab: " << rec.error().message() << "\n";
      return false;
    }
    runs.push_back(std::move(*rec));
    return true;
  };
  if (sel == "all") {
    auto list = store.list_runs();
    if (!list) {
      io.err << "wattlab: " << list.error().message() << "\n";
      return kExitFailure;
    }
    for (const auto& r : *list)
      if (r.window_count > 0 && !load(r.run_id)) return kExitFailure;
    what = "all runs of " + o.db;
  } else {
    RunId id = 0;
    if (sel == "latest") {
      auto latest = store.latest_run_id();
      if (!latest) {
        io.err << "wattlab: " << latest.error().message() << "\n";
        return kExitUsage;
      }
      id = *latest;
    } else {
      id = parse_run_id(sel, true);
    }
    if (!load(id)) return kExitUsage;
    what = "run " + std::to_string(id) + " of " + o.db;
  }
  auto points = report::gemm_measurements(runs);
  if (!o.sweep.empty()) {
    std::erase_if(points, [&](const report::GemmMeasurement& m) { return m.sweep != o.sweep; });
    what += ", sweep " + o.sweep;
  }
  if (points.empty()) {
    io.err << "wattlab: report --gemm: no gemm_point windows in " << what << " (wattlab gemm stores them)\n";
    return kExitUsage;
  }
  const auto analyses = report::analyze_gemm(points);
  const bool md = o.format == "md";
  if (md) io.out << "<!-- wattlab report --gemm " << sel << " --format md (docs/report-gemm.md); " << what << " -->\n\n";
  for (const auto& a : analyses) {
    const auto tables = report::gemm_tables(a);
    if (md) io.out << "### " << report::gemm_sweep_heading(a) << "\n\n" << report::render_markdown(tables);
    else io.out << "== " << report::gemm_sweep_heading(a) << " ==\n\n" << report::render_text(tables);
    if (a.references.empty() && !a.control_reference)
      io.out << (md ? "" : "  ") << "No reference points in this sweep: no Δ, CV or effect is computed.\n\n";
  }
  if (!o.plots_dir.empty())
    if (int rc = write_gemm_plots(analyses, o.plots_dir, io); rc != kExitOk) return rc;
  if (!o.html.empty()) {
    auto html = report::gemm_html_report(runs, what);
    if (!html) {
      io.err << "wattlab: " << html.error().message() << "\n";
      return html.error().kind == ErrorKind::not_found ? kExitUsage : kExitFailure;
    }
    std::ofstream out(o.html, std::ios::binary | std::ios::trunc);
    out << *html;
    out.close();
    if (!out) {
      io.err << "wattlab: cannot write '" << o.html << "' (report --html): check the path and its permissions\n";
      return kExitUsage;
    }
    io.out << "wrote " << o.html << " (" << what << ")\n";
  }
  return kExitOk;
}

int report(const ReportOptions& o, Io& io) {
  if (!o.html.empty()) check_html_path(o.html);
  if (!o.gemm && (!o.format.empty() || !o.plots_dir.empty() || !o.sweep.empty()))
    throw UsageError("report: --format, --plots-dir and --sweep go with --gemm");
  if (o.gemm && o.json) throw UsageError("report: --json does not go with --gemm; use --format md or --html");
  if (!o.format.empty() && o.format != "text" && o.format != "md")
    throw UsageError("report: --format '" + o.format + "' is not a format; give text or md");
  if (!o.plots_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.plots_dir, ec);
    if (!std::filesystem::is_directory(o.plots_dir, ec))
      throw UsageError("report: --plots-dir '" + o.plots_dir + "' is not a folder and cannot be made one");
  }
  auto store = Store::open(o.db, OpenMode::read_only);
  if (!store) {
    io.err << "wattlab: " << store.error().message() << "\n";
    return store.error().kind == ErrorKind::not_found || store.error().kind == ErrorKind::parse ? kExitUsage : kExitFailure;
  }
  if (o.gemm) return report_gemm(o, *store, io);
  if (o.run == "all") throw UsageError("report: 'all' goes with --gemm; give a run id or 'latest'");
  RunId id = 0;
  if (o.run.empty() || o.run == "latest") {
    auto latest = store->latest_run_id();
    if (!latest) {
      io.err << "wattlab: " << latest.error().message() << "\n";
      return kExitUsage;
    }
    id = *latest;
  } else {
    id = parse_run_id(o.run, false);
  }
  auto rec = store->load_run(id);
  if (!rec) {
    io.err << "wattlab: " << rec.error().message() << "\n";
    return rec.error().kind == ErrorKind::not_found ? kExitUsage : kExitFailure;
  }
  if (!o.html.empty()) return write_html(*store, id, o.html, io);
  if (o.json) io.out << run_to_json_string(*rec) << "\n";
  else print_run_summary(io.out, *rec);
  return kExitOk;
}

}  // namespace

void register_report(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ReportOptions>();
  auto* sub = app.add_subcommand("report", "Print a stored run again");
  sub->add_option("run", opts->run, "run id or 'latest' (the default); with --gemm also 'all' (the default there)");
  sub->add_option("--db", opts->db, "SQLite database")->capture_default_str();
  sub->add_flag("--json", opts->json, "print the run as JSON (docs/json-output.md)");
  sub->add_option("--html", opts->html, "write the run as one self-contained HTML page with plots (docs/report-html.md)");
  sub->add_flag("--gemm", opts->gemm, "the GEMM study's tables against the reference, over every run by default (docs/report-gemm.md)");
  sub->add_option("--format", opts->format, "with --gemm: text (default) or md (Markdown tables)");
  sub->add_option("--plots-dir", opts->plots_dir, "with --gemm: write SVG plots normalized to the reference into this folder");
  sub->add_option("--sweep", opts->sweep, "with --gemm: only this sweep id");
  sub->callback([opts, &action] { action = [opts](Io& io) { return report(*opts, io); }; });
}

}  // namespace wattlab::cli
