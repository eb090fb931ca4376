// The sampler's CPU budget for one reading: what a read of it costs, measured as the sampler runs,
// and a token bucket that keeps the reading's long-run CPU under its share of one core. A reading
// whose reads cost more than its share at the configured interval gets its interval stretched
// (never shortened): on an H200 the energy counter costs ~3-4 ms a read and the violation counters
// ~0.6 ms, so read at fixed rates they alone would keep a core 1-3% busy (docs/results/nvml-h200.md).
// Beside it, the policy above the single readings: how the sampler's total is split between them
// (budget_group_scales, water_level) and how large that total may be (ThreadCpuGovernor).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

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

  // Savings of one read's worth only, for a reading whose start-up reads are free (the counter
  // grid's probe): with 8 simulated H200s the counters' starting savings (three reads each) had
  // cost 0.36 % of a core over the first minute.
  void start_with_one_read() { credit_ns_ = std::min(credit_ns_, cost_ns_); }

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

// How the sampler's total read share is split when the readings would use more than it (the
// shares in use per group: the energy counter, power readings, telemetry, and the extras: readings
// with a cheaper stand-in or that change slowly). The counter, the anchor of every estimate, keeps
// up to 3/4 of the total. Of the rest the extras give way first, down to a tenth (the violation
// counters, 1-2 ms a read on an H200, have the clock-event reasons as a stand-in; memory used took
// 4.5-46 ms a read under load in some runs, 0.06 ms in others); then telemetry (it describes the
// energy; the power readings shape it), down to a fifth of what is left; then the power readings.
// Returns each group's factor (1: untouched). On the H200 a counter at 7.5 ms a read left
// telemetry so little that the GPM metrics (0.2 ms) shared it with the violation counters and came
// twice in 66 s.
inline std::array<double, 4> budget_group_scales(double use_counter, double use_power, double use_tel,
                                                 double use_extra, double total) {
  std::array<double, 4> f{1.0, 1.0, 1.0, 1.0};
  if (total <= 0 || use_counter + use_power + use_tel + use_extra <= total) return f;
  const double counter_cap = 0.75 * total;
  if (use_counter > counter_cap) f[0] = counter_cap / use_counter;
  const double rest = total - std::min(use_counter, counter_cap);
  const double extra_budget = std::max(rest - use_power - use_tel, 0.1 * rest);
  if (use_extra > extra_budget) f[3] = extra_budget / use_extra;
  const double rest2 = rest - std::min(use_extra, extra_budget);
  const double tel_budget = std::max(rest2 - use_power, 0.2 * rest2);
  if (use_tel > tel_budget) f[2] = tel_budget / use_tel;
  const double power_budget = rest2 - std::min(use_tel, tel_budget);
  if (use_power > power_budget) f[1] = power_budget / use_power;
  return f;
}

// Within a group over its budget: the level L at which the readings' uses, each cut to its weight
// times L, add up to the budget (water-filling). Cheap readings under it keep their rates and the
// dear ones share the rest: scaling every reading by the same factor cut the H200's SM clock,
// temperature and clock-event reasons (~8 us a read) to 0.3 reads a second because the GPM metrics
// and violation counters (0.2-2 ms) were dear. A read that delivers several readings (NVML's GPM:
// four) weighs as many. `use` (share, weight) is reordered. Infinity when everything fits.
inline double water_level(std::vector<std::pair<double, double>>& use, double budget) {
  double total = 0, weights = 0;
  for (const auto& [u, w] : use) {
    total += u;
    weights += w;
  }
  if (total <= budget) return std::numeric_limits<double>::infinity();
  // By use per unit of weight (u/w), without dividing.
  std::sort(use.begin(), use.end(),
            [](const auto& a, const auto& b) { return a.first * b.second < b.first * a.second; });
  double below = 0;  // sum of the uses under the level
  for (const auto& [u, w] : use) {
    const double level = (budget - below) / weights;
    if (level * w <= u) return std::max(level, 0.0);
    below += u;
    weights -= w;
  }
  return std::numeric_limits<double>::infinity();
}
inline double water_level(std::vector<double>& use, double budget) {
  std::vector<std::pair<double, double>> weighted;
  for (double u : use) weighted.emplace_back(u, 1.0);
  return water_level(weighted, budget);
}

// Real time only: keeps the sampler thread's whole CPU (reads, waking up, bookkeeping, the counter
// grid's free start-up probe) under its target by lowering the share the reads may use by what
// the rest has cost since the start, and by any excess over the target so far. On the H200 host
// the reads held their 0.8 % while the thread used 1.12 % (docs/results/overhead.md): the rest is
// not negligible on a VM.
class ThreadCpuGovernor {
 public:
  // thread_share: the target for the whole thread (<= 0: off); read_share: the reads' share when
  // the rest costs nothing, and never lowered below half of it (a busy host then misses the target
  // rather than starve the energy readings).
  ThreadCpuGovernor(double thread_share, double read_share) : thread_share_(thread_share), read_share_(read_share) {}

  void start(int64_t now_ns, int64_t thread_cpu_ns) {
    t0_ns_ = now_ns;
    cpu0_ns_ = thread_cpu_ns;
    started_ = true;
  }
  // The thread's CPU so far and the read time charged to the budgets so far (both since start()).
  void observe(int64_t now_ns, int64_t thread_cpu_ns, int64_t charged_read_ns) {
    if (!started_) return;
    // The first seconds would overstate the rate (the probe's reads come all at once): average
    // over at least kMinSpanNs.
    const double span = static_cast<double>(std::max(now_ns - t0_ns_, kMinSpanNs));
    const double cpu = static_cast<double>(thread_cpu_ns - cpu0_ns_);
    rest_share_ = std::max<double>(cpu - static_cast<double>(charged_read_ns), 0.0) / span;
    // Whatever still put the thread over its target so far (a read dearer than its first guess, a
    // bucket's savings spent at once, the start-up probe) is paid back over the next kPaybackNs:
    // on the H200 the reads ran 0.15 % over the share the rest left them (docs/results/overhead.md).
    excess_share_ = thread_share_ > 0 ? std::max(cpu - thread_share_ * span, 0.0) / static_cast<double>(kPaybackNs) : 0;
  }
  double rest_share() const { return rest_share_; }
  double excess_share() const { return excess_share_; }
  double read_share() const {
    if (!started_ || thread_share_ <= 0 || read_share_ <= 0) return read_share_;
    return std::clamp(thread_share_ - rest_share_ - excess_share_, 0.5 * read_share_, read_share_);
  }

 private:
  static constexpr int64_t kMinSpanNs = 10'000'000'000;
  static constexpr int64_t kPaybackNs = 10'000'000'000;
  double thread_share_;
  double read_share_;
  bool started_ = false;
  int64_t t0_ns_ = 0;
  int64_t cpu0_ns_ = 0;
  double rest_share_ = 0;
  double excess_share_ = 0;
};

}  // namespace wattlab
