// wattlab report RUN_ID|latest [--db FILE] [--json] [--html FILE]: print a stored run again, or
// write it as one self-contained HTML page with plots (docs/report-html.md).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <ostream>

#include "cli.h"
#include "run_summary.h"
#include "wattlab/report/html_report.h"
#include "wattlab/store/run_json.h"
#include "wattlab/store/store.h"

namespace wattlab::cli {
namespace {

struct ReportOptions {
  std::string run = "latest";
  std::string db = "wattlab.db";
  bool json = false;
  std::string html;  // write the HTML report here
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

int report(const ReportOptions& o, Io& io) {
  if (!o.html.empty()) check_html_path(o.html);
  auto store = Store::open(o.db, OpenMode::read_only);
  if (!store) {
    io.err << "wattlab: " << store.error().message() << "\n";
    return store.error().kind == ErrorKind::not_found || store.error().kind == ErrorKind::parse ? kExitUsage : kExitFailure;
  }
  RunId id = 0;
  if (o.run == "latest") {
    auto latest = store->latest_run_id();
    if (!latest) {
      io.err << "wattlab: " << latest.error().message() << "\n";
      return kExitUsage;
    }
    id = *latest;
  } else {
    try {
      std::size_t used = 0;
      id = std::stoll(o.run, &used);
      if (used != o.run.size() || id <= 0) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw UsageError("report: '" + o.run + "' is not a run id; give a positive number or 'latest'");
    }
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
  sub->add_option("run", opts->run, "run id, or 'latest'")->capture_default_str();
  sub->add_option("--db", opts->db, "SQLite database")->capture_default_str();
  sub->add_flag("--json", opts->json, "print the run as JSON (docs/json-output.md)");
  sub->add_option("--html", opts->html, "write the run as one self-contained HTML page with plots (docs/report-html.md)");
  sub->callback([opts, &action] { action = [opts](Io& io) { return report(*opts, io); }; });
}

}  // namespace wattlab::cli
