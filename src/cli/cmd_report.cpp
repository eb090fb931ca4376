// wattlab report RUN_ID|latest [--db FILE] [--json]: print a stored run again.
#include <CLI/CLI.hpp>

#include <ostream>

#include "cli.h"
#include "run_summary.h"
#include "wattlab/store/run_json.h"
#include "wattlab/store/store.h"

namespace wattlab::cli {
namespace {

struct ReportOptions {
  std::string run = "latest";
  std::string db = "wattlab.db";
  bool json = false;
};

int report(const ReportOptions& o, Io& io) {
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
  sub->callback([opts, &action] { action = [opts](Io& io) { return report(*opts, io); }; });
}

}  // namespace wattlab::cli
