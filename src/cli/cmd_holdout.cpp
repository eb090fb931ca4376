// wattlab holdout [RUN_ID|latest] [--db FILE] [--csv FILE] [--keep-every-s S] [--edges both|end]:
// the hold-out check of a stored run (docs/holdout.md): windows snapped to energy-counter updates,
// the updates at their edges hidden, re-estimated from the stored readings, and the share inside
// their own U95 per window length and power level. The work is wattlab::holdout (meter/holdout.h).
#include <CLI/CLI.hpp>

#include <fstream>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <fmt/format.h>

#include "cli.h"
#include "meter/holdout.h"
#include "store/run_readings.h"
#include "wattlab/store/store.h"

namespace wattlab::cli {
namespace {

struct HoldoutCliOptions {
  std::string run = "latest";
  std::string db = "wattlab.db";
  std::string csv;
  std::string edges = "both";
  double keep_every_s = 1.0;
};

int run_holdout(const HoldoutCliOptions& o, Io& io) {
  if (o.edges != "both" && o.edges != "end") throw UsageError("holdout: --edges '" + o.edges + "' (accepted: both, end)");
  if (!(o.keep_every_s > 0)) throw UsageError("holdout: --keep-every-s must be positive");
  auto store = Store::open(o.db, OpenMode::read_only);
  if (!store && store.error().kind != ErrorKind::not_found && store.error().kind != ErrorKind::parse &&
      store.error().kind != ErrorKind::schema)
    throw WattlabError(store.error());
  if (!store) throw UsageError("holdout: " + store.error().message());
  RunId id = 0;
  if (o.run == "latest") {
    auto latest = store->latest_run_id();
    if (!latest) throw UsageError("holdout: " + latest.error().message());
    id = *latest;
  } else {
    try {
      std::size_t used = 0;
      id = std::stoll(o.run, &used);
      if (used != o.run.size()) throw std::invalid_argument(o.run);
    } catch (const std::exception&) {
      throw UsageError("holdout: run '" + o.run + "' is not a run id (a number, or latest)");
    }
  }
  auto rec = store->load_run(id);
  if (!rec) throw UsageError("holdout: " + rec.error().message());
  auto readings = load_run_readings(*store, *rec);
  if (!readings) throw WattlabError(readings.error());
  HoldoutOptions ho;
  ho.keep_every_s = o.keep_every_s;
  ho.hide_begin = o.edges == "both";
  HoldoutResult r;
  try {
    r = holdout(rec->domains, *readings, rec->windows, ho);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("holdout: run ") + std::to_string(id) + ": " + e.what());
  }
  std::ostream& out = io.out;
  out << fmt::format("hold-out check of run {} in {}{}\n", id, o.db, rec->info.simulated ? " (SIMULATED)" : "");
  out << fmt::format("counter updates {:.3f} s apart as read; kept one in {} ({:.2f} s), hidden at {} of each window\n",
                     r.point_spacing_s, r.keep_every, r.point_spacing_s * r.keep_every,
                     ho.hide_begin ? "both edges" : "the end");
  out << fmt::format("{} window(s) x counter domain(s): {} not spanning two updates, {} without an available "
                     "re-estimate, {} held out\n",
                     r.candidates, r.not_on_updates, r.not_estimated, r.windows.size());
  out << fmt::format("{:<11} {:<10} {:>5} {:>6} {:>7} {:>15} {:>11} {:>11}\n", "length", "level", "n", "inside",
                     "share", "Wilson 95%", "med |e|/U", "p95 |e|/U");
  for (const HoldoutCell& c : r.cells)
    out << fmt::format("{:<11} {:<10} {:>5} {:>6} {:>6.1f}% {:>6.1f}-{:>6.1f}% {:>11.2f} {:>11.2f}\n", c.length_class,
                       c.level, c.n, c.inside, 100 * c.share, 100 * c.wilson_lo, 100 * c.wilson_hi, c.median_ratio,
                       c.p95_ratio);
  if (!o.csv.empty()) {
    std::ofstream f(o.csv);
    write_holdout_csv(f, r);
    if (!f) throw WattlabError(Error{ErrorKind::io, "holdout: cannot write " + o.csv, "", 0});
    out << "csv: " << o.csv << "\n";
  }
  return kExitOk;
}

}  // namespace

void register_holdout(CLI::App& app, Action& action) {
  auto o = std::make_shared<HoldoutCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "holdout", "re-estimate a stored run's windows with the counter updates at their edges hidden (docs/holdout.md)");
  sub->add_option("run", o->run, "run id, or latest")->capture_default_str();
  sub->add_option("--db", o->db, "the run database")->capture_default_str();
  sub->add_option("--csv", o->csv, "also write one row per held-out window here");
  sub->add_option("--keep-every-s", o->keep_every_s, "counter updates kept: one per this many seconds")->capture_default_str();
  sub->add_option("--edges", o->edges, "hide the updates at both edges, or only at the end: both|end")->capture_default_str();
  sub->callback([&action, o] { action = [o](Io& io) { return run_holdout(*o, io); }; });
}

}  // namespace wattlab::cli
