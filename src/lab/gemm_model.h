// A linear model that predicts a GEMM's energy per GEMM, mean power and mean SM clock from its
// operands' bit statistics (docs/gemm-model.md): features normalised by the dtype's width
// (gemm_features.cpp), a ridge fit per engine and shape with a 95 % prediction interval and
// leave-one-experiment-out scores (gemm_model_fit.cpp), predictions with their drivers
// (gemm_model_predict.cpp), and the versioned JSON file that holds a fitted model
// (gemm_model_io.cpp). CPU code; no GPU is needed to fit or to predict.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/core/error.h"
#include "lab/bit_stats.h"

namespace wattlab::lab {

// ---- inputs and features (gemm_features.cpp) -------------------------------------------------

// One operand's bit statistics as the points CSV stores them (doubles; BitStats converts).
struct OperandBitStats {
  double width_bits = 0;
  double popcount_bits = 0;    // bits set per element
  double zero_fraction = 0;
  double distinct_values = 0;  // distinct stored bit patterns
  double hamming_k_bits = 0;   // mean Hamming distance between neighbours along K
  double hamming_mn_bits = 0;  // ... along M (A) or N (B)
};
OperandBitStats operand_bit_stats(const BitStats& s);

struct GemmBitStats {
  OperandBitStats a, b;
  double ab_bit_agreement = 0;  // fraction of equal bits between A[i,k] and B[k,i]
};

// The catalogue of features: per operand (a_*, b_*), their mean over A and B (no prefix), and
// interactions. Every one is a fraction in [0, 1] (log2 of the distinct values over the width).
const std::vector<std::string>& gemm_feature_catalogue();
// The features a fit uses unless told otherwise: the A-B means and the agreement.
const std::vector<std::string>& gemm_default_features();
// The value of catalogue feature `name` for `s`; NaN when a statistic it needs is NaN (no pair of
// neighbours). An unknown name is an invalid_argument error listing the catalogue.
Result<double> gemm_feature(const GemmBitStats& s, std::string_view name);
Status check_gemm_features(const std::vector<std::string>& names);

// ---- targets ----------------------------------------------------------------------------------

enum class GemmTarget { energy_per_gemm_j, mean_power_w, mean_sm_clock_mhz };
inline constexpr std::array<GemmTarget, 3> all_gemm_targets = {
    GemmTarget::energy_per_gemm_j, GemmTarget::mean_power_w, GemmTarget::mean_sm_clock_mhz};
std::string_view to_string(GemmTarget t);  // "energy_per_gemm_j", ...
std::string_view target_title(GemmTarget t);  // "energy per GEMM", "mean power", "SM clock (mean)"
std::string_view target_unit(GemmTarget t);   // "J", "W", "MHz"

// ---- training points --------------------------------------------------------------------------

// One measured point: where it comes from, its statistics and what was measured (NaN: not measured).
struct GemmModelPoint {
  std::string engine;      // "bf16"
  std::string shape;       // "8192x8192x8192"
  std::string experiment;  // the held-out unit: "E11", "ref"
  std::string label;       // what to call it in a list: "E11 fraction=0.8"
  std::string recipe_a, recipe_b;
  GemmBitStats stats;
  std::array<double, 3> measured{};  // indexed like all_gemm_targets
};

// ---- a fitted model ---------------------------------------------------------------------------

// Leave-one-experiment-out scores: each experiment held out in turn, fitted on the others, its
// points predicted; the scores pool every held-out prediction.
struct HeldOutScores {
  int experiments_total = 0;
  int experiments_scored = 0;  // those whose training fold could be fitted
  int points = 0;
  std::optional<double> r2;          // 1 - SS_res / SS_tot over the held-out points
  std::optional<double> mdape_pct;   // median |predicted - measured| / measured x 100
  std::optional<double> coverage95;  // share of held-out points inside their 95 % interval
  std::string note;                  // why there is no score, when there is none
};

struct HeldOutPoint {
  std::string label, recipe_a, recipe_b;
  double measured = 0, predicted = 0, low = 0, high = 0;
  double ape_pct = 0;  // |predicted - measured| / measured x 100
};

// One target of one engine and shape: ridge regression on standardised features,
// y = coef[0] + sum_j coef[j+1] * (x_j - mean_j) / scale_j.
struct GemmTargetFit {
  GemmTarget target = GemmTarget::energy_per_gemm_j;
  int n = 0;                          // training points
  std::vector<std::string> features;  // those used (a feature with no spread in training is left out)
  std::vector<std::string> dropped;   // asked for but without spread in the training points
  std::vector<double> dropped_value;  // the one value each dropped feature had in training
  std::vector<double> mean, scale, min, max;  // per used feature, over the training points
  std::vector<double> coef;                   // intercept first, then per used feature
  double residual_variance = 0;  // RSS / df_residual
  double df_residual = 0;        // n - trace of the hat matrix
  double t975 = 0;               // Student's t quantile 0.975 at df_residual
  // (X'X + lambda D)^-1 X'X (X'X + lambda D)^-1 in the standardised coordinates (intercept first):
  // the unscaled covariance of coef that the prediction interval uses.
  std::vector<std::vector<double>> cov_unscaled;
  double r2_in_sample = 0;
  HeldOutScores held_out;
  std::vector<HeldOutPoint> worst_held_out;  // the largest held-out errors, largest first
};

struct GemmEngineFit {
  std::string engine, shape;
  std::vector<std::string> experiments;  // in first-seen order
  std::vector<GemmTargetFit> targets;    // those that could be fitted
  std::vector<std::string> notes;        // what could not be fitted, and why
};

struct GemmModel {
  int format_version = 1;
  std::string gpu;       // the GPU the training points were measured on
  std::string date;      // UTC date of the fit, YYYY-MM-DD
  std::string training_csv, training_sha256;
  int training_rows = 0;  // rows in the CSV
  std::vector<std::string> excluded;  // rows left out of every fit, each with why
  std::vector<std::string> features;  // the features asked for
  double ridge_lambda = 0;
  std::vector<GemmEngineFit> fits;
};

// ---- fitting (gemm_model_fit.cpp) -------------------------------------------------------------

struct GemmFitOptions {
  std::vector<std::string> features = gemm_default_features();
  double ridge_lambda = 0.1;  // on the standardised features; the intercept is not penalised
  int worst_listed = 5;
};

// One target fitted on `points` (those with a finite measurement and finite features); nullopt
// with `why` set when there are too few points for the features with spread (df_residual < 2).
std::optional<GemmTargetFit> fit_gemm_target(const std::vector<GemmModelPoint>& points, GemmTarget target,
                                             const GemmFitOptions& o, std::string& why);

// Every engine and shape in `points`, every target, with the held-out scores. Points are grouped
// by (engine, shape); the held-out unit is the experiment. Invalid features: invalid_argument.
Result<std::vector<GemmEngineFit>> fit_gemm_model(const std::vector<GemmModelPoint>& points, const GemmFitOptions& o);

// ---- predicting (gemm_model_predict.cpp) ------------------------------------------------------

struct GemmDriver {
  std::string feature;
  double value = 0, training_mean = 0;
  double contribution = 0;  // coef x (value - training mean) / scale, in the target's unit
};

struct GemmPrediction {
  GemmTarget target = GemmTarget::energy_per_gemm_j;
  double value = 0, low = 0, high = 0;  // the prediction and its 95 % prediction interval
  std::vector<GemmDriver> drivers;      // by |contribution|, largest first
  std::vector<std::string> out_of_range;  // "feature = v outside the training range [lo, hi]"
};

double predict_value(const GemmTargetFit& fit, const GemmBitStats& s);
GemmPrediction predict_gemm_target(const GemmTargetFit& fit, const GemmBitStats& s);
// The fit for engine and shape, or nullptr.
const GemmEngineFit* find_gemm_fit(const GemmModel& m, std::string_view engine, std::string_view shape);

// ---- the model file (gemm_model_io.cpp) -------------------------------------------------------

std::string gemm_model_to_json(const GemmModel& m);
// Errors (parse) name `source` and what is wrong: not JSON, another format or version, a field
// missing or of the wrong kind, inconsistent lengths.
Result<GemmModel> gemm_model_from_json(std::string_view text, const std::string& source);
Result<GemmModel> load_gemm_model(const std::string& path);

// The model built into the binary (data/gemm-model/h200-v1.json unless -DWATTLAB_GEMM_MODEL names
// another; the definitions are generated by src/lab/gemm_model.cmake): its name and text.
std::string_view embedded_gemm_model_name();
std::string_view embedded_gemm_model_json();

}  // namespace wattlab::lab
