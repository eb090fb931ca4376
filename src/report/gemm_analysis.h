// The GEMM study's analysis (docs/report-gemm.md): the lab's gemm_point windows of one or more
// runs, grouped by sweep id, each point compared with the interleaved reference points of the same
// shape, engine and seed in the same sweep, then summarized across seeds. Pure functions on plain
// data; nothing here reads the store or prints.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/gemm_delta_ci.h"
#include "store/gemm_point_record.h"
#include "wattlab/store/run_record.h"

namespace wattlab::report {

// The quantities compared per point, in this order: energy per GEMM, mean power, TFLOP/s, mean SM
// clock, capped fraction and temperature of the point's GemmPointCounts.
enum class GemmQty { energy_per_gemm, power, tflops, sm_clock, capped_fraction, temperature };
constexpr std::size_t kGemmQtyCount = 6;
constexpr std::size_t idx(GemmQty q) { return static_cast<std::size_t>(q); }
// Δ of energy, power, TFLOP/s and SM clock is relative (% of the reference); of the capped
// fraction and the temperature it is the plain difference (fraction, degC).
bool relative_delta(GemmQty q);

// Why a point's output held Inf or NaN (the accuracy check: count rel_error_nonfinite or a
// non-finite fraction of C above 0), found by regenerating its inputs (gemm_nonfinite.h).
enum class GemmNonfinite {
  none,       // the check found no Inf/NaN (or made none)
  inputs,     // A or B holds Inf/NaN: the point is kept out of every Δ
  overflow,   // finite inputs: the accumulator (or C's type) overflowed; the point keeps its Δ
  unchecked,  // the inputs could not be regenerated (the label says why): kept out of every Δ
};

// One stored gemm_point window (a GemmPointRecord), with the finite counts the analysis uses.
struct GemmMeasurement {
  RunId run = 0;
  std::string window;
  std::string sweep;
  int point = -1;
  std::string experiment, engine, param, param_value, shape, seed;  // shape "MxNxK"
  bool reference = false;
  bool simulated = false;  // label simulated=1, or a simulated run
  std::array<std::optional<double>, kGemmQtyCount> q{};
  std::optional<double> energy_per_gemm_u_j, rel_error, nonfinite_fraction;
  int64_t m = 0, n = 0, k = 0;
  uint64_t seed_number = 0;
  std::string recipe_a, recipe_b;
  std::optional<int64_t> t_ns;   // the window's middle; empty for a window without edges
  bool output_nonfinite = false;  // the accuracy check found Inf/NaN (C or its relative error)
  GemmNonfinite nonfinite = GemmNonfinite::none;
  std::string nonfinite_label;    // "non-finite inputs (A and B)", "FP32 accumulator overflow (finite inputs)"
  // Kept out of Δ, effects and curves (its energy is still shown).
  bool excluded() const { return nonfinite == GemmNonfinite::inputs || nonfinite == GemmNonfinite::unchecked; }
};

// The GEMM point a window of `run` holds; throws WattlabError naming the run and window when the
// window's labels and counts do not decode.
GemmPointRecord decode_gemm_point(const RunRecord& run, const WindowResult& w);

// Every gemm_point window of `runs`, in run then window order, points with a non-finite output
// classified (classify_nonfinite). Throws WattlabError (parse) naming the run and window when one
// does not decode: no malformed point enters a mean unnoticed.
std::vector<GemmMeasurement> gemm_measurements(const std::vector<RunRecord>& runs);

// "0.25", "2^-3", "0xFF" as a number; nullopt for anything else ("baseline", "with").
std::optional<double> param_number(const std::string& value);

struct Stat {
  std::size_t n = 0;
  double mean = 0;
  std::optional<double> sd;  // sample SD (n - 1); empty below 2 values
};
Stat stat_of(const std::vector<double>& xs);

struct GemmAnalysisOptions {
  double cv_target_pct = 1.0;       // reference CV across seeds that passes (the study's target)
  double capped_fraction = 0.5;     // reference "at the cap" above this capped fraction
  double flat_pct = 3.0;            // |Δ| below this is not resolved (repeatability ~2 %, §9)
  double moved_pct = 3.0;           // |ΔSM clock| or |ΔTFLOP/s| from this on counts as moved
  DeltaCiOptions ci;                // the bootstrap of ΔE's confidence interval
};

// The reference points of one (shape, engine) in a sweep.
struct GemmReference {
  std::string shape, engine;
  std::size_t points = 0;  // reference windows
  std::size_t seeds = 0;
  // Across seeds, of each seed's mean over its reference points.
  std::array<Stat, kGemmQtyCount> value{};
  std::optional<double> cv_energy_pct, cv_power_pct;  // SD / mean across seeds; empty below 2 seeds
  std::optional<bool> cv_pass;                        // cv_energy_pct <= target; empty below 2 seeds
  // Drift: the largest (max - min) / mean of a seed's reference points, over the seeds.
  std::optional<double> drift_energy_pct, drift_power_pct;
  std::optional<double> min_energy_j, max_energy_j, min_power_w, max_power_w;  // every reference point
  bool capped = false;  // mean capped fraction > options.capped_fraction
};

// One (shape, engine, experiment, param_value) across seeds.
struct GemmRow {
  std::string shape, engine, experiment, param, param_value;
  std::optional<double> x;  // param_number(param_value)
  std::size_t seeds = 0;    // seeds with at least one point
  std::size_t referenced_seeds = 0;  // of those, seeds whose reference exists (Δ computed)
  std::array<Stat, kGemmQtyCount> value{};  // per seed mean first, then across seeds
  std::array<Stat, kGemmQtyCount> delta{};  // per seed against that seed's reference (see relative_delta)
  // seed -> value, of the points that enter Δ (not those with non-finite inputs)
  std::map<std::string, std::array<std::optional<double>, kGemmQtyCount>> per_seed;
  std::optional<double> max_rel_error, max_nonfinite_fraction;
  // ΔE's mean and 95 % CI across seeds against the drift-corrected reference (gemm_delta_ci.h).
  std::optional<DeltaCi> energy_ci;
  // Points whose output held Inf/NaN, by cause; `nonfinite_label` is the first one's label.
  std::size_t nonfinite_input_points = 0, overflow_points = 0, unchecked_points = 0, points = 0;
  std::string nonfinite_label;
  bool all_excluded() const { return points > 0 && nonfinite_input_points + unchecked_points == points; }
};

// How a sweep's curve runs, from its start value to its end value (ordered by x).
enum class Curve { flat, up, down, peak, dip, unknown };  // peak: an inverted U; dip: a U
std::string_view to_string(Curve c);

// One experiment on one (shape, engine): its largest effects and where they show.
struct GemmEffect {
  std::string shape, engine, experiment, param;
  std::size_t values = 0, seeds = 0;
  // End against start of the sweep (first and last x), per seed, then across seeds (%).
  std::optional<Stat> start_to_end_energy_pct, start_to_end_power_pct;
  // The value with the largest |mean ΔE| (|mean ΔP|) against the reference, and that Δ.
  std::string max_energy_at, max_power_at;
  std::optional<Stat> max_energy_pct, max_power_pct;
  std::optional<DeltaCi> max_energy_ci;  // the CI of the largest-|ΔE| value's ΔE
  // At the largest-|ΔE| value: ΔSM clock and ΔTFLOP/s (%).
  std::optional<double> clock_at_max_energy_pct, tflops_at_max_energy_pct;
  bool reference_capped = false;
  // The cap rule: the reference is at the cap, |ΔP| < flat_pct and |ΔSM clock| or |ΔTFLOP/s|
  // >= moved_pct at the largest-|ΔE| value: the cap turned the watts into clock and throughput.
  bool cap_shifted = false;
  std::string shows_in;  // "power", "clock/throughput (at the cap)", "clock/throughput", "not resolved"
  Curve power_curve = Curve::unknown, energy_curve = Curve::unknown;
};

struct GemmSweepAnalysis {
  std::string sweep;  // the sweep id ("" for points without one)
  bool simulated = false;
  std::vector<RunId> runs;  // the runs holding its points, ascending
  std::size_t points = 0;
  std::vector<GemmReference> references;  // GEMM engines, by shape then engine
  std::vector<GemmRow> rows;              // GEMM experiments, by shape, engine, experiment, x
  std::vector<GemmEffect> effects;        // by shape, engine, experiment
  std::optional<GemmReference> control_reference;  // engine "control": idle
  std::vector<GemmRow> controls;          // X1-X3 against idle
};

// Groups by sweep id (in order of first appearance) and analyzes each.
std::vector<GemmSweepAnalysis> analyze_gemm(const std::vector<GemmMeasurement>& points,
                                            const GemmAnalysisOptions& options = {});

// The shape of a curve from its (x-ordered) values in % against the reference.
Curve classify_curve(const std::vector<double>& pct, double flat_pct);

// "E2" < "E10" < "TF32" < "X1": study order.
bool experiment_less(const std::string& a, const std::string& b);

}  // namespace wattlab::report
