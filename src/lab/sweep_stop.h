// When a sweep stops between points before its end: a stop request (a signal), or a time budget
// that the next point would overrun. The next point's time is the mean of the points so far, or
// the time model's estimate for the first. Asked before each point (run_sweep's stop_before_next).
#pragma once
#include <cstddef>
#include <functional>

#include "lab/plan.h"

namespace wattlab::lab {

class SweepStop {
 public:
  enum class Why { none, signal, budget };
  // `elapsed_s`: time since the command began, on the clock the budget counts (virtual on the
  // SIMULATED executor); `budget_s` <= 0: no budget. `requested`: a stop was asked for.
  SweepStop(const TimeModel& model, double budget_s, std::function<double()> elapsed_s,
            std::function<bool()> requested);
  // True: stop before the next point (why() says why).
  bool operator()();
  Why why() const { return why_; }

 private:
  TimeModel model_;
  double budget_s_;
  std::function<double()> elapsed_s_;
  std::function<bool()> requested_;
  Why why_ = Why::none;
  std::size_t asked_ = 0;
  double first_point_t_s_ = 0;
};

}  // namespace wattlab::lab
