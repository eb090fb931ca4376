// wattlab gemm fit: the GEMM model fitted on a points CSV (docs/gemm-model.md): per engine, shape
// and target the leave-one-experiment-out scores, the worst held-out points, what one more feature
// would score, and the model file (--out). The committed model is this command's output on the
// committed CSV; tests/cli/gemm_model_cli_test.cpp checks that they agree.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <ostream>
#include <sstream>

#include "gemm_commands.h"
#include "gemm_model_points.h"
#include "gemm_options.h"
#include "core/sha256.h"
#include "lab/gemm_model.h"

namespace wattlab::cli {
namespace {

struct GemmFitOptions {
  std::string points;
  std::string out;
  std::string gpu;
  std::string features;  // comma-separated; empty: the default set
  double ridge_lambda = 0.1;
};

std::string today_utc() {
  const auto days = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  const std::chrono::year_month_day ymd{days};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string opt_num(const std::optional<double>& v, const char* f) {
  return v ? fmt::format(fmt::runtime(f), *v) : std::string("-");
}

void print_fit(std::ostream& out, const lab::GemmEngineFit& ef, std::size_t points) {
  out << fmt::format("\n{} {}: {} points, {} experiments ({})\n", ef.engine, ef.shape, points, ef.experiments.size(),
                     join(ef.experiments));
  out << fmt::format("  {:<19} {:>4} {:>12} {:>9} {:>16} {:>14} {:>13}\n", "target", "n", "held-out R²",
                     "MdAPE %", "95 % PI covers", "held out", "in-sample R²");
  for (const auto& t : ef.targets) {
    const auto& h = t.held_out;
    out << fmt::format("  {:<19} {:>4} {:>11} {:>9} {:>16} {:>14} {:>13.3f}\n", lab::to_string(t.target), t.n,
                       opt_num(h.r2, "{:.3f}"), opt_num(h.mdape_pct, "{:.2f}"), opt_num(h.coverage95, "{:.2f}"),
                       fmt::format("{} of {} exp.", h.experiments_scored, h.experiments_total), t.r2_in_sample);
  }
  for (const auto& t : ef.targets) {
    if (!t.held_out.note.empty()) out << fmt::format("  {}: {}\n", lab::to_string(t.target), t.held_out.note);
    if (!t.dropped.empty())
      out << fmt::format("  {}: left out for no spread in training: {}\n", lab::to_string(t.target), join(t.dropped));
  }
  for (const auto& n : ef.notes) out << "  " << n << "\n";
  for (const auto& t : ef.targets) {
    if (t.worst_held_out.empty()) continue;
    out << fmt::format("  worst held-out {} (predicted without its experiment):\n", lab::target_title(t.target));
    const auto unit = lab::target_unit(t.target);
    for (const auto& w : t.worst_held_out)
      out << fmt::format("    {:<22} measured {:.4g} {}, predicted {:.4g} {} [{:.4g}, {:.4g}], off {:.1f} %; A: {}\n",
                         w.label, w.measured, unit, w.predicted, unit, w.low, w.high, w.ape_pct, w.recipe_a);
  }
}

// The held-out R² of energy per GEMM with each catalogue feature added to the asked set.
void print_candidates(std::ostream& out, const std::vector<lab::GemmModelPoint>& pts, const lab::GemmFitOptions& base,
                      const lab::GemmEngineFit& ef) {
  std::vector<lab::GemmModelPoint> group;
  for (const auto& p : pts)
    if (p.engine == ef.engine && p.shape == ef.shape) group.push_back(p);
  std::vector<std::string> cells;
  for (const auto& c : lab::gemm_feature_catalogue()) {
    if (std::find(base.features.begin(), base.features.end(), c) != base.features.end()) continue;
    auto o = base;
    o.features.push_back(c);
    auto fits = lab::fit_gemm_model(group, o);
    std::optional<double> r2;
    if (fits && !fits->empty())
      for (const auto& t : fits->front().targets)
        if (t.target == lab::GemmTarget::energy_per_gemm_j) r2 = t.held_out.r2;
    cells.push_back(fmt::format("+{} {}", c, opt_num(r2, "{:.3f}")));
  }
  out << "  held-out R² of energy per GEMM with one feature more (a feature earns its place by raising it):\n";
  for (std::size_t i = 0; i < cells.size(); i += 4) {
    std::vector<std::string> row(cells.begin() + static_cast<std::ptrdiff_t>(i),
                                 cells.begin() + static_cast<std::ptrdiff_t>(std::min(i + 4, cells.size())));
    out << "    " << join(row, "; ") << "\n";
  }
}

int run_fit(const GemmFitOptions& o, Io& io) {
  std::ifstream in(o.points, std::ios::binary);
  if (!in) throw UsageError(fmt::format("--points: cannot read {}", o.points));
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const auto pts = usage_or_value(read_gemm_model_points(text, o.points), "--points");
  lab::GemmFitOptions fo;
  fo.ridge_lambda = o.ridge_lambda;
  if (!o.features.empty()) {
    fo.features.clear();
    std::stringstream fs(o.features);
    for (std::string f; std::getline(fs, f, ',');) fo.features.push_back(f);
  }
  if (auto st = lab::check_gemm_features(fo.features); !st) throw_error(st.error(), "--features");
  if (!(o.ridge_lambda >= 0)) throw UsageError(fmt::format("--ridge {}: must be 0 or more", o.ridge_lambda));

  lab::GemmModel m;
  m.gpu = o.gpu;
  m.date = today_utc();
  m.training_csv = o.points;
  m.training_sha256 = sha256_hex(text);
  m.training_rows = pts.rows;
  m.excluded = pts.excluded;
  m.features = fo.features;
  m.ridge_lambda = fo.ridge_lambda;
  m.fits = usage_or_value(lab::fit_gemm_model(pts.points, fo), "fit");

  io.out << fmt::format("wattlab gemm fit: {} (sha256 {}), measured on {}: {} rows, {} train the model, {} left out\n",
                        o.points, m.training_sha256.substr(0, 16), m.gpu, pts.rows, pts.points.size(),
                        pts.excluded.size());
  for (const auto& e : pts.excluded) io.out << "  left out: " << e << "\n";
  io.out << fmt::format("features: {}; ridge lambda {} on the standardised features\n", join(fo.features),
                        fo.ridge_lambda);
  io.out << "held-out scores: leave one experiment out; the held-out experiment's recipes are never seen in "
            "training, and the reference points are one experiment (ref) like the others\n";
  std::size_t fitted = 0;
  for (const auto& ef : m.fits) {
    std::size_t n = 0;
    for (const auto& p : pts.points) n += (p.engine == ef.engine && p.shape == ef.shape) ? 1 : 0;
    print_fit(io.out, ef, n);
    if (!ef.targets.empty()) print_candidates(io.out, pts.points, fo, ef);
    fitted += ef.targets.size();
  }
  if (fitted == 0) {
    io.err << "wattlab gemm fit: nothing could be fitted from " << o.points
           << (pts.points.empty() ? ": no row trains the model" : ": too few points for every engine and shape") << "\n";
    return kExitUsage;
  }
  if (o.out.empty()) {
    io.out << "\nno model file written (--out FILE writes one)\n";
    return kExitOk;
  }
  std::ofstream f(o.out, std::ios::binary | std::ios::trunc);
  f << lab::gemm_model_to_json(m);
  f.close();
  if (!f) {
    io.err << "wattlab gemm fit: cannot write " << o.out << "\n";
    return kExitFailure;
  }
  io.out << fmt::format("\nwrote {} (model format {}, fitted {})\n", o.out, m.format_version, m.date);
  return kExitOk;
}

}  // namespace

void register_gemm_fit(CLI::App& gemm, Action& action) {
  auto o = std::make_shared<GemmFitOptions>();
  auto* sub = gemm.add_subcommand("fit", "Fit the GEMM energy model on a points CSV, with held-out scores");
  sub->add_option("--points", o->points, "the points CSV (docs/gemm-cli.md, \"Points as CSV\")")->required();
  sub->add_option("--gpu", o->gpu, "the GPU the points were measured on, as the model names it (H200)")->required();
  sub->add_option("--out", o->out, "write the model file here");
  sub->add_option("--features", o->features, "features, comma-separated (default: the A-B means and the agreement)");
  sub->add_option("--ridge", o->ridge_lambda, "ridge penalty on the standardised features")->capture_default_str();
  sub->callback([o, &action] { action = [o](Io& io) { return run_fit(*o, io); }; });
}

}  // namespace wattlab::cli
