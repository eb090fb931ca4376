#include "live_state.h"

#include <algorithm>
#include <utility>

#include "plausible.h"

namespace wattlab {
namespace {

// The live energy past the counter point at counter_t_ns, to the newest power reading, or, where
// the instant power has a hole since the point (its reads put off past two refreshes by the
// budget), to the end of the sample buffer, which the budget never leaves unread past its depth.
// False where neither extends it.
bool extend_past_counter(const Timeline& t, int64_t counter_t_ns, DomainLive& l) {
  for (const int64_t t_power : {t.newest_power_ns(), t.newest_sample_ns()}) {
    if (t_power <= counter_t_ns) continue;
    const EdgeEstimate e = t.energy_at(t_power);
    if (!e.ok) continue;
    l.energy_ok = true;
    l.energy_j = e.energy_j;
    l.energy_t_ns = t_power;
    l.energy_estimator = to_string(e.estimator);
    return true;
  }
  return false;
}

}  // namespace

LiveState::LiveState(const std::vector<Domain>& domains, std::size_t export_capacity, int64_t start_ns)
    : export_capacity_(export_capacity), start_ns_(start_ns) {
  for (const Domain& d : domains) domain_ids_.push_back(d.id);
  live_.resize(domains.size());
  accum_.resize(domains.size());
  fail_streak_.assign(domains.size() * kReadingKindCount, 0);
}

LiveState::Outcome LiveState::record(uint32_t d, ReadingKind kind, const Status& st, int64_t mid,
                                     std::span<const Reading> readings, Timeline& tl, DomainState& state) {
  int& streak = fail_streak_[d * kReadingKindCount + static_cast<std::size_t>(kind)];
  ReadingHealth& health = live_[d].readings[static_cast<std::size_t>(kind)];
  // Nonsense values (NaN, an all-ones register) are dropped; a read that returned nothing else failed.
  std::size_t n_bad = 0;
  for (const Reading& r : readings) n_bad += plausible(r) ? 0 : 1;
  if (!st.ok() || n_bad > 0) {
    const auto bad = std::find_if(readings.begin(), readings.end(), [](const Reading& r) { return !plausible(r); });
    ++health.read_errors;
    health.last_error_ns = mid;
    health.last_error = !st.ok() ? st.error().message()
                                 : "implausible value " + std::to_string(bad->value) + " of " +
                                       std::string(to_string(bad->kind)) + " dropped";
    tl.add_failure(mid, kind);
    if (!st.ok() && st.error().kind == ErrorKind::device_lost) {
      state = {true, mid};
      event(mid, d, kind, "device_lost", st.error().message());
      return Outcome::lost;
    }
    if (!st.ok() || n_bad == readings.size()) {
      if (streak++ == 0) event(mid, d, kind, "read_error", health.last_error);
      return Outcome::failed;
    }
  }
  if (streak > 0) {
    event(mid, d, kind, "recovered", "reads work again after " + std::to_string(streak) + " failure(s)");
    streak = 0;
  }
  ++health.reads_ok;
  health.last_ok_ns = mid;
  if (!readings.empty() && plausible(readings.back())) health.latest = readings.back();
  for (const Reading& r : readings) {
    if (!plausible(r)) continue;
    export_reading(d, r);
    if (r.kind == ReadingKind::energy_counter_j) continue;  // CounterTracker places it
    if (r.kind == ReadingKind::power_sample_w) tl.add_sample(r);
    else if (r.kind == ReadingKind::power_instant_w) tl.add_instant(r);
    else tl.add_other(r);
  }
  return Outcome::ok;
}

void LiveState::count_read(int64_t t0_ns, int64_t dur_ns, const int64_t* late_ns) {
  stats_.read_ns += dur_ns;
  if (late_ns) {
    const int64_t late = std::max<int64_t>(*late_ns, 0);  // a coalesced read comes early
    const auto& bounds = SamplerStats::kLatenessBoundsNs;
    const auto it = std::lower_bound(bounds.begin(), bounds.end(), late);
    ++stats_.lateness_counts[static_cast<std::size_t>(it - bounds.begin())];
    ++stats_.reads;
    stats_.lateness_sum_s += static_cast<double>(late) * 1e-9;
    stats_.lateness_max_ns = std::max(stats_.lateness_max_ns, late);
  }
  stats_.newest_read_ns = t0_ns;
}

void LiveState::counter_reset(uint32_t d, int64_t t_ns, std::string message) {
  ++live_[d].counter_resets;
  event(t_ns, d, ReadingKind::energy_counter_j, "counter_reset", std::move(message));
}

void LiveState::event(int64_t t_ns, uint32_t d, ReadingKind k, std::string kind, std::string message) {
  events_.push_back({t_ns, domain_ids_[d], std::string(to_string(k)), std::move(kind), std::move(message)});
}

void LiveState::export_reading(uint32_t d, const Reading& r) {
  if (export_.size() >= export_capacity_) {
    export_.erase(export_.begin(), export_.begin() + static_cast<long>(export_.size() / 4));
    export_dropped_ += export_capacity_ / 4;
  }
  export_.push_back({d, r});
}

std::size_t LiveState::drain_readings(std::vector<TimedReading>& out) {
  const std::size_t n = export_.size();
  out.insert(out.end(), export_.begin(), export_.end());
  export_.clear();
  return n;
}

// Cheap: per domain one counter lookup and the power readings since last time.
MeterSnapshot LiveState::snapshot(const DomainTimelines& tl, int64_t now_ns) {
  MeterSnapshot s;
  s.t_ns = now_ns;
  s.start_t_ns = start_ns_;
  s.sampler = stats_;
  s.domains = live_;
  for (std::size_t d = 0; d < tl.size(); ++d) {
    DomainLive& l = s.domains[d];
    const Timeline& t = tl.timelines[d];
    l.lost = tl.states[d].lost;
    l.lost_at_ns = tl.states[d].lost_at_ns;
    if (t.has_counter()) {
      const auto newest = t.newest_counter();
      if (!newest) continue;
      // Past the newest counter point where power readings reach: the value then belongs to about
      // now (the counter is read once a second on NVIDIA, or every few seconds where the CPU budget
      // stretches it; power every few ms). Else the counter point's own value and time.
      if (extend_past_counter(t, newest->t_ns, l)) continue;
      l.energy_ok = true;
      l.energy_j = newest->energy_j;
      l.energy_t_ns = newest->t_ns;
      l.energy_estimator = to_string(Estimator::counter);
    } else {
      PowerAccum& a = accum_[d];
      t.accumulate_power(a.to_ns, a.energy_j, a.unmeasured_ns);
      if (a.to_ns == INT64_MIN) continue;
      l.energy_ok = true;
      l.energy_j = a.energy_j;
      l.energy_t_ns = a.to_ns;
      l.unmeasured_ns = a.unmeasured_ns;
      l.energy_estimator = to_string(t.has_samples() ? Estimator::integrated_samples : Estimator::integrated_instant);
    }
  }
  return s;
}

}  // namespace wattlab
