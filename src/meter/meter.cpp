#include "wattlab/meter/meter.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "counter_grid.h"
#include "estimate.h"
#include "read_budget.h"
#include "timeline.h"

namespace wattlab {
namespace {

// Reads cheaper than this are taken at plain intervals; dearer counters are read on their grid.
constexpr int64_t kExpensiveReadNs = 1'000'000;
// Every Nth read of a grid-tracked counter brackets the update to keep the grid locked (a bracket
// is a second read: 1.2 reads a second at the default interval). Every 10th was tried: the grid
// then drifts enough between checks that short windows' uncertainty grows past 3x their error.
constexpr int kBracketEvery = 5;
// The start-up probe first reads this far apart to find roughly where the counter publishes.
constexpr int64_t kCoarseProbeStepNs = 20'000'000;
// A probe bracket wider than two reads is narrowed by reading across it one period later, at most
// this many times in a row (then the grid locks on what it has, and the checks go on).
constexpr int kFineTries = 3;
// At most this many window results are built per hold of the meter's lock, so that open() and
// close() on the callers' threads never wait behind a long batch.
constexpr std::size_t kFinalPerLock = 16;

struct DomainRef {
  Sensor* sensor = nullptr;
  std::size_t local = 0;
  Domain domain;
};

struct Task {
  uint32_t domain = 0;
  bool read_once = false;  // at least one read attempted (for Meter::wait_first_reads)
  uint64_t reads = 0;      // reads attempted (lateness counts from the second: the first waits for start)
  ReadingKind kind{};
  std::vector<ReadingKind> with;  // read right after kind's read, which computes them (ReadingModel::read_with)
  int64_t interval_ns = 0;
  int64_t next_ns = 0;
  // Grid-tracked counter state.
  bool grid = false;
  int phase = 0;  // 0 probing, 1 locked single read, 2 bracket: first read done
  int reads_since_bracket = 0;
  double probe_value = 0;
  int64_t probe_t_ns = 0;
  int64_t last_point_t_ns = INT64_MIN;  // newest counter point added by the plain (gridless) path
  int64_t value_seen_t_ns = INT64_MIN;  // when the plain path first read the current value
  bool have_probe = false;
  std::unique_ptr<CounterGrid> tracker;
  // CPU budget: what a read costs and how often the reading may be read.
  ReadBudget budget;
  double reads_per_slot = 1;  // reads per interval (a grid counter's brackets add a read every Nth)
  bool probe_free = false;    // the grid's first probing, at start-up, is not charged
  bool coarse_probe = true;   // that probing's first stage: reads kCoarseProbeStepNs apart
  int fine_tries = 0;         // narrowing stretches since the last lock (a wide probe bracket)
  bool pace_next = true;      // the next read is a scheduled one the budget may put off
  int64_t align_ns = 0;       // a grid counter's next read sits this far from an update
  int64_t max_gap_ns = 0;     // the sensor model's max safe interval (the sample buffer's depth): the budget stops there
  int64_t last_dur_ns = -1;   // the newest read's duration (-1: none)
};

struct WindowRec {
  WindowId id = 0;
  std::string name;
  int64_t a_ns = 0;
  int64_t b_ns = -1;  // -1 while open
  std::vector<std::optional<EdgeEstimate>> begin;  // anchored per domain
  std::optional<WindowResult> final_result;
  bool in_unanchored = false;  // listed in Impl::unanchored_ (begin not anchored for every counter domain)
  std::multimap<int64_t, WindowId>::iterator unanchored_it;
};

int64_t thread_cpu_ns() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return (static_cast<int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1'000'000'000 +
         (static_cast<int64_t>(ru.ru_utime.tv_usec) + ru.ru_stime.tv_usec) * 1'000;
}

}  // namespace

class Meter::Impl {
 public:
  Impl(std::vector<SensorPtr> sensors, Clock& clock, MeterOptions options)
      : sensors_(std::move(sensors)), clock_(clock), opt_(options) {
    for (auto& s : sensors_)
      for (std::size_t i = 0; i < s->domains().size(); ++i) {
        refs_.push_back({s.get(), i, s->domains()[i]});
        domains_.push_back(s->domains()[i]);
      }
    for (const auto& r : refs_) timelines_.emplace_back(r.domain, opt_.timeline_capacity);
    for (const auto& tl : timelines_) any_counter_ |= tl.has_counter();
    states_.resize(refs_.size());
    live_.resize(refs_.size());
    accum_.resize(refs_.size());
    start_ns_ = clock.now_ns();
    window_ops_.reserve(256);
    fail_streak_.assign(refs_.size() * kReadingKindCount, 0);
    const int64_t now = clock_.now_ns();
    for (uint32_t d = 0; d < refs_.size(); ++d) {
      const SensorModel& model = refs_[d].domain.model;
      for (const auto& m : model.readings)
        if (!rides_along(model, m)) tasks_.push_back(make_task(d, m, now));
      for (const auto& m : model.readings)
        if (rides_along(model, m))
          for (Task& t : tasks_)
            if (t.domain == d && t.kind == m.read_with) t.with.push_back(m.kind);
    }
    update_budget_scale(now);
    update_end_timeout(now);
  }

  // Read right after another reading's read, which computes it too (no schedule of its own); one
  // whose partner the domain lacks keeps its own schedule.
  static bool rides_along(const SensorModel& model, const ReadingModel& m) {
    const ReadingModel* lead = m.read_with == ReadingKind::kCount ? nullptr : model.find(m.read_with);
    return lead && lead->read_with == ReadingKind::kCount;
  }

  Task make_task(uint32_t d, const ReadingModel& m, int64_t now) {
    Task t;
    t.domain = d;
    t.kind = m.kind;
    t.next_ns = now;
    switch (m.kind) {
      case ReadingKind::energy_counter_j:
        if (m.read_cost_ns >= kExpensiveReadNs && m.update_period_ns > 0) {
          t.interval_ns = opt_.counter_interval_ns;
          t.grid = true;
          t.tracker = std::make_unique<CounterGrid>(m.update_period_ns);
        } else {
          t.interval_ns = opt_.power_interval_ns;  // cheap (RAPL): read it as densely as power
        }
        break;
      case ReadingKind::power_instant_w:
      case ReadingKind::power_average_w:
        t.interval_ns = opt_.power_interval_ns;
        // Reads faster than the refresh (NVML: every 100 ms) return the value already read. Only
        // an instant field with no sample buffer beside it is the shape, and is read densely to
        // place its refreshes; the others are read once per refresh: an averaged field never
        // shapes (the H200's gpu:0/memory domain has only the 1 s average: read every 20 ms it
        // was 38 of the sampler's wake-ups a second), and beside the sample buffer the instant
        // field only fills in. Every wake-up costs the sampler 20-50 us on a VM besides the read.
        if (m.update_period_ns > 0 && (m.kind == ReadingKind::power_average_w ||
                                       refs_[d].domain.model.supports(ReadingKind::power_sample_w)))
          t.interval_ns = std::max(t.interval_ns, m.update_period_ns);
        break;
      case ReadingKind::power_sample_w: t.interval_ns = opt_.samples_interval_ns; break;
      case ReadingKind::power_violation_ns:
      case ReadingKind::thermal_violation_ns: t.interval_ns = opt_.violation_interval_ns; break;
      default: t.interval_ns = opt_.telemetry_interval_ns; break;
    }
    if (m.max_safe_interval_ns > 0) t.interval_ns = std::min(t.interval_ns, m.max_safe_interval_ns);
    t.interval_ns = std::max<int64_t>(t.interval_ns, 1'000'000);
    const double share = m.kind == ReadingKind::energy_counter_j ? opt_.counter_cpu_share : opt_.reading_cpu_share;
    t.budget = ReadBudget(share > 0 ? share : 0, m.read_cost_ns, now);
    t.reads_per_slot = t.grid ? 1.0 + 1.0 / kBracketEvery : 1.0;
    t.probe_free = t.grid;
    t.max_gap_ns = m.max_safe_interval_ns;
    return t;
  }

  // The interval the budget allows a task in the long run: its configured one, or longer when its
  // reads cost more than its share (ns).
  static int64_t expected_interval_ns(const Task& t) {
    const double r = t.budget.rate();
    if (r <= 0) return t.interval_ns;
    int64_t i = std::max<int64_t>(t.interval_ns, static_cast<int64_t>(t.budget.cost_ns() * t.reads_per_slot / r));
    if (t.max_gap_ns > 0) i = std::min(i, std::max(t.interval_ns, t.max_gap_ns));
    return i;
  }

  // When the shares the readings use add up to more than the sampler's total, scale them down
  // (budget_group_scales says in which order). On real time the total is what the thread CPU
  // governor leaves after the sampler's CPU outside the reads.
  enum class Group { counter, power, telemetry, extra };
  static constexpr int kGroups = 4;
  static Group group_of(ReadingKind k) {
    switch (k) {
      case ReadingKind::energy_counter_j: return Group::counter;
      case ReadingKind::power_sample_w:
      case ReadingKind::power_instant_w:
      case ReadingKind::power_average_w: return Group::power;
      case ReadingKind::power_violation_ns:    // stand-in: the clock-event reasons
      case ReadingKind::thermal_violation_ns:  // (estimate.cpp)
      case ReadingKind::memory_used_bytes:     // changes slowly
        return Group::extra;
      default: return Group::telemetry;
    }
  }
  // A read that delivers its riders too counts as that many readings when the budget is shared.
  static double weight(const Task& t) { return 1.0 + static_cast<double>(t.with.size()); }
  static double share_in_use(const Task& t) {
    return std::min(t.budget.share(), t.budget.cost_ns() * t.reads_per_slot / static_cast<double>(t.interval_ns));
  }
  void update_budget_scale(int64_t now) {
    double use[kGroups] = {0, 0, 0, 0};
    for (const Task& t : tasks_)
      if (t.next_ns != INT64_MAX && t.budget.share() > 0) use[static_cast<int>(group_of(t.kind))] += share_in_use(t);
    const auto f = budget_group_scales(use[0], use[1], use[2], use[3], governor_.read_share());
    // A group over its budget shares it by water-filling: each reading gets at most the level.
    double level[kGroups];
    for (int g = 0; g < kGroups; ++g) {
      level[g] = std::numeric_limits<double>::infinity();
      if (f[static_cast<std::size_t>(g)] >= 1.0) continue;
      level_scratch_.clear();
      for (const Task& t : tasks_)
        if (t.next_ns != INT64_MAX && t.budget.share() > 0 && static_cast<int>(group_of(t.kind)) == g)
          level_scratch_.emplace_back(share_in_use(t), weight(t));
      level[g] = water_level(level_scratch_, f[static_cast<std::size_t>(g)] * use[g]);
    }
    for (Task& t : tasks_) {
      if (t.budget.share() <= 0) continue;
      const double l = level[static_cast<int>(group_of(t.kind))] * weight(t);
      const double u = share_in_use(t);
      const double scale = u > l ? l / t.budget.share() : 1.0;
      if (scale != t.budget.rate() / t.budget.share()) t.budget.set_scale(scale, now);
    }
  }

  // Once per wake-up on real time: the thread's CPU so far, for the governor and the stats.
  void observe_thread_cpu() {
    const int64_t cpu_ns = thread_cpu_ns();
    sampler_cpu_ns_.store(cpu_ns, std::memory_order_relaxed);
    int64_t charged_ns = 0;
    for (const Task& t : tasks_) charged_ns += t.budget.charged_ns();
    governor_.observe(clock_.now_ns(), cpu_ns, charged_ns);
    rest_cpu_share_.store(governor_.rest_share(), std::memory_order_relaxed);
    read_cpu_share_.store(governor_.read_share(), std::memory_order_relaxed);
  }

  // A window's end waits for a counter point after it up to 4 counter intervals: the stretched
  // interval, or the wait until the next counter read (a budget in debt), when longer.
  void update_end_timeout(int64_t now) {
    int64_t slowest_counter = opt_.counter_interval_ns;
    for (const Task& t : tasks_)
      if (t.kind == ReadingKind::energy_counter_j && t.next_ns != INT64_MAX)
        slowest_counter = std::max({slowest_counter, expected_interval_ns(t), t.next_ns - now});
    end_timeout_ns_ = 4 * slowest_counter;
  }

  // Put the task's next read off until its budget allows it; a grid counter's read stays on the
  // grid (the first slot, at the same offset from an update, the budget allows).
  void pace(Task& t, int64_t now, int64_t read_start) {
    if (t.next_ns == INT64_MAX || !t.pace_next) return;
    int64_t ok = t.budget.earliest_ns(now);
    // Losing data is worse than spending CPU: a reading that loses history when read too rarely
    // (the sample buffer) is never put off past its max safe interval.
    if (t.max_gap_ns > 0) ok = std::min(ok, std::max(t.next_ns, read_start + t.max_gap_ns));
    if (ok <= t.next_ns) return;
    if (t.grid && t.tracker->locked()) {
      const CounterGrid& g = *t.tracker;
      int64_t s = g.update_at_or_before(ok - t.align_ns) + t.align_ns;
      if (s < ok) s += g.period_ns();
      t.next_ns = s;
    } else {
      t.next_ns = ok;
    }
    std::lock_guard lk(mu_);
    ++stats_.stretched_reads;
  }

  // One sampler step: run the earliest due task, then pay for its read and schedule the next.
  void run_task(Task& t) {
    t.pace_next = true;
    t.align_ns = 0;
    int64_t dur = -1, t_end = 0;
    read_task(t, dur, t_end);
    t.last_dur_ns = dur;
    if (dur < 0) return;  // no read (device lost)
    t.budget.observe(dur);
    if (!t.probe_free) t.budget.charge(dur, t_end);
    update_budget_scale(t_end);
    pace(t, t_end, t_end - dur);
    update_end_timeout(t_end);
  }

  void read_task(Task& t, int64_t& dur_out, int64_t& t_end_out) {
    if (states_[t.domain].lost) {
      t.next_ns = INT64_MAX;
      return;
    }
    scratch_.clear();
    const int64_t t0 = clock_.now_ns();
    const int64_t late_ns = t0 - t.next_ns;
    Sensor& sensor = *refs_[t.domain].sensor;
    const std::size_t local = refs_[t.domain].local;
    const Status st = sensor.read(local, t.kind, scratch_);
    const int64_t t1 = clock_.now_ns();
    const std::size_t own_end = scratch_.size();
    // The readings that come with this one: read now, outside the lock, from what the read computed
    // (also when the lead's own value failed: NVML reports each GPM metric's status apart).
    with_status_.clear();
    with_end_.clear();
    if (st.ok() || st.error().kind != ErrorKind::device_lost)
      for (ReadingKind k : t.with) {
        with_status_.push_back(sensor.read(local, k, scratch_));
        with_end_.push_back(scratch_.size());
      }
    const int64_t t2 = clock_.now_ns();
    const int64_t mid = t0 + (t1 - t0) / 2;
    dur_out = t2 - t0;
    t_end_out = t2;
    std::lock_guard lk(mu_);
    stats_.read_ns += t2 - t0;
    if (t.reads++ > 0) record_lateness(std::max<int64_t>(late_ns, 0));  // a coalesced read comes early
    stats_.newest_read_ns = t0;
    Outcome o = record(t.domain, t.kind, st, mid, 0, own_end);
    std::size_t begin = own_end;
    for (std::size_t i = 0; i < with_status_.size() && o != Outcome::lost; ++i) {
      if (record(t.domain, t.with[i], with_status_[i], t1 + (t2 - t1) / 2, begin, with_end_[i]) == Outcome::lost)
        o = Outcome::lost;
      begin = with_end_[i];
    }
    if (o == Outcome::lost) {
      t.next_ns = INT64_MAX;
      return;
    }
    if (o == Outcome::failed) {
      t.next_ns = t1 + t.interval_ns;
      t.phase = 0;
      t.have_probe = false;
      return;
    }
    if (t.kind == ReadingKind::energy_counter_j) {
      counter_read(t, timelines_[t.domain], scratch_.at(0).value, mid, t1 - t0);
    } else {
      // From the scheduled instant when the read came early (a coalesced wake-up), so coalescing
      // does not shorten the interval; from the read itself when it came late.
      t.next_ns = std::max(t0, t.next_ns) + t.interval_ns;
    }
  }

  enum class Outcome { ok, failed, lost };
  // One read's outcome for reading `kind` of domain d: health, events, and its readings
  // scratch_[begin, end) exported and (all but the counter's) added to the timeline. Caller holds mu_.
  Outcome record(uint32_t d, ReadingKind kind, const Status& st, int64_t mid, std::size_t begin, std::size_t end) {
    Timeline& tl = timelines_[d];
    int& streak = fail_streak_[d * kReadingKindCount + static_cast<std::size_t>(kind)];
    ReadingHealth& health = live_[d].readings[static_cast<std::size_t>(kind)];
    if (!st.ok()) {
      ++health.read_errors;
      health.last_error_ns = mid;
      health.last_error = st.error().message();
      tl.add_failure(mid, kind);
      if (st.error().kind == ErrorKind::device_lost) {
        states_[d] = {true, mid};
        event(mid, d, kind, "device_lost", st.error().message());
        return Outcome::lost;
      }
      if (streak++ == 0) event(mid, d, kind, "read_error", st.error().message());
      return Outcome::failed;
    }
    if (streak > 0) {
      event(mid, d, kind, "recovered", "reads work again after " + std::to_string(streak) + " failure(s)");
      streak = 0;
    }
    ++health.reads_ok;
    health.last_ok_ns = mid;
    if (end > begin) health.latest = scratch_[end - 1];
    for (std::size_t i = begin; i < end; ++i) {
      const Reading& r = scratch_[i];
      export_reading(d, r);
      if (r.kind == ReadingKind::energy_counter_j) continue;  // counter_read places it
      if (r.kind == ReadingKind::power_sample_w) tl.add_sample(r);
      else if (r.kind == ReadingKind::power_instant_w) tl.add_instant(r);
      else tl.add_other(r);
    }
    return Outcome::ok;
  }

  void counter_read(Task& t, Timeline& tl, double value, int64_t mid, int64_t dur) {
    const int64_t update = refs_[t.domain].domain.model.find(ReadingKind::energy_counter_j)->update_period_ns;
    std::string ev;
    if (!t.grid) {
      // The value belongs to the newest update, somewhere in (mid - update, mid] and after the
      // previous read if that one saw another value.
      if (!t.have_probe || value != t.probe_value) {
        int64_t lo = mid - update;
        if (t.have_probe) lo = std::max(lo, t.probe_t_ns);
        t.value_seen_t_ns = mid;
        t.last_point_t_ns = lo + (mid - lo) / 2;
        ev = tl.add_counter(value, t.last_point_t_ns, std::max<int64_t>((mid - lo) / 2, dur / 2));
      } else if (mid - update > t.value_seen_t_ns && mid - update > t.last_point_t_ns) {
        // Unchanged, and the counter has published since this value first appeared: no energy
        // reached it up to that update, which lies in (mid - update, mid]. Saying so keeps an idle
        // zone's timeline moving; without it, a window ending after the last change would find
        // no counter point beyond its edge.
        t.last_point_t_ns = mid - update;
        ev = tl.add_counter(value, t.last_point_t_ns, std::max<int64_t>(dur / 2, 1));
      }
      t.have_probe = true;
      t.probe_value = value;
      t.probe_t_ns = mid;
      t.next_ns = mid + t.interval_ns;
    } else {
      CounterGrid& g = *t.tracker;
      // A read may take longer than the last one did (H200: 3 ms median, 15 ms p99): allow for the
      // longer of the last and the mean.
      const int64_t margin = std::max<int64_t>(2 * g.uncertainty_ns(), 2'000'000) +
                             std::max<int64_t>(dur, static_cast<int64_t>(t.budget.cost_ns()));
      if (t.phase == 0 || t.phase == 2) {
        // Probing or bracketing: a change since the previous read pins the update between them.
        // A probe's bracket wider than two reads (the start-up probe's coarse steps, or a read
        // held up: an H200 counter read under load took 104 ms, and a probe once waited 44 ms
        // between two reads) would lock the grid only that well, and check brackets never narrow
        // it. The value is placed in it, and one period later reads back to back from just before
        // it pin the update down: the value just read holds until then, so that stretch starts as
        // the probe.
        const int64_t read_ns = std::max<int64_t>(static_cast<int64_t>(t.budget.cost_ns()), 1'000'000);
        const int64_t narrow_ns = 2 * read_ns + 1'000'000;
        if (t.have_probe && value != t.probe_value && t.phase == 0 && mid - t.probe_t_ns > narrow_ns &&
            t.fine_tries < kFineTries) {
          const int64_t lo = t.probe_t_ns;
          ev = tl.add_counter(value, lo + (mid - lo) / 2, (mid - lo) / 2);
          ++t.fine_tries;
          t.coarse_probe = false;
          t.probe_value = value;
          t.probe_t_ns = lo + g.period_ns();
          t.next_ns = lo + g.period_ns() - std::max<int64_t>(dur, 1'000'000) - 1'000'000;
          t.pace_next = false;
        } else if (t.have_probe && value != t.probe_value) {
          t.coarse_probe = false;
          t.fine_tries = 0;
          g.add_bracket(std::min(t.probe_t_ns, mid - 1), mid);  // a read slower than its midpoint says
          ev = tl.add_counter(value, g.update_at_or_before(mid), g.uncertainty_ns());
          t.phase = 1;
          t.have_probe = false;
          t.reads_since_bracket = 0;
          t.probe_free = false;  // start-up is over: from here on every read is paid for
          t.next_ns = g.update_at_or_before(mid + t.interval_ns) + margin;
          t.align_ns = margin;
        } else if (t.phase == 2 && t.have_probe) {
          // No change across the predicted update: the grid drifted; probe again.
          g.unlock();
          t.phase = 0;
          t.probe_value = value;
          t.probe_t_ns = mid;
          t.next_ns = clock_.now_ns();
          t.pace_next = false;  // probing reads back to back; the budget's debt delays the reads after
        } else {
          t.have_probe = true;
          t.probe_value = value;
          t.probe_t_ns = mid;
          // Probing: coarse steps at start-up, then reads back to back; a bracket's second read
          // lands just after the update.
          t.next_ns = t.phase == 2      ? g.next_update_after(mid) + margin
                      : t.coarse_probe ? mid + kCoarseProbeStepNs
                                       : clock_.now_ns();
          t.pace_next = false;  // a probe, or a bracket's second read: both belong to the first
        }
      } else {
        ev = tl.add_counter(value, g.update_at_or_before(mid), g.uncertainty_ns());
        if (++t.reads_since_bracket >= kBracketEvery) {
          // Next time: one read just before the update, one just after.
          t.phase = 2;
          t.have_probe = false;
          t.next_ns = g.update_at_or_before(mid + t.interval_ns) - margin;
          t.align_ns = -margin;
        } else {
          t.next_ns = g.update_at_or_before(mid + t.interval_ns) + margin;
          t.align_ns = margin;
        }
      }
    }
    if (!ev.empty()) {
      ++live_[t.domain].counter_resets;
      event(mid, t.domain, ReadingKind::energy_counter_j, "counter_reset", ev);
    }
  }

  void record_lateness(int64_t late_ns) {
    late_ns = std::max<int64_t>(late_ns, 0);
    const auto& bounds = SamplerStats::kLatenessBoundsNs;
    const auto it = std::lower_bound(bounds.begin(), bounds.end(), late_ns);
    ++stats_.lateness_counts[static_cast<std::size_t>(it - bounds.begin())];
    ++stats_.reads;
    stats_.lateness_sum_s += static_cast<double>(late_ns) * 1e-9;
    stats_.lateness_max_ns = std::max(stats_.lateness_max_ns, late_ns);
  }

  // Caller holds mu_. Cheap: per domain one counter lookup and the power readings since last time.
  MeterSnapshot snapshot() {
    MeterSnapshot s;
    s.t_ns = clock_.now_ns();
    s.start_t_ns = start_ns_;
    s.sampler = stats_;
    s.sampler.cpu_ns = sampler_cpu_ns_.load(std::memory_order_relaxed);
    s.sampler.rest_cpu_share = rest_cpu_share_.load(std::memory_order_relaxed);
    s.sampler.read_cpu_share = read_cpu_share_.load(std::memory_order_relaxed);
    s.domains = live_;
    for (std::size_t d = 0; d < refs_.size(); ++d) {
      DomainLive& l = s.domains[d];
      const Timeline& tl = timelines_[d];
      l.lost = states_[d].lost;
      l.lost_at_ns = states_[d].lost_at_ns;
      if (tl.has_counter()) {
        const auto newest = tl.newest_counter();
        if (!newest) continue;
        // Past the newest counter point, as far as power readings reach (the counter is read once
        // a second on NVIDIA; power every few ms): the value then belongs to about now.
        const int64_t t_power = tl.newest_power_ns();
        if (t_power > newest->t_ns) {
          const EdgeEstimate e = tl.energy_at(t_power);
          if (e.ok) {
            l.energy_ok = true;
            l.energy_j = e.energy_j;
            l.energy_t_ns = t_power;
            l.energy_estimator = e.estimator;
            continue;
          }
        }
        l.energy_ok = true;
        l.energy_j = newest->energy_j;
        l.energy_t_ns = newest->t_ns;
        l.energy_estimator = "counter";
      } else {
        PowerAccum& a = accum_[d];
        tl.accumulate_power(a.to_ns, a.energy_j, a.unmeasured_ns);
        if (a.to_ns == INT64_MIN) continue;
        l.energy_ok = true;
        l.energy_j = a.energy_j;
        l.energy_t_ns = a.to_ns;
        l.unmeasured_ns = a.unmeasured_ns;
        l.energy_estimator = tl.has_samples() ? "integrated(samples)" : "integrated(instant)";
      }
    }
    return s;
  }

  void event(int64_t t, uint32_t d, ReadingKind k, std::string kind, std::string msg) {
    events_.push_back({t, refs_[d].domain.id, std::string(to_string(k)), std::move(kind), std::move(msg)});
  }

  void export_reading(uint32_t d, const Reading& r) {
    if (export_.size() >= opt_.export_capacity) {
      export_.erase(export_.begin(), export_.begin() + static_cast<long>(export_.size() / 4));
      export_dropped_ += opt_.export_capacity / 4;
    }
    export_.push_back({d, r});
  }

  // Anchor window starts and finalize window ends the timeline now covers. Caller holds mu_.
  // Incremental: a begin edge can anchor only once a counter point lies after it, and an end can
  // be final only once every live counter domain has a point after it (or it timed out), so only
  // windows before the newest counter point are looked at, in time order. At most `max_final`
  // results are built; returns true when more are ready (the caller may drop the lock in between).
  bool process_windows(std::size_t max_final = SIZE_MAX) {
    apply_window_ops();
    horizon_.resize(refs_.size());
    int64_t h_max = INT64_MIN, h_min = INT64_MAX;
    for (std::size_t d = 0; d < refs_.size(); ++d) {
      horizon_[d] = timelines_[d].has_counter() ? timelines_[d].newest_counter_ns() : INT64_MIN;
      if (!timelines_[d].has_counter()) continue;
      h_max = std::max(h_max, horizon_[d]);
      if (!states_[d].lost) h_min = std::min(h_min, horizon_[d]);
    }
    // Coverage only grows with time: once an edge of domain d has data but is not final yet (the
    // sample buffer lags the counter), no later edge of d is final either. Without this stop a
    // second of windows made back to back (hundreds of thousands) was retried after every read.
    blocked_.assign(refs_.size(), 0);
    std::size_t n_blocked = 0, n_counter = 0;
    for (std::size_t d = 0; d < refs_.size(); ++d) n_counter += timelines_[d].has_counter();
    for (auto it = unanchored_.begin(); it != unanchored_.end() && it->first < h_max && n_blocked < n_counter;) {
      WindowRec& w = windows_.at(it->second);
      bool all = true;
      for (std::size_t d = 0; d < refs_.size(); ++d) {
        if (w.begin[d] || !timelines_[d].has_counter()) continue;
        if (w.a_ns < horizon_[d] && !blocked_[d]) {
          const EdgeEstimate e = timelines_[d].energy_at(w.a_ns);
          if (e.ok && e.covered) w.begin[d] = e;
          else if (e.ok) n_blocked += (blocked_[d] = 1);
        }
        if (!w.begin[d]) all = false;
      }
      if (!all) {
        ++it;
        continue;
      }
      w.in_unanchored = false;
      it = unanchored_.erase(it);
    }
    bool any = false, more = false;
    std::size_t built = 0;
    const int64_t now = clock_.now_ns();
    const int64_t timeout_ns = end_timeout_ns_.load(std::memory_order_relaxed);
    for (auto it = closed_.begin(); it != closed_.end();) {
      const int64_t b = it->first;
      // A domain that stopped answering must not hold results back forever.
      const bool timed_out = now - b > timeout_ns;
      if (!timed_out && b >= h_min) break;  // no later end can be covered yet
      bool covered = true;
      for (std::size_t d = 0; d < refs_.size() && covered; ++d)
        if (!states_[d].lost && !end_is_covered(timelines_[d], b)) covered = false;
      // Ends are in time order and coverage only grows with time: no later end is covered either.
      if (!covered && !timed_out) break;
      if (built >= max_final) {
        more = true;
        break;
      }
      WindowRec& w = windows_.at(it->second);
      w.final_result = build(w, true);
      if (w.in_unanchored) {
        unanchored_.erase(w.unanchored_it);
        w.in_unanchored = false;
      }
      ++built;
      any = true;
      finished_.push_back(w.id);
      it = closed_.erase(it);
    }
    // Bounded memory: only the newest finished results are kept.
    while (finished_.size() > opt_.finished_window_capacity) {
      windows_.erase(finished_.front());
      finished_.pop_front();
    }
    if (any) cv_.notify_all();
    return more;
  }

  // Process windows, dropping the lock every kFinalPerLock results so callers get in between.
  void process_windows_yielding(std::unique_lock<std::mutex>& lk) {
    while (process_windows(kFinalPerLock)) {
      lk.unlock();
      std::this_thread::yield();
      lk.lock();
    }
  }

  // open() and close() only append here; the map and lists are updated later, off the caller's
  // path (a window costs the caller a lock and a push_back, no allocation: the names of the
  // usual windows fit std::string's small buffer). Caller holds mu_.
  void apply_window_ops() {
    for (WindowOp& op : window_ops_) {
      if (op.open) {
        new_window(op.id, op.name, op.t_ns, -1);
        continue;
      }
      auto it = windows_.find(op.id);
      if (it != windows_.end() && it->second.b_ns < 0) {
        it->second.b_ns = op.t_ns;
        closed_.emplace(op.t_ns, op.id);
      }
    }
    window_ops_.clear();
  }

  // Whether `id` was opened and is still kept (its result not dropped). Caller holds mu_.
  bool window_known(WindowId id) const {
    // Ids past the newest applied one are waiting in window_ops_ (ids are handed out in order).
    return (id > applied_max_id_ && id < next_id_) || windows_.count(id) > 0;
  }

  // A new window's edges: listed for anchoring and, once closed, for finalizing. Caller holds mu_.
  WindowRec& new_window(WindowId id, std::string_view name, int64_t a_ns, int64_t b_ns) {
    applied_max_id_ = std::max(applied_max_id_, id);
    WindowRec& w = windows_[id];
    w.id = id;
    w.name = std::string(name);
    w.a_ns = a_ns;
    w.b_ns = b_ns;
    w.begin.resize(refs_.size());
    if (any_counter_) {
      w.unanchored_it = unanchored_.emplace(a_ns, id);
      w.in_unanchored = true;
    }
    if (b_ns >= 0) closed_.emplace(b_ns, id);
    return w;
  }

  WindowResult build(const WindowRec& w, bool final) const {
    WindowResult r;
    r.id = w.id;
    r.name = w.name;
    r.t_begin_ns = w.a_ns;
    r.t_end_ns = w.b_ns >= 0 ? w.b_ns : clock_.now_ns();
    r.final = final;
    for (std::size_t d = 0; d < refs_.size(); ++d) {
      r.domains.push_back(estimate_window(refs_[d].domain, timelines_[d], states_[d], r.t_begin_ns, r.t_end_ns,
                                          w.begin.empty() ? std::nullopt : w.begin[d]));
      if (!final) r.domains.back().issues.push_back("provisional");  // also beside other notes
    }
    return r;
  }

  // Real time: waking up costs more than a cheap read (tens of us on a VM), so a read due within
  // kCoalesceNs of the one that woke the sampler is taken in the same wake-up. Energy counters keep
  // their instants (a grid counter's read is timed against the counter's updates).
  static constexpr int64_t kCoalesceNs = 5'000'000;
  static int64_t wake_ns(const Task& t) {
    if (t.next_ns == INT64_MAX || t.kind == ReadingKind::energy_counter_j) return t.next_ns;
    return t.next_ns - kCoalesceNs;
  }

  Task* next_task() {
    Task* best = nullptr;
    for (auto& t : tasks_)
      if (!best || t.next_ns < best->next_ns) best = &t;
    return best;
  }

  void step_until(int64_t t_end_ns) {
    while (true) {
      Task* t = next_task();
      if (!t || t->next_ns > t_end_ns) break;
      clock_.sleep_until_ns(t->next_ns);
      run_task(*t);
      std::lock_guard lk(mu_);
      process_windows();
    }
    clock_.sleep_until_ns(t_end_ns);
    std::lock_guard lk(mu_);
    process_windows();
  }

  void thread_main() {
    constexpr int kReadsPerBatch = 32;
    int batch = 0;
    if (!opt_.budget_counts_step_cpu) governor_.start(clock_.now_ns(), thread_cpu_ns());
    while (!stop_.load(std::memory_order_acquire)) {
      Task* t = next_task();
      if (!t || t->next_ns == INT64_MAX) {
        std::unique_lock lk(mu_);
        cv_stop_.wait_for(lk, std::chrono::milliseconds(100), [&] { return stop_.load(); });
        process_windows_yielding(lk);
        continue;
      }
      // Sleep in slices so stop() is never held up by a long interval.
      const int64_t target = wake_ns(*t);
      while (!stop_.load(std::memory_order_acquire) && clock_.now_ns() < target) {
        std::unique_lock lk(mu_);
        cv_stop_.wait_for(lk, std::chrono::nanoseconds(std::min<int64_t>(target - clock_.now_ns(), 50'000'000)),
                          [&] { return stop_.load(); });
      }
      if (stop_.load()) break;
      try {
        run_task(*t);
      } catch (const std::exception& e) {
        // No exception escapes the sampler: it becomes an event on the timeline.
        std::lock_guard lk(mu_);
        event(clock_.now_ns(), t->domain, t->kind, "read_error", std::string("exception: ") + e.what());
        t->next_ns = clock_.now_ns() + t->interval_ns;
      }
      if (opt_.budget_counts_step_cpu) {
        // The budget pays for the whole step, not only the read: on a VM a wake-up alone can
        // cost tens of us, more than a power read.
        const int64_t cpu_ns = thread_cpu_ns();
        const int64_t step_cpu_ns = cpu_ns - std::max<int64_t>(sampler_cpu_ns_.load(std::memory_order_relaxed), 0);
        if (t->last_dur_ns >= 0 && !t->probe_free)
          t->budget.charge_overhead(step_cpu_ns - t->last_dur_ns, clock_.now_ns());
        sampler_cpu_ns_.store(cpu_ns, std::memory_order_relaxed);
      }
      std::unique_lock lk(mu_);
      if (!t->read_once) {
        t->read_once = true;
        if (++tasks_read_once_ == tasks_.size()) cv_.notify_all();
      }
      // Another read is due already: run it first. The bookkeeping below runs once per wake-up,
      // not once per read (a wake-up reads 1-16 readings; getrusage is a system call), and at
      // least every kReadsPerBatch reads, so a sampler that falls behind still finalizes windows.
      if (const Task* n = next_task(); n && wake_ns(*n) <= clock_.now_ns() && ++batch < kReadsPerBatch) continue;
      batch = 0;
      process_windows_yielding(lk);
      lk.unlock();
      if (!opt_.budget_counts_step_cpu) observe_thread_cpu();
    }
    sampler_cpu_ns_.store(thread_cpu_ns(), std::memory_order_relaxed);
  }

  std::vector<SensorPtr> sensors_;
  Clock& clock_;
  MeterOptions opt_;
  std::vector<DomainRef> refs_;
  std::vector<Domain> domains_;
  std::vector<Task> tasks_;
  std::vector<Status> with_status_;    // read_task's scratch: each ride-along read's status
  std::vector<std::size_t> with_end_;  // and where its readings end in scratch_
  std::vector<std::pair<double, double>> level_scratch_;  // update_budget_scale's (use, weight), reused
  std::size_t tasks_read_once_ = 0;  // guarded by mu_
  std::vector<Reading> scratch_;

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_, cv_stop_;
  std::vector<Timeline> timelines_;
  std::vector<DomainState> states_;
  struct PowerAccum {
    int64_t to_ns = INT64_MIN;
    double energy_j = 0;
    int64_t unmeasured_ns = 0;
  };
  std::vector<DomainLive> live_;    // reading health and counter resets, per domain
  std::vector<PowerAccum> accum_;   // energy of domains without a counter, advanced by snapshot()
  SamplerStats stats_;
  int64_t start_ns_ = 0;
  std::vector<int> fail_streak_;
  std::map<WindowId, WindowRec> windows_;
  // Not final yet: the only windows process_windows() looks at, in time order.
  std::multimap<int64_t, WindowId> unanchored_;  // by begin: a counter domain's begin not anchored
  std::multimap<int64_t, WindowId> closed_;      // by end: closed, result not built
  std::vector<int64_t> horizon_;                 // per domain: newest counter point (scratch)
  std::vector<char> blocked_;                    // per domain: a begin edge was not final yet (scratch)
  bool any_counter_ = false;                     // some domain has an energy counter
  std::atomic<int64_t> end_timeout_ns_{4'000'000'000};  // see update_end_timeout()
  std::deque<WindowId> finished_;  // final, oldest first; trimmed to finished_window_capacity
  WindowId next_id_ = 1;
  struct WindowOp {
    WindowId id = 0;
    int64_t t_ns = 0;
    bool open = false;
    std::string name;
  };
  std::vector<WindowOp> window_ops_;  // open/close calls not applied yet, in call order
  WindowId applied_max_id_ = 0;       // newest id in windows_ (or dropped from it)
  std::vector<MeterEvent> events_;
  std::vector<TimedReading> export_;
  std::size_t export_dropped_ = 0;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> sampler_cpu_ns_{0};
  ThreadCpuGovernor governor_{opt_.sampler_thread_cpu_share, opt_.sampler_cpu_share};  // sampler thread only
  std::atomic<double> rest_cpu_share_{0}, read_cpu_share_{0};  // the governor's, for snapshots
  bool started_ = false;
};

Meter::Meter(std::vector<SensorPtr> sensors, Clock& clock, MeterOptions options)
    : impl_(std::make_unique<Impl>(std::move(sensors), clock, options)) {}

Meter::~Meter() { stop(); }

const std::vector<Domain>& Meter::domains() const { return impl_->domains_; }
Clock& Meter::clock() const { return impl_->clock_; }
const MeterOptions& Meter::options() const { return impl_->opt_; }

void Meter::start() {
  if (impl_->started_) return;
  if (impl_->clock_.is_virtual()) throw std::logic_error("Meter::start on a virtual clock: call advance_to()");
  impl_->started_ = true;
  impl_->thread_ = std::thread([this] { impl_->thread_main(); });
}

bool Meter::wait_first_reads(std::chrono::milliseconds timeout) {
  std::unique_lock lk(impl_->mu_);
  return impl_->cv_.wait_for(lk, timeout, [&] { return impl_->tasks_read_once_ >= impl_->tasks_.size(); });
}

void Meter::stop() {
  if (!impl_->started_) return;
  {
    std::lock_guard lk(impl_->mu_);
    impl_->stop_.store(true);
  }
  impl_->cv_stop_.notify_all();
  impl_->thread_.join();
  impl_->started_ = false;
  std::lock_guard lk(impl_->mu_);
  impl_->process_windows();
}

void Meter::advance_to(int64_t t_ns) {
  if (!impl_->clock_.is_virtual()) throw std::logic_error("Meter::advance_to needs a virtual clock");
  impl_->step_until(t_ns);
}

WindowId Meter::open(std::string_view name, const std::function<void()>& sync) {
  if (sync) sync();
  const int64_t t = impl_->clock_.now_ns();
  std::lock_guard lk(impl_->mu_);
  const WindowId id = impl_->next_id_++;
  impl_->window_ops_.push_back({id, t, true, std::string(name)});
  return id;
}

void Meter::close(WindowId id, const std::function<void()>& sync) {
  if (sync) sync();
  const int64_t t = impl_->clock_.now_ns();
  std::lock_guard lk(impl_->mu_);
  if (!impl_->window_known(id)) throw std::invalid_argument("Meter::close: no window " + std::to_string(id) + " (unknown, or its result was dropped: only the newest finished_window_capacity are kept)");
  impl_->window_ops_.push_back({id, t, false, {}});
}

WindowId Meter::add_window(std::string_view name, int64_t t_begin_ns, int64_t t_end_ns) {
  if (t_end_ns < t_begin_ns) throw std::invalid_argument("Meter::add_window: end before begin");
  std::lock_guard lk(impl_->mu_);
  impl_->apply_window_ops();  // ids stay in call order
  return impl_->new_window(impl_->next_id_++, name, t_begin_ns, t_end_ns).id;
}

std::optional<WindowResult> Meter::result(WindowId id) const {
  std::lock_guard lk(impl_->mu_);
  impl_->apply_window_ops();
  auto it = impl_->windows_.find(id);
  if (it == impl_->windows_.end()) return std::nullopt;
  return it->second.final_result;
}

WindowResult Meter::wait_result(WindowId id, std::chrono::milliseconds timeout) {
  std::unique_lock lk(impl_->mu_);
  impl_->apply_window_ops();
  auto it = impl_->windows_.find(id);
  if (it == impl_->windows_.end()) throw std::invalid_argument("Meter::wait_result: no window " + std::to_string(id) + " (unknown, or its result was dropped: only the newest finished_window_capacity are kept)");
  if (impl_->clock_.is_virtual() || !impl_->started_) {
    impl_->process_windows();
  } else {
    impl_->cv_.wait_for(lk, timeout, [&] { return it->second.final_result.has_value(); });
  }
  if (it->second.final_result) return *it->second.final_result;
  return impl_->build(it->second, false);
}

WindowResult Meter::provisional_result(WindowId id) const {
  std::lock_guard lk(impl_->mu_);
  impl_->apply_window_ops();
  auto it = impl_->windows_.find(id);
  if (it == impl_->windows_.end()) throw std::invalid_argument("Meter::provisional_result: no window " + std::to_string(id) + " (unknown, or its result was dropped: only the newest finished_window_capacity are kept)");
  if (it->second.final_result) return *it->second.final_result;
  return impl_->build(it->second, false);
}

WindowResult Meter::estimate(int64_t t_begin_ns, int64_t t_end_ns, std::string_view name) const {
  std::lock_guard lk(impl_->mu_);
  WindowRec w;
  w.name = std::string(name);
  w.a_ns = t_begin_ns;
  w.b_ns = t_end_ns;
  bool covered = true;
  for (std::size_t d = 0; d < impl_->refs_.size(); ++d)
    if (!impl_->states_[d].lost && !end_is_covered(impl_->timelines_[d], t_end_ns)) covered = false;
  return impl_->build(w, covered);
}

std::size_t Meter::drain_readings(std::vector<TimedReading>& out) {
  std::lock_guard lk(impl_->mu_);
  const std::size_t n = impl_->export_.size();
  out.insert(out.end(), impl_->export_.begin(), impl_->export_.end());
  impl_->export_.clear();
  return n;
}

std::vector<MeterEvent> Meter::events() const {
  std::lock_guard lk(impl_->mu_);
  return impl_->events_;
}

MeterSnapshot Meter::snapshot() const {
  std::lock_guard lk(impl_->mu_);
  return impl_->snapshot();
}

int64_t Meter::sampler_cpu_ns() const { return impl_->sampler_cpu_ns_.load(std::memory_order_relaxed); }

ScopedWindow::ScopedWindow(Meter& meter, std::string_view name, std::function<void()> sync)
    : meter_(meter), id_(meter.open(name, sync)), sync_(std::move(sync)) {}

ScopedWindow::~ScopedWindow() {
  try {
    meter_.close(id_, sync_);
  } catch (...) {
    // A destructor must not throw; an unknown id cannot happen for a window this object opened.
  }
}

}  // namespace wattlab
