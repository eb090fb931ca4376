#include "counter_grid.h"

#include <algorithm>
#include <cmath>

namespace wattlab {
namespace {
int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
}  // namespace

void CounterGrid::add_bracket(int64_t t_before_ns, int64_t t_after_ns) {
  brackets_.push_back({t_before_ns, t_after_ns});
  while (brackets_.size() > 16) brackets_.pop_front();
  const Bracket& last = brackets_.back();
  // Period from the first and last narrow bracket: their update instants are a whole number of
  // periods apart. Only narrow brackets (probes: reads back to back) say where the update is; a
  // check bracket straddles the predicted update, so its midpoint only echoes the prediction (and
  // its read-time offset), and a period fitted to those midpoints ran away from the true one.
  const int64_t width = t_after_ns - t_before_ns;
  if (min_width_ns_ == 0 || width < min_width_ns_) min_width_ns_ = width;
  if (2 * width <= 3 * min_width_ns_) {
    narrow_.push_back(last);
    while (narrow_.size() > 16) narrow_.pop_front();
  }
  if (narrow_.size() >= 2) {
    const Bracket& first = narrow_.front();
    const Bracket& newest = narrow_.back();
    const double mid_first = 0.5 * static_cast<double>(first.lo_ns + first.hi_ns);
    const double mid_last = 0.5 * static_cast<double>(newest.lo_ns + newest.hi_ns);
    const double n = std::round((mid_last - mid_first) / static_cast<double>(period_ns_));
    if (n >= 20) {
      const double est = (mid_last - mid_first) / n;
      // Accept periods within 2% of nominal (H200: 99.9 ms median); anything else is noise.
      if (std::abs(est / static_cast<double>(nominal_ns_) - 1.0) < 0.02) period_ns_ = static_cast<int64_t>(std::llround(est));
    }
  }
  // Phase: intersect every bracket projected onto the newest one's grid instant.
  int64_t lo = last.lo_ns, hi = last.hi_ns;
  for (const auto& b : brackets_) {
    const int64_t k = static_cast<int64_t>(std::llround(static_cast<double>(last.hi_ns - b.hi_ns) / static_cast<double>(period_ns_)));
    const int64_t blo = b.lo_ns + k * period_ns_, bhi = b.hi_ns + k * period_ns_;
    if (std::max(lo, blo) < std::min(hi, bhi)) {
      lo = std::max(lo, blo);
      hi = std::min(hi, bhi);
    }
  }
  phase_ns_ = (lo + hi) / 2;
  half_width_ns_ = std::max<int64_t>((hi - lo) / 2, 1'000);
  have_phase_ = true;
}

int64_t CounterGrid::update_at_or_before(int64_t t_ns) const {
  return phase_ns_ + floor_div(t_ns - phase_ns_, period_ns_) * period_ns_;
}

int64_t CounterGrid::next_update_after(int64_t t_ns) const { return update_at_or_before(t_ns) + period_ns_; }

}  // namespace wattlab
