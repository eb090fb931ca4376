// Where a cheap power field of a domain refreshes, as a hint for the energy counter's grid probe.
// NVML's instant power field costs ~9 us a read against the energy counter's ~4.2 ms; read every
// kStepNs until its value changes, it says to kStepNs where the field published. Where the field
// publishes on the counter's grid (the simulated H200: one update grid per board), the counter's
// probe then starts just before that instant one period later and locks the grid with two or
// three reads instead of 8-12; where it does not, the probe sees no change there and probes as
// without a hint (counter_tracker.h). docs/scale.md ("Sampler CPU") says what it saves.
#pragma once
#include <cstdint>
#include <optional>

namespace wattlab {

// The field changed between two reads: it published in (lo_ns, hi_ns].
struct RefreshBracket {
  int64_t lo_ns = 0;
  int64_t hi_ns = 0;
};

class RefreshHint {
 public:
  // Reads of the field this far apart (midpoint to midpoint) place its refresh to this much.
  static constexpr int64_t kStepNs = 2'000'000;
  // A change across reads further apart than this (a read held up) says too little: the search
  // goes on from the newer read.
  static constexpr int64_t kMaxGapNs = 3 * kStepNs;

  // The search gives up after this many periods without a change seen a step apart: a field that
  // holds its value (a constant power and no noise), or a sampler so busy with other boards'
  // counter reads (4-13 ms each) that its reads of the field keep coming too far apart.
  static constexpr int kGiveUpPeriods = 5;

  // period_ns: the field's update period.
  explicit RefreshHint(int64_t period_ns) : period_ns_(period_ns) {}

  bool searching() const { return searching_; }
  // One read of the field: its value and the read's midpoint. Returns when to read it next while
  // searching() (the time of the next read's start).
  int64_t on_read(double value, int64_t mid_ns);
  // A read failed, or the field is not there: no hint; the counter probes without one.
  void give_up() { searching_ = false; }
  // Where the field published, once the search found it.
  const std::optional<RefreshBracket>& bracket() const { return bracket_; }

 private:
  int64_t period_ns_;
  bool searching_ = true;
  bool have_ = false;
  double value_ = 0;
  int64_t mid_ns_ = 0;
  int64_t first_ns_ = 0;
  std::optional<RefreshBracket> bracket_;
};

}  // namespace wattlab
