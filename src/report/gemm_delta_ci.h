// A point's Δ against a drift-corrected reference, and the 95 % confidence interval of a value's
// mean Δ across seeds (docs/report-gemm.md, "Δ and its confidence interval"). Pure functions.
//
// Drift correction: the reference at a point's time is the linear interpolation, in time, between
// the nearest reference point before it and the nearest after it (same run, shape, engine and
// seed); with references on one side only, the nearest one. A point without a time, or without a
// reference of its run, is compared with the plain mean of its references.
//
// The CI is a percentile bootstrap: each resample draws the seeds with replacement and, for each
// drawn seed, its reference points with replacement (a reference point not drawn is not there:
// the interpolation then spans the nearest drawn ones), and takes the mean Δ. A fixed RNG seed
// makes it deterministic. With one seed only the reference points are resampled: the CI then says
// nothing of the spread between seeds, and the estimate is flagged so.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace wattlab::report {

struct RefPoint {
  int64_t t_ns = 0;  // the window's middle
  double value = 0;
};

// One point and the reference points it is compared with.
struct DeltaSample {
  double value = 0;
  std::optional<int64_t> t_ns;   // empty: compare with the mean of `refs`
  std::vector<RefPoint> refs;    // ascending t_ns
};

// The reference at `t_ns` from the refs whose weight is > 0 (weights empty: every ref, weight 1):
// interpolated between the nearest before and after, or the weighted mean without a time.
// nullopt without a ref of weight > 0.
std::optional<double> drift_reference(const std::vector<RefPoint>& refs, std::optional<int64_t> t_ns,
                                      const std::vector<unsigned>& weights = {});

// 100 * (value / reference - 1) with the drift-corrected reference; nullopt without one (or a 0 one).
std::optional<double> delta_pct(const DeltaSample& s);

struct DeltaCiOptions {
  std::size_t resamples = 2000;
  uint64_t rng_seed = 20240601;  // fixed: the same points give the same interval
  double level = 0.95;
};

struct DeltaCi {
  double mean_pct = 0;           // mean over seeds of each seed's mean Δ (all reference points)
  double lo_pct = 0, hi_pct = 0; // percentile interval at `level`
  std::size_t seeds = 0;
  std::size_t resamples = 0;
  bool references_only = false;  // one seed: the interval covers the reference points only
};

// `per_seed[i]`: the samples (points) of seed i, each with its references. Seeds whose samples
// have no reference are left out; nullopt when none is left.
std::optional<DeltaCi> delta_ci(const std::vector<std::vector<DeltaSample>>& per_seed, const DeltaCiOptions& options = {});

}  // namespace wattlab::report
