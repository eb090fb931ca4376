// wattlab gemm predict: a GEMM's energy per GEMM, mean power and SM clock predicted by the GEMM
// model from its operands' bit statistics (docs/gemm-model.md), each with its 95 % prediction
// interval, the features that drive it, and a warning for each feature outside the training range.
// A model prediction from the named GPU's measurements, never a measurement.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "gemm_commands.h"
#include "gemm_options.h"
#include "lab/bit_stats.h"
#include "lab/gemm_model.h"
#include "lab/generate.h"
#include "lab/npy.h"
#include "lab/plan.h"
#include "lab/study_recipes.h"

namespace wattlab::cli {
namespace {

struct GemmPredictOptions {
  std::string engine = "bf16";
  std::string shape;               // empty: what --a/--b hold, else 8192
  std::string recipe_a, recipe_b;  // empty: the engine's reference recipe
  std::string file_a, file_b;      // .npy operands in place of recipes (docs/gemm-inputs.md)
  uint64_t seed = 1;
  int64_t sample_rows = 2048;  // rows of A (columns of B) generated for the statistics; 0: all
  std::string model;  // empty: the model built into wattlab
  bool json = false;
};

// Where an operand's bytes come from. Every operand of a prediction is made by operand_bytes().
struct OperandSource {
  std::string recipe;  // generated on the CPU with the lab's generator (bit-identical to the GPU's)
  std::string file;    // or read from a .npy file, whole
};

std::vector<std::byte> operand_bytes(const OperandSource& src, const lab::OperandShape& shape, uint64_t seed) {
  const bool is_a = shape.which == lab::Operand::A;
  if (!src.file.empty()) {
    try {
      return lab::read_npy_operand(src.file, shape);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", is_a ? "--a" : "--b", e.what()));
    }
  }
  const auto recipe = usage_or_value(lab::parse_recipe(src.recipe), is_a ? "--recipe-a" : "--recipe-b");
  return lab::generate_cpu(recipe, shape, seed);
}

// What names an operand in the output: its recipe, or its file.
std::string operand_text(const OperandSource& src) { return src.file.empty() ? src.recipe : "file:" + src.file; }

struct ModelSource {
  lab::GemmModel model;
  std::string name;  // the file, or the embedded model's name
};

ModelSource load_model(const std::string& path) {
  if (path.empty()) {
    const std::string name = std::string(lab::embedded_gemm_model_name()) + " (built in)";
    auto m = lab::gemm_model_from_json(lab::embedded_gemm_model_json(), name);
    if (!m) throw WattlabError(m.error());
    return {std::move(*m), name};
  }
  auto m = lab::load_gemm_model(path);
  if (!m) throw UsageError("--model: " + m.error().what);
  return {std::move(*m), path};
}

std::string known_fits(const lab::GemmModel& m) {
  std::string s;
  for (const auto& f : m.fits)
    if (!f.targets.empty()) s += (s.empty() ? "" : ", ") + f.engine + " " + f.shape;
  return s.empty() ? "none" : s;
}

nlohmann::json stats_json(const lab::OperandBitStats& s) {
  return {{"width_bits", s.width_bits},         {"popcount_bits", s.popcount_bits},
          {"zero_fraction", s.zero_fraction},   {"distinct_values", s.distinct_values},
          {"hamming_k_bits", s.hamming_k_bits}, {"hamming_mn_bits", s.hamming_mn_bits}};
}

int run_predict(const GemmPredictOptions& o, Io& io) {
  const lab::Engine engine = usage_or_value(lab::parse_engine(o.engine), "--engine");
  if (!o.file_a.empty() && !o.recipe_a.empty()) throw UsageError("--a and --recipe-a both name A: give one");
  if (!o.file_b.empty() && !o.recipe_b.empty()) throw UsageError("--b and --recipe-b both name B: give one");
  const bool files = !o.file_a.empty() || !o.file_b.empty();
  const lab::Shape shape = !o.shape.empty() || !files ? usage_or_value(lab::parse_shape(o.shape.empty() ? "8192" : o.shape), "--shape")
                                                      : shape_from_operand_files(o.file_a, o.file_b);
  check_shape(engine, shape);
  const lab::SweepValue ref = usage_or_value(lab::reference_value(engine), "reference recipe");
  const OperandSource src_a{o.file_a.empty() ? (o.recipe_a.empty() ? ref.recipe_a : o.recipe_a) : "", o.file_a};
  const OperandSource src_b{o.file_b.empty() ? (o.recipe_b.empty() ? ref.recipe_b : o.recipe_b) : "", o.file_b};
  if (src_a.file.empty()) check_recipe(src_a.recipe, true, engine, shape);
  if (src_b.file.empty()) check_recipe(src_b.recipe, false, engine, shape);
  const auto ms = load_model(o.model);
  const std::string shape_text = lab::to_string(shape);
  const lab::GemmEngineFit* fit = lab::find_gemm_fit(ms.model, lab::to_string(engine), shape_text);
  if (fit == nullptr || fit->targets.empty())
    throw UsageError(fmt::format("the model {} has no fit for engine {} at {}; it has: {}", ms.name,
                                 lab::to_string(engine), shape_text, known_fits(ms.model)));

  const auto& es = lab::spec(engine);
  // The statistics come from the first sample_rows rows of A and columns of B, generated as an
  // operand of that many rows (the same recipe and seed): the per-element and along-K statistics
  // are estimated without bias; sorting along M/N over the whole matrix and the count of distinct
  // values depend on the operand's size, so they are estimates of the full operand's. An operand
  // from a file is read whole, so with a file the statistics are the whole operands'.
  if (o.sample_rows < 0) throw UsageError(fmt::format("--sample-rows {}: must be 0 (all) or more", o.sample_rows));
  const int64_t m_gen = o.sample_rows == 0 || files ? shape.m : std::min(shape.m, o.sample_rows);
  const int64_t n_gen = o.sample_rows == 0 || files ? shape.n : std::min(shape.n, o.sample_rows);
  const bool sampled = m_gen < shape.m || n_gen < shape.n;
  const lab::OperandShape sa{lab::Operand::A, m_gen, n_gen, shape.k, es.a};
  const lab::OperandShape sb{lab::Operand::B, m_gen, n_gen, shape.k, es.b};
  const std::string stats_from =
      sampled ? fmt::format("estimated from {} of {} rows of A and {} of {} columns of B, generated on the CPU "
                            "(--sample-rows 0: the whole operands)",
                            m_gen, shape.m, n_gen, shape.n)
              : std::string(files ? "the whole operands, read from the files and generated on the CPU"
                                  : "the whole operands, generated on the CPU");
  const auto t0 = std::chrono::steady_clock::now();
  const auto a = operand_bytes(src_a, sa, o.seed);
  const auto b = operand_bytes(src_b, sb, o.seed);
  lab::GemmBitStats st;
  st.a = lab::operand_bit_stats(lab::bit_stats_cpu(a.data(), sa));
  st.b = lab::operand_bit_stats(lab::bit_stats_cpu(b.data(), sb));
  st.ab_bit_agreement = es.a == es.b ? lab::ab_bit_agreement_cpu(a.data(), sa, b.data(), sb) : std::nan("");
  const double stats_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<lab::GemmPrediction> preds;
  std::vector<std::string> warnings;
  for (const auto& t : fit->targets) {
    preds.push_back(lab::predict_gemm_target(t, st));
    for (const auto& w : preds.back().out_of_range)
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
  const std::string what = fmt::format("MODEL PREDICTION from {} measurements, not a measurement", ms.model.gpu);

  if (o.json) {
    nlohmann::json j = {{"kind", "gemm_model_prediction"},
                        {"note", what},
                        {"gpu", ms.model.gpu},
                        {"model", {{"name", ms.name}, {"date", ms.model.date}, {"training_csv", ms.model.training_csv},
                                   {"training_sha256", ms.model.training_sha256}}},
                        {"engine", lab::to_string(engine)},
                        {"shape", shape_text},
                        {"seed", o.seed},
                        {"operand_a", operand_text(src_a)},
                        {"operand_b", operand_text(src_b)},
                        {"operand_statistics",
                         {{"a", stats_json(st.a)}, {"b", stats_json(st.b)}, {"ab_bit_agreement", st.ab_bit_agreement},
                          {"from", stats_from}}},
                        {"warnings", warnings}};
    for (std::size_t i = 0; i < preds.size(); ++i) {
      const auto& p = preds[i];
      const auto& t = fit->targets[i];
      nlohmann::json drivers = nlohmann::json::array();
      for (const auto& d : p.drivers)
        drivers.push_back({{"feature", d.feature}, {"value", d.value}, {"training_mean", d.training_mean},
                           {"contribution", d.contribution}});
      j["predictions"][std::string(lab::to_string(p.target))] = {
          {"predicted", p.value},
          {"low95", p.low},
          {"high95", p.high},
          {"unit", lab::target_unit(p.target)},
          {"held_out_r2", t.held_out.r2 ? nlohmann::json(*t.held_out.r2) : nlohmann::json(nullptr)},
          {"held_out_mdape_pct", t.held_out.mdape_pct ? nlohmann::json(*t.held_out.mdape_pct) : nlohmann::json(nullptr)},
          {"training_points", t.n},
          {"drivers", drivers}};
    }
    io.out << j.dump(2) << "\n";
    return kExitOk;
  }

  io.out << fmt::format("wattlab gemm predict: {} (model {}, fitted {} on {} sha256 {})\n", what, ms.name,
                        ms.model.date, ms.model.training_csv, ms.model.training_sha256.substr(0, 16));
  io.out << fmt::format("engine {}, shape {}, seed {}\n  A: {}\n  B: {}\n", lab::to_string(engine), shape_text, o.seed,
                        operand_text(src_a), operand_text(src_b));
  io.out << fmt::format(
      "operand statistics ({}, {:.1f} s): popcount {:.3f} / {:.3f} bits, zero "
      "fraction {:.3f} / {:.3f}, distinct values {} / {}, Hamming along K {:.3f} / {:.3f} bits, along M/N {:.3f} / "
      "{:.3f} bits (A / B); A-B bit agreement {:.4f}\n",
      stats_from, stats_s, st.a.popcount_bits, st.b.popcount_bits, st.a.zero_fraction, st.b.zero_fraction, st.a.distinct_values,
      st.b.distinct_values, st.a.hamming_k_bits, st.b.hamming_k_bits, st.a.hamming_mn_bits, st.b.hamming_mn_bits,
      st.ab_bit_agreement);
  for (std::size_t i = 0; i < preds.size(); ++i) {
    const auto& p = preds[i];
    const auto& t = fit->targets[i];
    const auto unit = lab::target_unit(p.target);
    const std::string score =
        t.held_out.r2 ? fmt::format("held-out R² {:.3f}, MdAPE {:.1f} %", *t.held_out.r2, t.held_out.mdape_pct.value_or(0))
                      : std::string("no held-out score");
    io.out << fmt::format("{} (predicted): {:.4g} {}, 95 % prediction interval {:.4g} to {:.4g} {} ({}; {} points)\n",
                          lab::target_title(p.target), p.value, unit, p.low, p.high, unit, score, t.n);
  }
  for (std::size_t i = 0; i < preds.size(); ++i) {
    const auto& p = preds[i];
    io.out << fmt::format("what drives the predicted {} (coefficient x (feature - training mean)):\n",
                          lab::target_title(p.target));
    for (const auto& d : p.drivers)
      io.out << fmt::format("  {:<22} {:+.4g} {}  (feature {:.4f}, training mean {:.4f})\n", d.feature, d.contribution,
                            lab::target_unit(p.target), d.value, d.training_mean);
  }
  for (const auto& w : warnings) io.out << "warning: " << w << ": the prediction extrapolates\n";
  return kExitOk;
}

}  // namespace

void register_gemm_predict(CLI::App& gemm, Action& action) {
  auto o = std::make_shared<GemmPredictOptions>();
  auto* sub = gemm.add_subcommand("predict", "Predict a GEMM's energy, power and clock from its inputs (the GEMM model)");
  sub->add_option("--engine", o->engine, "engine")->capture_default_str();
  sub->add_option("--shape", o->shape, "shape: N or MxNxK (default: what --a/--b hold, else 8192)");
  sub->add_option("--recipe-a", o->recipe_a, "recipe of A (default: the engine's reference)");
  sub->add_option("--recipe-b", o->recipe_b, "recipe of B (default: the engine's reference)");
  sub->add_option("--a", o->file_a, "A (M x K) from a .npy file instead of a recipe (docs/gemm-inputs.md)");
  sub->add_option("--b", o->file_b, "B (K x N) from a .npy file instead of a recipe");
  sub->add_option("--seed", o->seed, "input seed")->capture_default_str();
  sub->add_option("--sample-rows", o->sample_rows, "rows of A and columns of B the statistics are estimated from; 0: all")
      ->capture_default_str();
  sub->add_option("--model", o->model, "a model file from `wattlab gemm fit` (default: the one built in)");
  sub->add_flag("--json", o->json, "JSON output");
  sub->callback([o, &action] { action = [o](Io& io) { return run_predict(*o, io); }; });
}

}  // namespace wattlab::cli
