// The simulated GPU's true power: a scripted workload whose energy is known exactly.
// Script grammar (docs/sim.md): segments separated by ';' or newlines:
//   idle DUR | step POWER DUR | periodic HIGH LOW period=DUR duty=FRACTION DUR |
//   gemm ACTIVITY DUR | cap POWER|none | loop
// e.g. "idle 1s; step 450W 2s; periodic 690W 120W period=80ms duty=0.5 3s; loop"
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wattlab::sim {

struct Segment {
  enum class Kind { idle, step, periodic, gemm } kind = Kind::idle;
  int64_t start_ns = 0;   // within one cycle of the script
  int64_t dur_ns = 0;
  double high_w = 0;      // power while on (uncapped)
  double low_w = 0;       // power while off (periodic only)
  int64_t period_ns = 0;  // periodic only
  int64_t on_ns = 0;      // periodic only: duty * period
  double activity = 0;    // 0..1: SM activity, for telemetry
  bool tensor = false;    // gemm: tensor-core work
  double cap_w = 0;       // power cap in force (0: none)
};

class Workload {
 public:
  // Throws UsageError naming the bad part of the script.
  static Workload parse(std::string_view script, double idle_w = 75.0, double board_max_w = 700.0);
  static const char* default_script();

  // True power at t (ns since the workload started), with the cap applied.
  double power_w(int64_t t_ns) const;
  // Exact true energy over [0, t_ns].
  double energy_j(int64_t t_ns) const;
  double energy_j(int64_t a_ns, int64_t b_ns) const { return energy_j(b_ns) - energy_j(a_ns); }
  // Exact time over [0, t_ns] during which the cap held power below its uncapped demand.
  int64_t capped_ns(int64_t t_ns) const;
  bool capped_at(int64_t t_ns) const;
  double uncapped_power_w(int64_t t_ns) const;
  const Segment& segment_at(int64_t t_ns) const;
  double idle_w() const { return idle_w_; }
  int64_t cycle_ns() const { return cycle_ns_; }
  bool loops() const { return loop_; }
  const std::vector<Segment>& segments() const { return segs_; }

 private:
  struct Prefix {
    double energy_j = 0;
    int64_t capped_ns = 0;
  };
  // Energy and capped time from a segment's start to `into_ns` within it.
  Prefix partial(const Segment& s, int64_t into_ns) const;
  Prefix prefix_to(int64_t t_ns) const;
  // Position within the script: index of the segment and ns into it; past the end: idle tail.
  std::vector<Segment> segs_;
  std::vector<Prefix> seg_prefix_;  // at each segment's start
  Prefix cycle_total_;
  int64_t cycle_ns_ = 0;
  bool loop_ = false;
  double idle_w_ = 75.0;
  Segment tail_;  // after a non-looping script ends: idle
};

// The longest duration a script may name, and the longest a script's cycle may last.
inline constexpr int64_t kMaxDurationNs = 10'000'000'000'000'000;   // 10^7 s
inline constexpr int64_t kMaxScriptNs = 100'000'000'000'000'000;    // 10^8 s

// "450W" -> 450; "2s", "80ms", "500us" -> ns (1 ns .. kMaxDurationNs). Throw UsageError naming the text.
double parse_power_w(std::string_view text);
int64_t parse_duration_ns(std::string_view text);

}  // namespace wattlab::sim
