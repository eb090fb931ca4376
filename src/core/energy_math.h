// Sensor-model math shared by every estimator: counter deltas, integration of piecewise power,
// interpolation between counter updates, and uncertainty arithmetic.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

namespace wattlab {

// One delta of a cumulative counter. A counter that goes backwards either wrapped (when the
// range is known and the step is plausible) or was reset (driver reload): both are reported.
struct CounterStep {
  double delta = 0;      // energy added between the two reads, in the counter's unit
  bool wrapped = false;  // went backwards and `range` was added
  bool reset = false;    // went backwards with no range known: delta is `cur` (counted from 0)
};
CounterStep counter_step(double prev, double cur, double range = 0);

// Power held constant over [t0_ns, t1_ns): the model behind integration of power readings.
struct PowerPiece {
  int64_t t0_ns = 0;
  int64_t t1_ns = 0;
  double power_w = 0;
};
// Energy of the pieces inside [a_ns, b_ns]; gaps count as 0 and are reported in covered_ns.
struct Integral {
  double energy_j = 0;
  int64_t covered_ns = 0;  // how much of [a, b] the pieces cover
};
Integral integrate(std::span<const PowerPiece> pieces, int64_t a_ns, int64_t b_ns);

// Cumulative energy known at points (t_ns, energy_j), both increasing; the value in between is
// shaped by a power model: the share of the interval's energy before t follows the share of the
// model's energy before t (linear in time when the model has no energy there).
struct CumulativePoint {
  int64_t t_ns = 0;
  double energy_j = 0;
};
// Returns the interpolated cumulative energy at t; t must lie within [p0.t_ns, p1.t_ns].
double shaped_interpolate(const CumulativePoint& p0, const CumulativePoint& p1,
                          std::span<const PowerPiece> shape, int64_t t_ns);

// Root of the sum of squares: independent uncertainty components.
double rss(std::initializer_list<double> parts);

// Mean, and sample standard deviation (n-1), of a series.
double mean(std::span<const double> xs);
double stddev(std::span<const double> xs);

}  // namespace wattlab
