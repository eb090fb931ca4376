// The GEMM model file (docs/gemm-model.md, "The model file"): versioned JSON that holds everything
// a prediction needs (per engine, shape and target: features, standardisation, coefficients,
// residual variance, the interval's matrix) and what the fit reported (held-out scores, the worst
// held-out points), with the training CSV's name and sha256.
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lab/gemm_model.h"

namespace wattlab::lab {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "wattlab-gemm-model";
constexpr int kFormatVersion = 1;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json to_json(const GemmTargetFit& f) {
  json worst = json::array();
  for (const auto& w : f.worst_held_out)
    worst.push_back({{"point", w.label}, {"recipe_a", w.recipe_a}, {"recipe_b", w.recipe_b}, {"measured", w.measured},
                     {"predicted", w.predicted}, {"low", w.low}, {"high", w.high}, {"ape_pct", w.ape_pct}});
  return {{"target", std::string(to_string(f.target))},
          {"n", f.n},
          {"features", f.features},
          {"dropped", f.dropped},
          {"dropped_value", f.dropped_value},
          {"mean", f.mean},
          {"scale", f.scale},
          {"min", f.min},
          {"max", f.max},
          {"coef", f.coef},
          {"residual_variance", f.residual_variance},
          {"df_residual", f.df_residual},
          {"t975", f.t975},
          {"cov_unscaled", f.cov_unscaled},
          {"r2_in_sample", f.r2_in_sample},
          {"held_out",
           {{"experiments_total", f.held_out.experiments_total},
            {"experiments_scored", f.held_out.experiments_scored},
            {"points", f.held_out.points},
            {"r2", opt(f.held_out.r2)},
            {"mdape_pct", opt(f.held_out.mdape_pct)},
            {"coverage95", opt(f.held_out.coverage95)},
            {"note", f.held_out.note}}},
          {"worst_held_out", worst}};
}

// Reads a field, naming where it is when it is missing or of another kind.
template <class T>
T get(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw std::runtime_error(fmt::format("{}: no field '{}'", where, key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::runtime_error(fmt::format("{}: field '{}' has the wrong type", where, key));
  }
}

std::optional<double> get_opt(const json& j, const char* key, const std::string& where) {
  if (j.contains(key) && j.at(key).is_null()) return std::nullopt;
  return get<double>(j, key, where);
}

GemmTarget parse_target(const std::string& s, const std::string& where) {
  for (GemmTarget t : all_gemm_targets)
    if (to_string(t) == s) return t;
  throw std::runtime_error(fmt::format("{}: unknown target '{}'", where, s));
}

GemmTargetFit target_from_json(const json& j, const std::string& where) {
  GemmTargetFit f;
  f.target = parse_target(get<std::string>(j, "target", where), where);
  const std::string w = where + "." + std::string(to_string(f.target));
  f.n = get<int>(j, "n", w);
  f.features = get<std::vector<std::string>>(j, "features", w);
  f.dropped = get<std::vector<std::string>>(j, "dropped", w);
  f.dropped_value = get<std::vector<double>>(j, "dropped_value", w);
  f.mean = get<std::vector<double>>(j, "mean", w);
  f.scale = get<std::vector<double>>(j, "scale", w);
  f.min = get<std::vector<double>>(j, "min", w);
  f.max = get<std::vector<double>>(j, "max", w);
  f.coef = get<std::vector<double>>(j, "coef", w);
  f.residual_variance = get<double>(j, "residual_variance", w);
  f.df_residual = get<double>(j, "df_residual", w);
  f.t975 = get<double>(j, "t975", w);
  f.cov_unscaled = get<std::vector<std::vector<double>>>(j, "cov_unscaled", w);
  f.r2_in_sample = get<double>(j, "r2_in_sample", w);
  const std::size_t k = f.features.size();
  bool square = f.cov_unscaled.size() == k + 1;
  for (const auto& row : f.cov_unscaled) square = square && row.size() == k + 1;
  if (f.mean.size() != k || f.scale.size() != k || f.min.size() != k || f.max.size() != k || f.coef.size() != k + 1 ||
      !square || f.dropped_value.size() != f.dropped.size())
    throw std::runtime_error(fmt::format("{}: the lengths of features, mean, scale, min, max, coef and cov_unscaled "
                                         "do not agree with {} feature(s)",
                                         w, k));
  for (const auto& n : f.features)
    if (!gemm_feature(GemmBitStats{}, n)) throw std::runtime_error(fmt::format("{}: unknown feature '{}'", w, n));
  for (double s : f.scale)
    if (!(s > 0)) throw std::runtime_error(fmt::format("{}: a feature scale is not positive", w));
  // JSON has no Inf or NaN; a number too large for a double reads as one and is refused here.
  bool finite = std::isfinite(f.residual_variance) && f.residual_variance >= 0 && std::isfinite(f.df_residual) &&
                std::isfinite(f.t975) && f.t975 > 0;
  for (const auto* v : {&f.mean, &f.scale, &f.min, &f.max, &f.coef, &f.dropped_value})
    for (double x : *v) finite = finite && std::isfinite(x);
  for (const auto& row : f.cov_unscaled)
    for (double x : row) finite = finite && std::isfinite(x);
  if (!finite) throw std::runtime_error(fmt::format("{}: a number is not finite, or the residual variance or t975 is negative", w));
  const auto& h = get<json>(j, "held_out", w);
  f.held_out.experiments_total = get<int>(h, "experiments_total", w + ".held_out");
  f.held_out.experiments_scored = get<int>(h, "experiments_scored", w + ".held_out");
  f.held_out.points = get<int>(h, "points", w + ".held_out");
  f.held_out.r2 = get_opt(h, "r2", w + ".held_out");
  f.held_out.mdape_pct = get_opt(h, "mdape_pct", w + ".held_out");
  f.held_out.coverage95 = get_opt(h, "coverage95", w + ".held_out");
  f.held_out.note = get<std::string>(h, "note", w + ".held_out");
  for (const auto& x : get<json>(j, "worst_held_out", w))
    f.worst_held_out.push_back({get<std::string>(x, "point", w), get<std::string>(x, "recipe_a", w),
                                get<std::string>(x, "recipe_b", w), get<double>(x, "measured", w),
                                get<double>(x, "predicted", w), get<double>(x, "low", w), get<double>(x, "high", w),
                                get<double>(x, "ape_pct", w)});
  return f;
}

}  // namespace

std::string gemm_model_to_json(const GemmModel& m) {
  json fits = json::array();
  for (const auto& f : m.fits) {
    json targets = json::array();
    for (const auto& t : f.targets) targets.push_back(to_json(t));
    fits.push_back({{"engine", f.engine},
                    {"shape", f.shape},
                    {"experiments", f.experiments},
                    {"targets", targets},
                    {"notes", f.notes}});
  }
  const json j = {{"format", kFormat},
                  {"format_version", kFormatVersion},
                  {"gpu", m.gpu},
                  {"date", m.date},
                  {"training", {{"csv", m.training_csv}, {"sha256", m.training_sha256}, {"rows", m.training_rows},
                                {"excluded", m.excluded}}},
                  {"features", m.features},
                  {"ridge_lambda", m.ridge_lambda},
                  {"fits", fits}};
  return j.dump(1) + "\n";
}

Result<GemmModel> gemm_model_from_json(std::string_view text, const std::string& source) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return Error{ErrorKind::parse, source + ": not JSON", ""};
  try {
    if (get<std::string>(j, "format", source) != kFormat)
      return Error{ErrorKind::parse, fmt::format("{}: not a GEMM model file (format is not '{}')", source, kFormat), ""};
    GemmModel m;
    m.format_version = get<int>(j, "format_version", source);
    if (m.format_version != kFormatVersion)
      return Error{ErrorKind::parse,
                   fmt::format("{}: model format version {}, this wattlab reads version {}", source, m.format_version,
                               kFormatVersion),
                   "refit it with `wattlab gemm fit`"};
    m.gpu = get<std::string>(j, "gpu", source);
    m.date = get<std::string>(j, "date", source);
    const auto& t = get<json>(j, "training", source);
    m.training_csv = get<std::string>(t, "csv", source + ".training");
    m.training_sha256 = get<std::string>(t, "sha256", source + ".training");
    m.training_rows = get<int>(t, "rows", source + ".training");
    m.excluded = get<std::vector<std::string>>(t, "excluded", source + ".training");
    m.features = get<std::vector<std::string>>(j, "features", source);
    m.ridge_lambda = get<double>(j, "ridge_lambda", source);
    if (!std::isfinite(m.ridge_lambda)) return Error{ErrorKind::parse, source + ": ridge_lambda is not finite", ""};
    for (const auto& f : get<json>(j, "fits", source)) {
      GemmEngineFit ef;
      ef.engine = get<std::string>(f, "engine", source + ".fits");
      ef.shape = get<std::string>(f, "shape", source + ".fits");
      const std::string where = fmt::format("{}: fit {} {}", source, ef.engine, ef.shape);
      ef.experiments = get<std::vector<std::string>>(f, "experiments", where);
      ef.notes = get<std::vector<std::string>>(f, "notes", where);
      for (const auto& tj : get<json>(f, "targets", where)) ef.targets.push_back(target_from_json(tj, where));
      m.fits.push_back(std::move(ef));
    }
    return m;
  } catch (const std::exception& e) {
    return Error{ErrorKind::parse, e.what(), ""};
  }
}

Result<GemmModel> load_gemm_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorKind::not_found, fmt::format("cannot read the model file {}", path), ""};
  std::ostringstream ss;
  ss << in.rdbuf();
  return gemm_model_from_json(ss.str(), path);
}

}  // namespace wattlab::lab
