// wattlab report RUN_ID|latest [--db FILE] [--format text|json|html] [--json] [--html FILE]: a
// stored run again on stdout, or as one self-contained HTML page with plots (docs/report-html.md).
// wattlab report --gemm [RUN_ID|latest|all] [--format text|md|html] [--plots-dir DIR] [--html FILE]
// [--sweep ID] [--points FILE.csv]: the GEMM study's tables and plots against the reference, from
// the store or from its points CSV (docs/report-gemm.md).
// --format picks what goes to stdout (format_option.h); --html FILE writes the page to a file.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>

#include "cli.h"
#include "format_option.h"
#include "record/provisional_run.h"
#include "report/gemm_analysis.h"
#include "report/gemm_plot_files.h"
#include "report/gemm_points_csv.h"
#include "report/gemm_tables.h"
#include "report/html_report.h"
#include "report/run_report.h"
#include "wattlab/store/store.h"

namespace wattlab::cli {
namespace {

using report::Format;

struct ReportOptions {
  std::string run;  // empty: "latest", or "all" with --gemm
  std::string db = "wattlab.db";
  FormatChoice format;  // stdout: text (default), json, md (--gemm only) or html
  std::string html;     // write the HTML page here
  bool gemm = false;
  std::string plots_dir;
  std::string sweep;  // --gemm: only this sweep id
  std::string points;  // --gemm: read the points CSV instead of the store
  bool db_given = false;
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

// The options that go together, checked before the store is opened.
void check_options(const ReportOptions& o) {
  const Format f = o.format.format;
  if (!o.html.empty()) check_html_path(o.html);
  if (!o.gemm && (!o.plots_dir.empty() || !o.sweep.empty() || !o.points.empty()))
    throw UsageError("report: --plots-dir, --sweep and --points go with --gemm");
  if (!o.points.empty() && o.db_given)
    throw UsageError("report: --points reads the points CSV instead of a store; give --points or --db, not both");
  if (!o.gemm && f == Format::markdown)
    throw UsageError("report: --format md goes with --gemm; a run prints as text, json or html");
  if (o.gemm && f == Format::json)
    throw UsageError("report: JSON (--json, --format json) does not go with --gemm; use --format text, md or html, or --html FILE");
  if (f == Format::html && !o.html.empty())
    throw UsageError("report: --format html prints the page, --html FILE writes it: give one of them");
  if (f == Format::html && !o.plots_dir.empty())
    throw UsageError("report: --plots-dir prints a line on stdout; it does not go with --format html");
  if (!o.gemm && !o.html.empty() && o.format.given)
    throw UsageError("report: --html FILE writes the run's page; --format " + std::string(report::format_name(f)) +
                     " does not go with it");
  if (!o.plots_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.plots_dir, ec);
    if (!std::filesystem::is_directory(o.plots_dir, ec))
      throw UsageError("report: --plots-dir '" + o.plots_dir + "' is not a folder and cannot be made one");
  }
}

// Writes a rendered page to `path` (--html FILE) or prints it (path empty: --format html).
int emit_html(const Result<std::string>& html, const std::string& path, const std::string& what, Io& io) {
  if (!html) {
    io.err << "wattlab: " << html.error().message() << "\n";
    return html.error().kind == ErrorKind::not_found ? kExitUsage : kExitFailure;
  }
  if (path.empty()) {
    io.out << *html;
    return kExitOk;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << *html;
  out.close();
  if (!out) {
    io.err << "wattlab: cannot write '" << path << "' (report --html): check the path and its permissions\n";
    return kExitUsage;
  }
  io.out << "wrote " << path << " (" << what << ")\n";
  return kExitOk;
}

// A run id: a positive number, or "latest" (then looked up); nullopt (message on stderr) when the
// store has no run.
std::optional<RunId> run_id(const Store& store, const std::string& run, bool gemm, Io& io) {
  if (run.empty() || run == "latest") {
    auto latest = store.latest_run_id();
    if (!latest) {
      io.err << "wattlab: " << latest.error().message() << "\n";
      return std::nullopt;
    }
    return *latest;
  }
  try {
    std::size_t used = 0;
    const RunId id = std::stoll(run, &used);
    if (used != run.size() || id <= 0) throw std::invalid_argument("");
    return id;
  } catch (const std::exception&) {
    throw UsageError("report: '" + run + "' is not a run id; give a positive number, 'latest'" + (gemm ? " or 'all'" : ""));
  }
}

// The runs --gemm reads: every run with windows ("all"), the latest or one run id, from the store.
// Returns false (message on stderr) when one does not load.
bool load_gemm_runs(const ReportOptions& o, const Store& store, const std::string& sel, std::vector<RunRecord>& runs,
                    std::string& what, int& status, Io& io) {
  auto load = [&](RunId id) -> bool {
    auto rec = store.load_run(id);
    if (!rec) io.err << "wattlab: " << rec.error().message() << "\n";
    else runs.push_back(std::move(*rec));
    return rec.ok();
  };
  if (sel == "all") {
    auto list = store.list_runs();
    if (!list) {
      io.err << "wattlab: " << list.error().message() << "\n";
      return status = kExitFailure, false;
    }
    for (const auto& r : *list)
      if (r.window_count > 0 && !load(r.run_id)) return status = kExitFailure, false;
    what = "all runs of " + o.db;
  } else {
    const auto id = run_id(store, sel, true, io);
    if (!id || !load(*id)) return status = kExitUsage, false;
    what = "run " + std::to_string(*id) + " of " + o.db;
  }
  return true;
}

// The same selection from the points CSV: "all", "latest" (the highest run id) or one run id.
bool select_csv_runs(const ReportOptions& o, const std::string& sel, std::vector<RunRecord>& runs, std::string& what, Io& io) {
  if (sel == "all") {
    what = "all runs of " + o.points;
    return true;
  }
  RunId id = 0;
  if (sel == "latest") {
    id = runs.empty() ? 0 : runs.back().run_id;
  } else {
    try {
      std::size_t used = 0;
      id = std::stoll(sel, &used);
      if (used != sel.size() || id <= 0) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw UsageError("report: '" + sel + "' is not a run id; give a positive number, 'latest' or 'all'");
    }
  }
  std::erase_if(runs, [&](const RunRecord& r) { return r.run_id != id; });
  if (runs.empty()) {
    io.err << "wattlab: report --gemm: no run " << (sel == "latest" ? std::string("at all") : std::to_string(id)) << " in "
           << o.points << "\n";
    return false;
  }
  what = "run " + std::to_string(id) + " of " + o.points;
  return true;
}

int report_gemm(const ReportOptions& o, std::vector<RunRecord> runs, const std::string& sel, std::string what, Io& io) {
  auto points = report::gemm_measurements(runs);
  if (!o.sweep.empty()) {
    std::erase_if(points, [&](const report::GemmMeasurement& m) { return m.sweep != o.sweep; });
    what += ", sweep " + o.sweep;
  }
  if (points.empty()) {
    io.err << "wattlab: report --gemm: no gemm_point windows in " << what << " (wattlab gemm stores them)\n";
    return kExitUsage;
  }
  if (o.format.format == Format::html) return emit_html(report::gemm_html_report(runs, what), "", what, io);
  const auto analyses = report::analyze_gemm(points);
  const bool md = o.format.format == Format::markdown;
  if (md) io.out << "<!-- wattlab report --gemm " << sel << " --format md (docs/report-gemm.md); " << what << " -->\n\n";
  for (const auto& a : analyses) {
    const auto tables = report::gemm_tables(a);
    if (md) io.out << "### " << report::gemm_sweep_heading(a) << "\n\n" << report::render_markdown(tables);
    else io.out << "== " << report::gemm_sweep_heading(a) << " ==\n\n" << report::render_text(tables);
    if (a.references.empty() && !a.control_reference)
      io.out << (md ? "" : "  ") << "No reference points in this sweep: no Δ, CV or effect is computed.\n\n";
  }
  if (!o.plots_dir.empty()) {
    const auto n = report::write_gemm_plot_files(analyses, o.plots_dir);
    if (!n) {
      io.err << "wattlab: " << n.error().message() << "\n";
      return kExitFailure;  // gnuplot missing or failing: the message names the package or its stderr
    }
    io.out << "wrote " << *n << " plots to " << o.plots_dir << (*n == 0 ? " (no sweep has reference points)" : "") << "\n";
  }
  if (!o.html.empty()) return emit_html(report::gemm_html_report(runs, what), o.html, what, io);
  return kExitOk;
}

int report(const ReportOptions& o, Io& io) {
  check_options(o);
  const std::string sel = o.run.empty() ? "all" : o.run;
  if (o.gemm && !o.points.empty()) {
    auto runs = report::load_gemm_points_csv(o.points);
    if (!runs) {
      io.err << "wattlab: " << runs.error().message() << "\n";
      return kExitUsage;
    }
    std::string what;
    if (!select_csv_runs(o, sel, *runs, what, io)) return kExitUsage;
    return report_gemm(o, std::move(*runs), sel, what, io);
  }
  auto store = Store::open(o.db, OpenMode::read_only);
  if (!store) {
    io.err << "wattlab: " << store.error().message() << "\n";
    return store.error().kind == ErrorKind::not_found || store.error().kind == ErrorKind::parse ? kExitUsage : kExitFailure;
  }
  if (o.gemm) {
    std::vector<RunRecord> runs;
    std::string what;
    int status = kExitOk;
    if (!load_gemm_runs(o, *store, sel, runs, what, status, io)) return status;
    return report_gemm(o, std::move(runs), sel, what, io);
  }
  if (o.run == "all") throw UsageError("report: 'all' goes with --gemm; give a run id or 'latest'");
  const auto id = run_id(*store, o.run, false, io);
  if (!id) return kExitUsage;
  auto rec = store->load_run(*id);
  if (!rec) {
    io.err << "wattlab: " << rec.error().message() << "\n";
    return rec.error().kind == ErrorKind::not_found ? kExitUsage : kExitFailure;
  }
  if (!o.html.empty() || o.format.format == Format::html)
    return emit_html(report::html_report(*store, *id), o.html, "run " + std::to_string(*id), io);
  // An incomplete run: its energy so far from its stored readings, marked provisional.
  if (auto st = add_provisional_run_window(*store, *rec); !st) io.err << "wattlab: " << st.error().message() << "\n";
  report::print_run(io.out, *rec, o.format.format);
  return kExitOk;
}

}  // namespace

void register_report(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ReportOptions>();
  auto* sub = app.add_subcommand("report", "Print a stored run again, or the GEMM study's tables (--gemm)");
  sub->add_option("run", opts->run, "run id or 'latest' (the default); with --gemm also 'all' (the default there)");
  auto* db = sub->add_option("--db", opts->db, "SQLite database")->capture_default_str();
  add_format_option(sub, opts->format, {Format::text, Format::json, Format::markdown, Format::html},
                    "a run: text, json (docs/json-output.md) or html; with --gemm: text, md (Markdown tables) or html");
  sub->add_option("--html", opts->html, "write the run (or with --gemm the study) as one self-contained HTML page with plots");
  sub->add_flag("--gemm", opts->gemm, "the GEMM study's tables against the reference, over every run by default (docs/report-gemm.md)");
  sub->add_option("--plots-dir", opts->plots_dir, "with --gemm: write SVG plots normalized to the reference into this folder");
  sub->add_option("--sweep", opts->sweep, "with --gemm: only this sweep id");
  sub->add_option("--points", opts->points,
                  "with --gemm: read the points CSV (python/bench/gemm_points_csv.py) instead of the store");
  sub->callback([opts, db, &action] {
    opts->db_given = db->count() > 0;
    action = [opts](Io& io) { return report(*opts, io); };
  });
}

}  // namespace wattlab::cli
