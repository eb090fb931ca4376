// The exporter's intervals that wait for their data before they are split per process: the
// meter's energy counter published past the interval's end (until then its energy is an
// extension with instant power, which a load periodic near NVML's 100 ms refresh aliases) and
// every process's utilization samples past it (each sample arrives after its own period). An
// interval that has waited max_wait_ns is taken anyway, so a counter that stops does not stop
// the per-process counters.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace wattlab::cli {

class PendingIntervals {
 public:
  explicit PendingIntervals(int64_t max_wait_ns) : max_wait_ns_(max_wait_ns) {}

  struct Interval {
    int64_t t_begin_ns = 0, t_end_ns = 0;
    bool waited_out = false;  // taken after max_wait_ns, not because its data was in
  };

  // Appends [t_begin, t_end] (after the newest pending one).
  void add(int64_t t_begin_ns, int64_t t_end_ns);
  // In time order, the pending intervals whose data is in (`ready`), up to the first that is not
  // and has not waited max_wait_ns by now_ns: later intervals never go before an earlier one.
  std::vector<Interval> take(int64_t now_ns, const std::function<bool(int64_t t_begin_ns, int64_t t_end_ns)>& ready);
  std::size_t size() const { return pending_.size(); }

 private:
  int64_t max_wait_ns_;
  std::deque<Interval> pending_;
};

}  // namespace wattlab::cli
