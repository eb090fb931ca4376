#include "refresh_hint.h"

namespace wattlab {

int64_t RefreshHint::on_read(double value, int64_t mid_ns) {
  if (!searching_) return mid_ns;
  if (!have_) {
    have_ = true;
    first_ns_ = mid_ns;
  } else if (value != value_ && mid_ns - mid_ns_ <= kMaxGapNs) {
    bracket_ = RefreshBracket{mid_ns_, mid_ns};
    searching_ = false;
    return mid_ns;
  } else if (mid_ns - first_ns_ > kGiveUpPeriods * period_ns_) {
    searching_ = false;  // no change seen a step apart: this field says nothing about the grid
    return mid_ns;
  }
  value_ = value;
  mid_ns_ = mid_ns;
  return mid_ns + kStepNs;
}

}  // namespace wattlab
