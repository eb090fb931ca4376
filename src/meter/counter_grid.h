// Tracks when an expensive cumulative counter publishes (its update grid), so the sampler can read
// it just after an update and know, to a few ms, what instant the value belongs to. Reading at
// random times would leave each value's time uncertain by a whole update period (100 ms on H200):
// up to 70 J at 700 W. The grid is learned by reads that bracket an update (value changes between
// them) and refined as more brackets arrive, which also tracks a period that is not exactly 100 ms.
#pragma once
#include <cstdint>
#include <deque>
#include <optional>

namespace wattlab {

class CounterGrid {
 public:
  explicit CounterGrid(int64_t nominal_period_ns) : period_ns_(nominal_period_ns), nominal_ns_(nominal_period_ns) {}

  bool locked() const { return have_phase_; }
  int64_t period_ns() const { return period_ns_; }
  // A bracket: the value changed between a read at t_before and one at t_after (midpoints).
  void add_bracket(int64_t t_before_ns, int64_t t_after_ns);
  // The grid instant just at or before t, and how far it can be off (half the bracket width).
  int64_t update_at_or_before(int64_t t_ns) const;
  int64_t next_update_after(int64_t t_ns) const;
  int64_t uncertainty_ns() const { return half_width_ns_; }
  // The phase is lost (a check bracket saw no update); the narrow brackets stay, so the next probe
  // can refine the period from them (a period off nominal is what usually loses the phase).
  void unlock() {
    have_phase_ = false;
    kept_ = brackets_;
    brackets_.clear();
  }
  // The phase before unlock() was right after all (the counter was stuck, not drifted): back to it.
  void relock() {
    brackets_ = kept_;
    have_phase_ = !brackets_.empty();
  }

 private:
  struct Bracket {
    int64_t lo_ns, hi_ns;
  };
  std::deque<Bracket> brackets_;
  std::deque<Bracket> kept_;    // the brackets before the newest unlock(), for relock()
  std::deque<Bracket> narrow_;  // the narrowest brackets (probes), kept across unlock(), for the period
  int64_t min_width_ns_ = 0;
  int64_t period_ns_;
  int64_t nominal_ns_;
  int64_t phase_ns_ = 0;  // one grid instant
  int64_t half_width_ns_ = 0;
  bool have_phase_ = false;
};

}  // namespace wattlab
