// The exporter's intervals waiting for their data (pending_intervals.h).
#include "pending_intervals.h"

namespace wattlab::cli {

void PendingIntervals::add(int64_t t_begin_ns, int64_t t_end_ns) {
  if (t_end_ns <= t_begin_ns) return;
  pending_.push_back(Interval{t_begin_ns, t_end_ns, false});
}

std::vector<PendingIntervals::Interval> PendingIntervals::take(
    int64_t now_ns, const std::function<bool(int64_t t_begin_ns, int64_t t_end_ns)>& ready) {
  std::vector<Interval> out;
  while (!pending_.empty()) {
    Interval i = pending_.front();
    if (!ready(i.t_begin_ns, i.t_end_ns)) {
      if (now_ns - i.t_end_ns < max_wait_ns_) break;
      i.waited_out = true;
    }
    out.push_back(i);
    pending_.pop_front();
  }
  return out;
}

}  // namespace wattlab::cli
