// The energy counter's tracker on virtual time: a scripted counter that publishes on a known grid,
// read whenever the tracker asks, so every placement can be checked against the true update.
#include "meter/counter_tracker.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace wattlab {
namespace {

// A counter that publishes every period_ns from phase_ns on; a read takes read_ns and sees the
// value of the newest update before its midpoint. The tracker decides when to read.
struct ScriptedCounter {
  int64_t period_ns = 100'000'000;
  int64_t phase_ns = 37'000'000;
  int64_t read_ns = 4'000'000;
  int64_t stall_from_ns = 0, stall_to_ns = 0;  // no update published in [from, to)
  int64_t shift_at_ns = INT64_MAX, shift_ns = 0;  // from shift_at on, the updates come shift_ns later

  int64_t phase_at(int64_t t_ns) const { return t_ns >= shift_at_ns ? phase_ns + shift_ns : phase_ns; }
  double value_at(int64_t t_ns) const {
    if (t_ns >= stall_from_ns && t_ns < stall_to_ns) t_ns = stall_from_ns;
    return std::floor(static_cast<double>(t_ns - phase_at(t_ns)) / static_cast<double>(period_ns));
  }
  int64_t update_at_or_before(int64_t t_ns) const {
    const int64_t p = phase_at(t_ns);
    return p + static_cast<int64_t>(std::floor(static_cast<double>(t_ns - p) / static_cast<double>(period_ns))) *
                   period_ns;
  }
};

struct Step {
  int64_t start_ns;
  CounterPhase phase_before;
  CounterNext next;
};

// Reads from t0 until `until_ns` at the instants the tracker asks for.
std::vector<Step> drive(CounterTracker& tr, const ScriptedCounter& c, int64_t t0, int64_t until_ns) {
  std::vector<Step> steps;
  int64_t t = t0;
  while (t < until_ns) {
    const int64_t mid = t + c.read_ns / 2;
    const CounterPhase before = tr.phase();
    const CounterNext n = tr.on_read({c.value_at(mid), mid, c.read_ns, t + c.read_ns, static_cast<double>(c.read_ns)});
    steps.push_back({t, before, n});
    t = std::max(n.next_ns, t + c.read_ns);  // reads do not overlap
  }
  return steps;
}

TEST(CounterTracker, StartUpProbeLocksWithFewReadsAndPlacesValuesOnTheUpdates) {
  for (int64_t phase_ms : {3, 37, 71, 99}) {
    ScriptedCounter c;
    c.phase_ns = phase_ms * 1'000'000;
    CounterTracker tr(c.period_ns, 1'000'000'000, /*on_grid=*/true);
    EXPECT_TRUE(tr.probe_free());
    const auto steps = drive(tr, c, 0, 500'000'000);
    // Probing reads carry no offset from an update; the read that locks the grid is the first that does.
    int to_lock = 0;
    for (const Step& s : steps) {
      ++to_lock;
      if (s.next.align_ns != 0) break;
    }
    EXPECT_LE(to_lock, 14) << "phase " << phase_ms << " ms";
    EXPECT_TRUE(tr.grid().locked());
    EXPECT_FALSE(tr.probe_free()) << "start-up is over once the grid locks";
    // The grid sits on the true updates, to within a read.
    EXPECT_LE(std::llabs(tr.grid().update_at_or_before(450'000'000) - c.update_at_or_before(450'000'000)),
              c.read_ns)
        << "phase " << phase_ms << " ms";
  }
}

TEST(CounterTracker, LockedReadsComeJustAfterAnUpdateAndEveryFifthBrackets) {
  ScriptedCounter c;
  CounterTracker tr(c.period_ns, 1'000'000'000, true);
  const auto steps = drive(tr, c, 0, 30'000'000'000);
  std::vector<int> locked_between;  // locked reads between two brackets
  int locked = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const int64_t mid = s.start_ns + c.read_ns / 2;
    if (s.phase_before == CounterPhase::locked) {
      ++locked;
      ASSERT_TRUE(s.next.point.has_value());
      // Each placement is the true update instant, within the grid's stated uncertainty plus a read.
      EXPECT_LE(std::llabs(s.next.point->t_ns - c.update_at_or_before(mid)), s.next.point->sigma_ns + c.read_ns);
      // The next read sits after an update (or, when a bracket is due, before one).
      EXPECT_NE(s.next.align_ns, 0);
    }
    if (s.phase_before == CounterPhase::bracketing && !s.next.point) {
      // A bracket: this read just before an update, the next just after it.
      ASSERT_LT(i + 1, steps.size());
      const int64_t next_mid = steps[i + 1].start_ns + c.read_ns / 2;
      EXPECT_EQ(c.update_at_or_before(mid) + c.period_ns, c.update_at_or_before(next_mid));
      EXPECT_TRUE(steps[i + 1].next.point.has_value());
      locked_between.push_back(locked);
      locked = 0;
    }
  }
  ASSERT_GE(locked_between.size(), 4u);
  for (std::size_t i = 1; i < locked_between.size(); ++i) EXPECT_EQ(locked_between[i], CounterTracker::kBracketEvery);
}

TEST(CounterTracker, AStuckCounterIsReadAtItsIntervalAndItsStaleValueIsNotPlaced) {
  // The counter stops publishing for 7 s (a bracket falls inside), then goes on on the same grid.
  ScriptedCounter c;
  c.stall_from_ns = 3'000'000'000;
  c.stall_to_ns = c.phase_ns + 100 * c.period_ns;  // it resumes with an update
  CounterTracker tr(c.period_ns, 1'000'000'000, true);
  const auto steps = drive(tr, c, 0, 20'000'000'000);
  const double stuck_value = c.value_at(c.stall_from_ns);
  int reads_stuck = 0, placed_stuck = 0, stale_reads = 0;
  for (const Step& s : steps) {
    if (s.start_ns < c.stall_from_ns + c.period_ns || s.start_ns >= c.stall_to_ns) continue;
    ++reads_stuck;
    EXPECT_NE(s.phase_before, CounterPhase::probing) << "a stuck counter is not probed back to back";
    if (s.phase_before == CounterPhase::stale) ++stale_reads;
    if (s.next.point && s.next.point->value == stuck_value) ++placed_stuck;
  }
  // One read a second, a bracket's two and the check a period later; the value that stuck is placed
  // once at most (the first read of it cannot tell it is stale), never again.
  EXPECT_LE(reads_stuck, 11);
  EXPECT_GE(stale_reads, 4);
  EXPECT_LE(placed_stuck, 1);
  // Locked again, on the true updates, and the first value after the stall placed on its update.
  EXPECT_EQ(tr.phase(), CounterPhase::locked);
  EXPECT_LE(std::llabs(tr.grid().update_at_or_before(19'000'000'000) - c.update_at_or_before(19'000'000'000)),
            c.read_ns);
  for (const Step& s : steps)
    if (s.start_ns >= c.stall_to_ns && s.next.point) {
      EXPECT_EQ(s.next.point->value, c.value_at(s.start_ns + c.read_ns / 2));
      EXPECT_LE(std::llabs(s.next.point->t_ns - c.update_at_or_before(s.start_ns + c.read_ns / 2)), c.read_ns);
      break;
    }
}

TEST(CounterTracker, ABracketThatSeesNoUpdateOnAGridThatMovedProbesAgain) {
  // From 3 s on the updates come 45 ms later: a bracket sees no update, the check a period later
  // sees the counter moving, and the probe reads back to back to find the grid again.
  ScriptedCounter c;
  c.shift_at_ns = 3'000'000'000;
  c.shift_ns = 45'000'000;
  CounterTracker tr(c.period_ns, 1'000'000'000, true);
  const auto steps = drive(tr, c, 0, 20'000'000'000);
  int reprobes = 0;
  for (std::size_t i = 0; i + 1 < steps.size(); ++i)
    if (steps[i].phase_before == CounterPhase::checking) {
      EXPECT_EQ(steps[i + 1].phase_before, CounterPhase::probing);
      EXPECT_FALSE(steps[i].next.pace_next) << "a probe reads back to back";
      ++reprobes;
    }
  EXPECT_GE(reprobes, 1);
  EXPECT_EQ(tr.phase(), CounterPhase::locked);
  EXPECT_LE(std::llabs(tr.grid().update_at_or_before(19'000'000'000) - c.update_at_or_before(19'000'000'000)),
            c.read_ns);
}

TEST(CounterTracker, AFailedReadKeepsALockedGridAndProbesWithoutOne) {
  ScriptedCounter c;
  CounterTracker tr(c.period_ns, 1'000'000'000, true);
  tr.on_failed_read();  // before the grid is found: probing goes on
  EXPECT_EQ(tr.phase(), CounterPhase::probing);
  drive(tr, c, 0, 2'000'000'000);
  ASSERT_EQ(tr.phase(), CounterPhase::locked);
  tr.on_failed_read();
  EXPECT_EQ(tr.phase(), CounterPhase::locked) << "a failed read does not probe a locked grid back to back";
  EXPECT_FALSE(tr.probe_free()) << "only the start-up probe is free";
  // The next read, late and off its slot, is placed on the true update before it.
  const int64_t t = 2'345'000'000, mid = t + c.read_ns / 2;
  const CounterNext n = tr.on_read({c.value_at(mid), mid, c.read_ns, t + c.read_ns, static_cast<double>(c.read_ns)});
  ASSERT_TRUE(n.point.has_value());
  EXPECT_LE(std::llabs(n.point->t_ns - c.update_at_or_before(mid)), c.read_ns);
}

TEST(CounterTracker, SlowReadsWhileProbingAreFreeForAFewReadsThenPaced) {
  ScriptedCounter c;
  c.read_ns = 30'000'000;  // past a quarter of the 100 ms period: nothing it reads is placed
  CounterTracker tr(c.period_ns, 1'000'000'000, true);
  int64_t t = 0;
  for (int i = 1; i <= 2 * CounterTracker::kFreeProbeReads; ++i) {
    const int64_t mid = t + c.read_ns / 2;
    const CounterNext n = tr.on_read({c.value_at(mid), mid, c.read_ns, t + c.read_ns, 4e6});
    EXPECT_FALSE(n.point.has_value()) << "read " << i;
    EXPECT_EQ(tr.phase(), CounterPhase::probing) << "read " << i;
    EXPECT_EQ(tr.probe_free(), i < CounterTracker::kFreeProbeReads) << "read " << i;
    EXPECT_EQ(n.pace_next, !tr.probe_free()) << "read " << i << ": a paid probe's retry waits for the budget";
    t = std::max(n.next_ns, t + c.read_ns);
  }
  // Fast reads again: the probe goes on and locks the grid on the true updates.
  c.read_ns = 4'000'000;
  drive(tr, c, t, t + 1'000'000'000);
  ASSERT_TRUE(tr.grid().locked());
  EXPECT_LE(std::llabs(tr.grid().update_at_or_before(t + 900'000'000) - c.update_at_or_before(t + 900'000'000)),
            c.read_ns);
}

TEST(CounterTracker, ALateReadOnAPredictedUpdateIsNotPlacedAndIsMadeAgainAfterIt) {
  ScriptedCounter c;
  CounterTracker tr(c.period_ns, 1'000'000'000, true);
  drive(tr, c, 0, 2'000'000'000);
  ASSERT_EQ(tr.phase(), CounterPhase::locked);
  // The sampler was held up: the read comes 100 ms late, its midpoint just before an update of
  // the grid. Which value it saw is unknown to within the grid's uncertainty.
  const int64_t update = tr.grid().update_at_or_before(2'450'000'000);
  for (int64_t off_ns : {-300'000, 0, 1'000'000}) {
    const int64_t mid = update + c.period_ns + off_ns;
    const CounterNext n =
        tr.on_read({c.value_at(mid), mid, c.read_ns, mid + c.read_ns / 2, static_cast<double>(c.read_ns)});
    EXPECT_FALSE(n.point.has_value()) << "midpoint " << static_cast<double>(off_ns) / 1e6 << " ms from an update";
    EXPECT_GT(n.next_ns, update + c.period_ns) << "made again after that update";
    EXPECT_EQ(tr.phase(), CounterPhase::locked);
  }
  // Halfway between updates the same late read is placed on the update before it.
  const int64_t mid = update + c.period_ns / 2;
  const CounterNext n = tr.on_read({c.value_at(mid), mid, c.read_ns, mid + c.read_ns / 2, static_cast<double>(c.read_ns)});
  ASSERT_TRUE(n.point.has_value());
  EXPECT_LE(std::llabs(n.point->t_ns - c.update_at_or_before(mid)), c.read_ns);
}

TEST(CounterTracker, GridSlotKeepsTheOffsetFromAnUpdate) {
  ScriptedCounter c;
  CounterTracker tr(c.period_ns, 1'000'000'000, true);
  EXPECT_FALSE(tr.grid_slot(123'000'000, 5'000'000).has_value()) << "no grid yet";
  drive(tr, c, 0, 2'000'000'000);
  const auto slot = tr.grid_slot(5'050'000'000, 5'000'000);
  ASSERT_TRUE(slot.has_value());
  EXPECT_GE(*slot, 5'050'000'000);
  EXPECT_LT(*slot, 5'050'000'000 + c.period_ns);
  EXPECT_EQ(*slot - tr.grid().update_at_or_before(*slot), 5'000'000);
}

TEST(CounterTracker, ACheapCounterIsPlacedInTheSpanItCanHaveBeenPublishedIn) {
  // RAPL-like: updates every 1 ms, read every 20 ms, a read costs 2 us.
  CounterTracker tr(1'000'000, 20'000'000, /*on_grid=*/false);
  EXPECT_FALSE(tr.probe_free());
  CounterNext n = tr.on_read({10.0, 100'000'000, 2'000, 100'001'000, 2'000});
  ASSERT_TRUE(n.point.has_value());
  // Somewhere in (mid - update, mid]: the middle of that span.
  EXPECT_EQ(n.point->t_ns, 99'500'000);
  EXPECT_EQ(n.point->sigma_ns, 500'000);
  EXPECT_EQ(n.next_ns, 120'000'000);
  EXPECT_TRUE(n.pace_next);
  // A new value: after the previous read and within one update of this one.
  n = tr.on_read({11.0, 120'000'000, 2'000, 120'001'000, 2'000});
  ASSERT_TRUE(n.point.has_value());
  EXPECT_EQ(n.point->t_ns, 119'500'000);
  // Unchanged a whole update after it first appeared: no energy arrived up to that update.
  n = tr.on_read({11.0, 140'000'000, 2'000, 140'001'000, 2'000});
  ASSERT_TRUE(n.point.has_value());
  EXPECT_EQ(n.point->value, 11.0);
  EXPECT_EQ(n.point->t_ns, 139'000'000);
}

}  // namespace
}  // namespace wattlab
