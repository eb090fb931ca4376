#include "lab/sweep_stop.h"

#include <algorithm>
#include <utility>

namespace wattlab::lab {

SweepStop::SweepStop(const TimeModel& model, double budget_s, std::function<double()> elapsed_s,
                     std::function<bool()> requested)
    : model_(model), budget_s_(budget_s), elapsed_s_(std::move(elapsed_s)), requested_(std::move(requested)) {}

bool SweepStop::operator()() {
  if (requested_ && requested_()) {
    why_ = Why::signal;
    return true;
  }
  if (budget_s_ <= 0) return false;
  const double now_s = elapsed_s_();
  if (asked_ == 0) first_point_t_s_ = now_s;
  const double next_s = asked_ == 0
                            ? model_.prepare_s + model_.window_s + std::max(model_.first_warmup_s, model_.warmup_s)
                            : (now_s - first_point_t_s_) / static_cast<double>(asked_);
  ++asked_;
  if (now_s + next_s > budget_s_) {
    why_ = Why::budget;
    return true;
  }
  return false;
}

}  // namespace wattlab::lab
