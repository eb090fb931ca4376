// The hold-out check of a recorded run (docs/holdout.md): windows whose edges sit on energy-counter
// updates have a truth, the counter's delta; the updates at their edges (and, to stand in for the
// meter's usual counter interval, every update off a sparser grid) are hidden, the windows are
// re-estimated from the readings that remain, and each error is set against the window's own U95.
// That says whether the stated uncertainty covers windows whose edges fall between counter updates.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "wattlab/meter/meter.h"
#include "wattlab/meter/window.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

struct HoldoutOptions {
  // The counter points the re-estimate keeps: one every this many seconds (the meter's default
  // counter interval); the others are hidden. At or under the points' own spacing, only the
  // edges are hidden.
  double keep_every_s = 1.0;
  // Hide the updates at both edges, or only at the end (the begin edge then sits on a kept point).
  bool hide_begin = true;
  // Readings this far either side of a window go into its re-estimate (the counter-scaled
  // samples look up to 20 s back).
  double context_s = 25.0;
};

// One held-out window of one counter domain.
struct HoldoutWindow {
  std::string name;          // the stored window it was snapped from
  std::string domain_id;
  std::string level;         // the stored window's label "level", or "-"
  std::string length_class;  // length_class(dur_s)
  int64_t t_begin_ns = 0, t_end_ns = 0;  // the counter updates it was snapped to
  double dur_s = 0;
  double truth_j = 0;        // the counter's delta between the two updates
  // What the updates' own placement leaves uncertain (95 %): the window's edges are the placed
  // update instants, the truth the energy between the real ones.
  double truth_u95_j = 0;
  double energy_j = 0;       // the re-estimate with the updates hidden
  double u95_j = 0;          // its stated uncertainty
  std::string estimator;
  double error_j() const { return energy_j - truth_j; }
  bool inside() const;       // |error| <= U95 and the truth's own bound in quadrature
  double ratio() const;      // |error| / U95 (infinite for an error against a U95 of 0)
};

// The share of windows inside their U95 in one cell (length class x level), with its Wilson 95 %
// interval, and |error| / U95 at the median and the 95th percentile.
struct HoldoutCell {
  std::string length_class, level;
  std::size_t n = 0, inside = 0;
  double share = 0, wilson_lo = 0, wilson_hi = 0;
  double median_ratio = 0, p95_ratio = 0;
};

struct HoldoutResult {
  std::vector<HoldoutWindow> windows;
  std::vector<HoldoutCell> cells;  // per length class and level, then "all" per length class, then overall
  std::size_t candidates = 0;      // stored windows x counter domains looked at
  std::size_t not_on_updates = 0;  // too short to span two counter updates, across a reset, or an edge placed loosely
  std::size_t not_estimated = 0;   // the re-estimate had no available energy
  double point_spacing_s = 0;      // median spacing of the run's counter updates as read
  int keep_every = 1;              // one point kept in this many
};

// The Wilson score interval (95 %) of k successes in n trials.
void wilson95(std::size_t k, std::size_t n, double& lo, double& hi);
// The length class of a window: "<0.15 s", "0.15-0.4 s", "0.4-1 s", "1-3 s", "3-15 s", ">=15 s".
std::string length_class(double dur_s);
// The cells of a set of held-out windows (HoldoutResult::cells).
std::vector<HoldoutCell> summarize_holdout(std::span<const HoldoutWindow> windows);

// The check over a recorded run: its domains, readings and stored windows (for their edges and
// labels). Throws std::invalid_argument when the run has no energy counter or no windows.
HoldoutResult holdout(const std::vector<Domain>& domains, std::span<const TimedReading> readings,
                      std::span<const WindowResult> stored, const HoldoutOptions& options = {});

// One row per held-out window (docs/holdout.md, "The CSV").
void write_holdout_csv(std::ostream& out, const HoldoutResult& result);

}  // namespace wattlab
