// The sampler's CPU budget for one reading: what a read of it costs, measured as the sampler runs,
// and a token bucket that keeps the reading's long-run CPU under its share of one core. A reading
// whose reads cost more than its share at the configured interval gets its interval stretched
// (never shortened): on an H200 the energy counter costs ~3-4 ms a read and the violation counters
// ~0.6 ms, so read at fixed rates they alone would keep a core 1-3% busy (docs/results/nvml-h200.md).
#pragma once
#include <algorithm>
#include <cstdint>

namespace wattlab {

class ReadBudget {
 public:
  ReadBudget() = default;
  // share: fraction of one core (0.002 = 0.2%); model_cost_ns: the sensor model's read cost, the
  // first guess until reads are measured (0: unknown, the first read sets it).
  ReadBudget(double share, int64_t model_cost_ns, int64_t now_ns)
      : share_(share), cost_ns_(static_cast<double>(model_cost_ns)), have_cost_(model_cost_ns > 0), t_ns_(now_ns) {
    credit_ns_ = burst_ns();
  }

  double share() const { return share_; }
  double rate() const { return share_ * scale_; }
  // The whole sampler's budget scales every reading's share down when their sum would exceed it.
  void set_scale(double scale, int64_t now_ns) {
    refill(now_ns);
    scale_ = scale;
  }
  // Mean cost of one read (ns), an exponentially weighted average of the reads measured (1/8 weight
  // on the newest): it follows a cost that changes with load without chasing every outlier.
  double cost_ns() const { return cost_ns_; }
  void observe(int64_t dur_ns) {
    const double d = static_cast<double>(std::max<int64_t>(dur_ns, 0));
    cost_ns_ = have_cost_ ? cost_ns_ + (d - cost_ns_) / 8.0 : d;
    have_cost_ = true;
  }
  // A read that ended at now_ns and took dur_ns is paid for from the bucket.
  void charge(int64_t dur_ns, int64_t now_ns) {
    refill(now_ns);
    credit_ns_ -= static_cast<double>(std::max<int64_t>(dur_ns, 0));
    charged_ns_ += std::max<int64_t>(dur_ns, 0);
  }
  // Earliest time at or after now_ns at which the bucket is out of debt.
  int64_t earliest_ns(int64_t now_ns) const {
    const double r = rate();
    const double credit = std::min(burst_ns(), credit_ns_ + r * static_cast<double>(now_ns - t_ns_));
    if (credit >= 0 || r <= 0) return now_ns;
    return now_ns + static_cast<int64_t>(-credit / r) + 1;
  }
  // CPU the sampler spent on this reading's step besides the read itself (waking up for it, the
  // timeline's and windows' bookkeeping), measured on real time: paid for too, and part of the cost.
  void charge_overhead(int64_t extra_ns, int64_t now_ns) {
    if (extra_ns <= 0) return;
    charge(extra_ns, now_ns);
    cost_ns_ += static_cast<double>(extra_ns) / 8.0;
  }
  int64_t charged_ns() const { return charged_ns_; }

 private:
  // Savings are capped so that a long quiet spell does not pay for a long burst later: enough for
  // three reads (a bracket's two back to back, and one late read), or 1 s of the share.
  double burst_ns() const { return std::max(3.0 * cost_ns_, rate() * 1e9); }
  void refill(int64_t now_ns) {
    if (now_ns > t_ns_) credit_ns_ = std::min(burst_ns(), credit_ns_ + rate() * static_cast<double>(now_ns - t_ns_));
    t_ns_ = std::max(t_ns_, now_ns);
  }

  double share_ = 1.0;
  double scale_ = 1.0;
  double cost_ns_ = 0;
  bool have_cost_ = false;
  double credit_ns_ = 0;
  int64_t t_ns_ = 0;
  int64_t charged_ns_ = 0;
};

}  // namespace wattlab
