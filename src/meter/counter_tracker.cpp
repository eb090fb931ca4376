#include "counter_tracker.h"

#include <algorithm>

namespace wattlab {

CounterTracker::CounterTracker(int64_t update_period_ns, int64_t interval_ns, bool on_grid)
    : update_ns_(update_period_ns),
      interval_ns_(interval_ns),
      on_grid_(on_grid),
      grid_(update_period_ns),
      probe_free_(on_grid) {}

CounterNext CounterTracker::on_read(const CounterRead& r) { return on_grid_ ? grid_read(r) : plain_read(r); }

void CounterTracker::on_failed_read() {
  // A locked grid stays: the next read is placed on it, and the next check bracket tests it.
  // Probing back to back after every failure (a spell of errors or stalls) left the budget in
  // debt for tens of seconds, and the counter unread.
  phase_ = on_grid_ && grid_.locked() ? CounterPhase::locked : CounterPhase::probing;
  have_probe_ = false;
}

int64_t CounterTracker::take_hint(int64_t lo_ns, int64_t hi_ns, int64_t now_ns, double read_cost_ns) {
  hint_at_ns_ = lo_ns;
  hint_width_ns_ = hi_ns - lo_ns;
  // Reads back to back from a read and a half before the hinted span: the first read's midpoint
  // stays before the span even when reads take 2.5 times their mean cost (a loaded VM: 8-13 ms
  // where the H200's cost is 4.2 ms), and the third read at the latest is past it. Centred on the
  // span, the first read came after it on such a VM as often as not, and half the boards fell
  // back to the coarse probe.
  hint_lead_ns_ = static_cast<int64_t>(1.5 * read_cost_ns);
  coarse_probe_ = false;
  return hinted_start(now_ns);
}

int64_t CounterTracker::hinted_start(int64_t now_ns) {
  while (hint_at_ns_ - hint_lead_ns_ < now_ns) hint_at_ns_ += update_ns_;
  hint_until_ns_ = hint_at_ns_ + hint_width_ns_ + 2 * hint_lead_ns_;
  hint_first_pending_ = true;
  return hint_at_ns_ - hint_lead_ns_;
}

std::optional<int64_t> CounterTracker::put_off_hinted_read(int64_t now_ns) {
  if (!hint_first_pending_ || hint_until_ns_ == INT64_MIN || hint_put_offs_ >= kHintPutOffs) return std::nullopt;
  if (now_ns <= hint_at_ns_ - hint_lead_ns_ + kHintSlackNs) return std::nullopt;
  ++hint_put_offs_;
  return hinted_start(now_ns);
}

std::optional<int64_t> CounterTracker::grid_slot(int64_t earliest_ns, int64_t align_ns) const {
  if (!on_grid_ || !grid_.locked()) return std::nullopt;
  int64_t s = grid_.update_at_or_before(earliest_ns - align_ns) + align_ns;
  if (s < earliest_ns) s += grid_.period_ns();
  return s;
}

CounterNext CounterTracker::plain_read(const CounterRead& r) {
  CounterNext n;
  const int64_t mid = r.mid_ns;
  if (!have_probe_ || r.value != probe_value_) {
    // The value belongs to the newest update, somewhere in (mid - update, mid] and after the
    // previous read if that one saw another value.
    int64_t lo = mid - update_ns_;
    if (have_probe_) lo = std::max(lo, probe_t_ns_);
    value_seen_t_ns_ = mid;
    last_point_t_ns_ = lo + (mid - lo) / 2;
    n.point = CounterPlacement{r.value, last_point_t_ns_, std::max<int64_t>((mid - lo) / 2, r.dur_ns / 2)};
  } else if (mid - update_ns_ > value_seen_t_ns_ && mid - update_ns_ > last_point_t_ns_) {
    // Unchanged, and the counter has published since this value first appeared: no energy
    // reached it up to that update, which lies in (mid - update, mid]. Saying so keeps an idle
    // zone's timeline moving; without it, a window ending after the last change would find
    // no counter point beyond its edge.
    last_point_t_ns_ = mid - update_ns_;
    n.point = CounterPlacement{r.value, last_point_t_ns_, std::max<int64_t>(r.dur_ns / 2, 1)};
  }
  have_probe_ = true;
  probe_value_ = r.value;
  probe_t_ns_ = mid;
  n.next_ns = mid + interval_ns_;
  return n;
}

CounterNext CounterTracker::grid_read(const CounterRead& r) {
  CounterNext n;
  hint_first_pending_ = false;
  if (probe_free_ && ++free_reads_ >= kFreeProbeReads) probe_free_ = false;
  const int64_t mid = r.mid_ns;
  CounterGrid& g = grid_;
  if (r.dur_ns > update_ns_ / kSlowReadDivisor) {
    // When inside the read the value was taken is unknown: no placement, and no bracket from it.
    // A hinted probe starts again at the hinted instant one period on (a slow read counts as one
    // of its tries); on a locked grid the read is made again just after the next update; else at
    // once while the probe is free, and when the budget allows once it is paid for.
    on_failed_read();
    if (hint_until_ns_ != INT64_MIN && ++hint_misses_ >= kHintTries) {
      coarse_probe_ = true;
      hint_until_ns_ = INT64_MIN;
    }
    if (hint_until_ns_ != INT64_MIN)
      n.next_ns = hinted_start(r.now_ns);
    else
      n.next_ns = phase_ == CounterPhase::locked ? g.next_update_after(r.now_ns) +
                                                       std::max<int64_t>(2 * g.uncertainty_ns(), 2'000'000) +
                                                       static_cast<int64_t>(r.cost_ns)
                                                 : r.now_ns;
    n.pace_next = phase_ != CounterPhase::locked && hint_until_ns_ == INT64_MIN && !probe_free_;
    return n;
  }
  // A read may take longer than the last one did (H200: 3 ms median, 15 ms p99): allow for the
  // longer of the last and the mean.
  const int64_t margin = std::max<int64_t>(2 * g.uncertainty_ns(), 2'000'000) +
                         std::max<int64_t>(r.dur_ns, static_cast<int64_t>(r.cost_ns));
  // The same value as the previous read on the grid, a whole interval of several updates ago: the
  // counter stopped publishing. The grid stays (a stuck counter keeps its timer); the reads go on at
  // the interval, and nothing is placed until the value moves. Then it is the newest update's.
  const bool can_freeze = interval_ns_ >= kStaleUpdates * update_ns_;
  if ((phase_ == CounterPhase::locked || phase_ == CounterPhase::stale) && can_freeze && have_locked_value_ &&
      r.value == locked_value_) {
    phase_ = CounterPhase::stale;
    n.next_ns = g.update_at_or_before(mid + interval_ns_) + margin;
    n.align_ns = margin;
    return n;
  }
  if (phase_ == CounterPhase::stale) {
    phase_ = CounterPhase::locked;
    reads_since_bracket_ = 0;
  }
  if (phase_ == CounterPhase::checking) {
    if (r.value == probe_value_ && mid - probe_t_ns_ >= update_ns_) {
      // No update across a whole period: stuck, not drifted. The grid it had stays.
      g.relock();
      phase_ = CounterPhase::stale;
      have_locked_value_ = true;
      locked_value_ = r.value;
      n.next_ns = g.update_at_or_before(mid + interval_ns_) + margin;
      n.align_ns = margin;
      return n;
    }
    // It moved: the grid drifted; probe back to back from here.
    phase_ = CounterPhase::probing;
    have_probe_ = true;
    probe_value_ = r.value;
    probe_t_ns_ = mid;
    n.next_ns = r.now_ns;
    n.pace_next = false;
    return n;
  }
  if (phase_ == CounterPhase::locked) {
    // A read that came late (the sampler was held up by other reads) and sits on a predicted
    // update, to within the read's half-length and the grid's uncertainty, may hold that update's
    // value or the one before: a period's energy either way. It is not placed, and is made again
    // just after the next update, or the first such slot the budget allows (a sampler held up
    // again and again must not turn into a read every period). Only while the guard is under a
    // quarter period: a read made where it was planned (margin after an update) then always lies
    // outside it. A grid known less well than that places every read with its wide uncertainty
    // instead.
    const int64_t u0 = g.update_at_or_before(mid);
    const int64_t guard = r.dur_ns / 2 + std::max<int64_t>(2 * g.uncertainty_ns(), 2'000'000);
    if (4 * guard <= g.period_ns() && (mid - u0 < guard || u0 + g.period_ns() - mid < guard)) {
      n.next_ns = g.next_update_after(r.now_ns) + margin;
      n.align_ns = margin;
      return n;
    }
    have_locked_value_ = true;
    locked_value_ = r.value;
    n.point = CounterPlacement{r.value, u0, g.uncertainty_ns()};
    if (++reads_since_bracket_ >= kBracketEvery) {
      // Next time: one read just before the update, one just after.
      phase_ = CounterPhase::bracketing;
      have_probe_ = false;
      n.next_ns = g.update_at_or_before(mid + interval_ns_) - margin;
      n.align_ns = -margin;
    } else {
      n.next_ns = g.update_at_or_before(mid + interval_ns_) + margin;
      n.align_ns = margin;
    }
    return n;
  }
  // Probing or bracketing: a change since the previous read pins the update between them.
  // A probe's bracket wider than two reads (the start-up probe's coarse steps, or a read held up:
  // an H200 counter read under load took 104 ms, and a probe once waited 44 ms between two reads)
  // would lock the grid only that well, and check brackets never narrow it. The value is placed in
  // it, and one period later reads back to back from just before it pin the update down: the value
  // just read holds until then, so that stretch starts as the probe.
  const int64_t read_ns = std::max<int64_t>(static_cast<int64_t>(r.cost_ns), 1'000'000);
  const int64_t narrow_ns = 2 * read_ns + 1'000'000;
  const bool changed = have_probe_ && r.value != probe_value_;
  if (changed) hint_until_ns_ = INT64_MIN;  // the probe found an update: the hint has served
  if (changed && phase_ == CounterPhase::probing && mid - probe_t_ns_ > narrow_ns && fine_tries_ < kFineTries) {
    const int64_t lo = probe_t_ns_;
    n.point = CounterPlacement{r.value, lo + (mid - lo) / 2, (mid - lo) / 2};
    ++fine_tries_;
    coarse_probe_ = false;
    probe_value_ = r.value;
    probe_t_ns_ = lo + g.period_ns();
    n.next_ns = lo + g.period_ns() - std::max<int64_t>(r.dur_ns, 1'000'000) - 1'000'000;
    n.pace_next = false;
  } else if (changed) {
    coarse_probe_ = false;
    fine_tries_ = 0;
    g.add_bracket(std::min(probe_t_ns_, mid - 1), mid);  // a read slower than its midpoint says
    n.point = CounterPlacement{r.value, g.update_at_or_before(mid), g.uncertainty_ns()};
    phase_ = CounterPhase::locked;
    have_probe_ = false;
    reads_since_bracket_ = 0;
    probe_free_ = false;  // start-up is over: from here on every read is paid for
    n.next_ns = g.update_at_or_before(mid + interval_ns_) + margin;
    n.align_ns = margin;
  } else if (phase_ == CounterPhase::bracketing && have_probe_) {
    // No change across the predicted update: the grid drifted, or the counter stopped publishing.
    // One read a period later tells them apart before probing back to back, which on a stuck
    // counter would read until it moves again and leave the budget in debt for a minute.
    g.unlock();
    phase_ = can_freeze ? CounterPhase::checking : CounterPhase::probing;
    probe_value_ = r.value;
    probe_t_ns_ = mid;
    n.next_ns = can_freeze ? mid + update_ns_ + update_ns_ / 4 : r.now_ns;
    n.pace_next = false;  // part of the check; probing reads back to back, and the budget's debt delays the reads after
  } else {
    have_probe_ = true;
    probe_value_ = r.value;
    probe_t_ns_ = mid;
    // A hinted probe past the hinted instant without a change: the first read came too late (a
    // read slower than its mean cost), or the hint was wrong. Once more from further before it,
    // one period on; then probe coarsely.
    if (phase_ == CounterPhase::probing && hint_until_ns_ != INT64_MIN && mid > hint_until_ns_) {
      if (++hint_misses_ < kHintTries) {
        hint_lead_ns_ += std::max<int64_t>(r.dur_ns, static_cast<int64_t>(r.cost_ns));
        n.next_ns = hinted_start(r.now_ns);
        n.pace_next = false;
        return n;
      }
      coarse_probe_ = true;
      hint_until_ns_ = INT64_MIN;
    }
    // Probing: coarse steps at start-up, then reads back to back; a bracket's second read lands
    // just after the update.
    n.next_ns = phase_ == CounterPhase::bracketing ? g.next_update_after(mid) + margin
                : coarse_probe_                    ? mid + kCoarseProbeStepNs
                                                   : r.now_ns;
    n.pace_next = false;  // a probe, or a bracket's second read: both belong to the first
  }
  return n;
}

}  // namespace wattlab
