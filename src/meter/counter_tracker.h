// Where each value of an energy counter belongs in time, and when to read the counter next.
// A dear counter (H200: 3-4 ms a read) is read on its update grid (counter_grid.h): probing finds
// the grid, then one read just after an update per interval, and every kBracketEvery-th time a
// bracket (one read just before the predicted update, one just after) checks that the grid still
// holds. A cheap counter (RAPL) is read at plain intervals and each value placed in the span where
// it can have been published. docs/estimators.md says why and what it costs.
#pragma once
#include <cstdint>
#include <optional>

#include "counter_grid.h"

namespace wattlab {

enum class CounterPhase {
  probing,     // reading until the value changes, to find (again) where the counter publishes
  locked,      // one read per interval, just after an update of the grid
  bracketing,  // a check: the first read, just before the predicted update, is done
  checking,    // a check saw no update: one read a period later tells a drifted grid from a stuck counter
  stale,       // the counter stopped publishing: read on the grid at the interval, nothing placed, until it moves
};

// One successful read of the counter.
struct CounterRead {
  double value = 0;
  int64_t mid_ns = 0;   // midpoint of the read call
  int64_t dur_ns = 0;   // how long the read call took
  int64_t now_ns = 0;   // when the read's step ended (the readings riding along included)
  double cost_ns = 0;   // mean cost of a read so far (the budget's estimate, this read not yet in it)
};

// A counter value and the instant it belongs to, known to +-sigma_ns.
struct CounterPlacement {
  double value = 0;
  int64_t t_ns = 0;
  int64_t sigma_ns = 0;
};

// What a read means: a value for the timeline, if any, and the next read.
struct CounterNext {
  std::optional<CounterPlacement> point;
  int64_t next_ns = 0;
  int64_t align_ns = 0;   // on the grid: the next read sits this far after (or, < 0, before) an update
  bool pace_next = true;  // false: the next read belongs to this one (a probe, a bracket's second half)
};

class CounterTracker {
 public:
  // Every Nth read on the grid brackets the update to keep the grid locked (1.2 reads per
  // interval). Every 10th was tried: the grid then drifts enough between checks that short
  // windows' uncertainty grows past 3x their error.
  static constexpr int kBracketEvery = 5;
  // The start-up probe first reads this far apart to find roughly where the counter publishes.
  static constexpr int64_t kCoarseProbeStepNs = 20'000'000;
  // A probe bracket wider than two reads is narrowed by reading across it one period later, at
  // most this many times in a row (then the grid locks on what it has, and the checks go on).
  static constexpr int kFineTries = 3;
  // A probe started from a hint (take_hint) that sees no change where the hint said is tried this
  // many times in all before the coarse probe runs.
  static constexpr int kHintTries = 2;
  static constexpr int64_t kHintSlackNs = 1'000'000;
  static constexpr int kHintPutOffs = 16;

  // A read on the grid that takes longer than this share of the update period (a latency spike:
  // H200 reads take 3 ms median, 15 ms p99) may have seen an update anywhere inside it: its value
  // is not placed; it is made again after the next update of a locked grid (probed afresh without one).
  static constexpr int64_t kSlowReadDivisor = 4;

  // The start-up probe is free for at most this many reads (it locks within 14 on a counter that
  // answers in time). Past them every read is charged to the budget, and a slow read's retry waits
  // for it: reads slower than the update period / kSlowReadDivisor (a loaded machine) place nothing
  // and would otherwise probe back to back, uncharged, for as long as the load lasts.
  static constexpr int kFreeProbeReads = 24;

  // A counter that shows the same value across this many update periods has stopped publishing
  // (stuck): its value belongs to some earlier instant and is not placed.
  static constexpr int kStaleUpdates = 3;

  // on_grid: the counter is dear and is read on its update grid; interval_ns: the configured
  // interval between reads.
  CounterTracker(int64_t update_period_ns, int64_t interval_ns, bool on_grid);

  CounterNext on_read(const CounterRead& r);
  // A failed read: the next one probes afresh (the grid, if locked, stays).
  void on_failed_read();
  // Before the first read: a cheap field of the same board published in (lo_ns, hi_ns]
  // (refresh_hint.h). The start-up probe reads back to back from just before that instant one or
  // more periods later, the first read starting at or after now_ns; returns that read's start. No
  // change by a little past it: the hint was wrong, and the coarse probe goes on from there.
  int64_t take_hint(int64_t lo_ns, int64_t hi_ns, int64_t now_ns, double read_cost_ns);
  // A hinted probe's first read that would start more than kHintSlackNs after its planned start
  // (the sampler was busy: another board's counter read) would come too late to bracket the
  // hinted instant: returns the start one or more periods on instead, at most kHintPutOffs times.
  std::optional<int64_t> put_off_hinted_read(int64_t now_ns);

  bool on_grid() const { return on_grid_; }
  CounterPhase phase() const { return phase_; }
  const CounterGrid& grid() const { return grid_; }
  // The grid's first probing, at start-up, is not charged to the budget.
  bool probe_free() const { return probe_free_; }
  // The first read at or after earliest_ns that sits align_ns from an update of the locked grid;
  // nullopt without a locked grid.
  std::optional<int64_t> grid_slot(int64_t earliest_ns, int64_t align_ns) const;

 private:
  CounterNext plain_read(const CounterRead& r);
  CounterNext grid_read(const CounterRead& r);
  // The start of the next hinted probe's first read at or after now_ns.
  int64_t hinted_start(int64_t now_ns);

  int64_t update_ns_;
  int64_t interval_ns_;
  bool on_grid_;
  CounterGrid grid_;
  CounterPhase phase_ = CounterPhase::probing;
  bool have_probe_ = false;  // the previous read's value and time are below
  double probe_value_ = 0;
  int64_t probe_t_ns_ = 0;
  int reads_since_bracket_ = 0;
  bool probe_free_;
  int free_reads_ = 0;  // reads made while the probe was free
  bool coarse_probe_ = true;  // the start-up probe's first stage: reads kCoarseProbeStepNs apart
  int fine_tries_ = 0;        // narrowing stretches since the last lock (a wide probe bracket)
  bool have_locked_value_ = false;
  double locked_value_ = 0;   // the value of the newest read placed on the locked grid
  int64_t hint_until_ns_ = INT64_MIN;  // a hinted probe that sees no change by then goes coarse
  int64_t hint_at_ns_ = 0;             // where the hint says the counter publishes (one instant)
  int64_t hint_width_ns_ = 0;          // to within this
  int64_t hint_lead_ns_ = 0;           // the first hinted read starts this long before it
  int hint_misses_ = 0;                // hinted probes that saw no change
  int hint_put_offs_ = 0;              // hinted probes put off a period (put_off_hinted_read)
  bool hint_first_pending_ = false;    // a hinted probe's first read is not yet done
  // Plain path.
  int64_t last_point_t_ns_ = INT64_MIN;  // newest point it placed
  int64_t value_seen_t_ns_ = INT64_MIN;  // when it first read the current value
};

}  // namespace wattlab
