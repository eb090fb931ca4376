#include "scheduler.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <limits>

namespace wattlab {
namespace {

// Read right after another reading's read, which computes it too (no schedule of its own); one
// whose partner the domain lacks keeps its own schedule.
bool rides_along(const SensorModel& model, const ReadingModel& m) {
  const ReadingModel* lead = m.read_with == ReadingKind::kCount ? nullptr : model.find(m.read_with);
  return lead && lead->read_with == ReadingKind::kCount;
}

// The interval the budget allows a task in the long run: its configured one, or longer when its
// reads cost more than its share (ns).
int64_t expected_interval_ns(const Task& t) {
  const double r = t.budget.rate();
  if (r <= 0) return t.interval_ns;
  int64_t i = std::max<int64_t>(t.interval_ns, static_cast<int64_t>(t.budget.cost_ns() * t.reads_per_slot / r));
  if (t.max_gap_ns > 0) i = std::min(i, std::max(t.interval_ns, t.max_gap_ns));
  return i;
}

// When the shares the readings use add up to more than the sampler's total, they are scaled down
// (budget_group_scales says in which order). On real time the total is what the thread CPU
// governor leaves after the sampler's CPU outside the reads.
enum class Group { counter, power, telemetry, extra };
constexpr int kGroups = 4;
Group group_of(ReadingKind k) {
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
double weight(const Task& t) { return 1.0 + static_cast<double>(t.with.size()); }
double share_in_use(const Task& t) {
  return std::min(t.budget.share(), t.budget.cost_ns() * t.reads_per_slot / static_cast<double>(t.interval_ns));
}
// The share a reading uses however far its budget puts it off: one read per max safe interval
// (the sample buffer's depth), since the budget never stretches it past that (Scheduler::pace).
double floor_share(const Task& t) {
  if (t.max_gap_ns <= 0) return 0;
  const double at_max_gap = t.budget.cost_ns() * t.reads_per_slot /
                            static_cast<double>(std::max(t.max_gap_ns, t.interval_ns));
  return std::min(share_in_use(t), at_max_gap);
}

}  // namespace

int64_t thread_cpu_ns() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return (static_cast<int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1'000'000'000 +
         (static_cast<int64_t>(ru.ru_utime.tv_usec) + ru.ru_stime.tv_usec) * 1'000;
}

int64_t thread_cpu_clock_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Scheduler::Scheduler(const std::vector<Domain>& domains, const MeterOptions& opt, int64_t now_ns, bool real_time)
    : opt_(opt),
      hint_(opt.counter_probe_hint == MeterOptions::ProbeHint::always ||
            (real_time && opt.counter_probe_hint == MeterOptions::ProbeHint::real_time)),
      governor_(opt.sampler_thread_cpu_share, opt.sampler_cpu_share) {
  for (uint32_t d = 0; d < domains.size(); ++d) {
    const SensorModel& model = domains[d].model;
    for (const auto& m : model.readings)
      if (!rides_along(model, m)) tasks_.push_back(make_task(domains[d], d, m, now_ns));
    for (const auto& m : model.readings)
      if (rides_along(model, m))
        for (Task& t : tasks_)
          if (t.domain == d && t.kind == m.read_with) t.with.push_back(m.kind);
  }
  update_budget_scale(now_ns);
  update_end_timeout(now_ns);
}

Task Scheduler::make_task(const Domain& domain, uint32_t d, const ReadingModel& m, int64_t now_ns) const {
  Task t;
  t.domain = d;
  t.kind = m.kind;
  t.next_ns = now_ns;
  bool grid = false;
  switch (m.kind) {
    case ReadingKind::energy_counter_j:
      if (m.read_cost_ns >= kExpensiveReadNs && m.update_period_ns > 0) {
        t.interval_ns = opt_.counter_interval_ns;
        grid = true;
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
      if (m.update_period_ns > 0 &&
          (m.kind == ReadingKind::power_average_w || domain.model.supports(ReadingKind::power_sample_w)))
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
  t.budget = ReadBudget(share > 0 ? share : 0, m.read_cost_ns, now_ns);
  if (grid) t.budget.start_with_one_read();  // its probe is free (CounterTracker::probe_free)
  t.reads_per_slot = grid ? 1.0 + 1.0 / CounterTracker::kBracketEvery : 1.0;
  t.max_gap_ns = m.max_safe_interval_ns;
  if (m.kind == ReadingKind::energy_counter_j)
    t.counter = std::make_unique<CounterTracker>(m.update_period_ns, t.interval_ns, grid);
  // A grid counter's probe starts from where a cheap field of the same period refreshes.
  const ReadingModel* field = domain.model.find(ReadingKind::power_instant_w);
  if (hint_ && grid && field && field->read_cost_ns < kExpensiveReadNs && field->update_period_ns == m.update_period_ns) {
    t.hint = std::make_unique<RefreshHint>(m.update_period_ns);
    t.hint_kind = field->kind;
  }
  return t;
}

Task* Scheduler::next_task() {
  Task* best = nullptr;
  for (auto& t : tasks_)
    if (!best || t.next_ns < best->next_ns) best = &t;
  return best;
}

int64_t Scheduler::wake_ns(const Task& t) {
  if (t.next_ns == INT64_MAX || t.kind == ReadingKind::energy_counter_j) return t.next_ns;
  return t.next_ns - kCoalesceNs;
}

void Scheduler::begin_read(Task& t) const {
  t.pace_next = true;
  t.align_ns = 0;
}

void Scheduler::after_plain_read(Task& t, int64_t t0_ns) const {
  // From the scheduled instant when the read came early (a coalesced wake-up), so coalescing
  // does not shorten the interval; from the read itself when it came late.
  t.next_ns = std::max(t0_ns, t.next_ns) + t.interval_ns;
}

void Scheduler::after_counter_read(Task& t, const CounterNext& next) const {
  t.next_ns = next.next_ns;
  t.align_ns = next.align_ns;
  t.pace_next = next.pace_next;
}

void Scheduler::after_failed_read(Task& t, int64_t t1_ns) const {
  t.next_ns = t1_ns + t.interval_ns;
  if (t.counter) t.counter->on_failed_read();
}

void Scheduler::after_lost(Task& t) const { t.next_ns = INT64_MAX; }

void Scheduler::after_read(Task& t, int64_t dur_ns, int64_t end_ns, int64_t cpu_ns) {
  const int64_t paid_ns = cpu_ns >= 0 ? std::min(dur_ns, cpu_ns) : dur_ns;
  t.last_dur_ns = paid_ns;
  if (dur_ns < 0) return;  // no read (device lost)
  t.budget.observe(dur_ns);
  if (!t.probe_free()) t.budget.charge(paid_ns, end_ns);
  update_budget_scale(end_ns);
  pace(t, end_ns, end_ns - dur_ns);
  update_end_timeout(end_ns);
}

void Scheduler::charge_step_overhead(Task& t, int64_t step_cpu_ns, int64_t now_ns) const {
  if (t.last_dur_ns >= 0 && !t.probe_free()) t.budget.charge_overhead(step_cpu_ns - t.last_dur_ns, now_ns);
}

void Scheduler::start_governor(int64_t now_ns, int64_t cpu_ns) { governor_.start(now_ns, cpu_ns); }

void Scheduler::observe_thread_cpu(int64_t now_ns, int64_t cpu_ns) {
  int64_t charged_ns = 0;
  for (const Task& t : tasks_) charged_ns += t.budget.charged_ns();
  governor_.observe(now_ns, cpu_ns, charged_ns);
  rest_cpu_share_.store(governor_.rest_share(), std::memory_order_relaxed);
  read_cpu_share_.store(governor_.read_share(), std::memory_order_relaxed);
}

void Scheduler::update_budget_scale(int64_t now_ns) {
  // The readings the budget cannot put off past their max safe interval use their floor share
  // whatever the budget says: it comes off the total first, so that the shares handed out add up
  // to what the reads cost (with 8 simulated H200s the sample buffers' floor is 0.34 % of a core,
  // and handed out on top of it, the counters' share had kept the thread at 1.6 %). What is left
  // never falls below a tenth of the total, so that many boards' sample buffers cannot stop the
  // energy counters altogether.
  double use[kGroups] = {0, 0, 0, 0};
  double floors = 0;
  for (const Task& t : tasks_)
    if (t.next_ns != INT64_MAX && t.budget.share() > 0) {
      use[static_cast<int>(group_of(t.kind))] += share_in_use(t) - floor_share(t);
      floors += floor_share(t);
    }
  const double total = governor_.read_share();
  const double rest = total > 0 ? std::max(total - floors, 0.1 * total) : total;
  const auto f = budget_group_scales(use[0], use[1], use[2], use[3], rest);
  // A group over its budget shares it by water-filling: each reading gets at most the level.
  double level[kGroups];
  for (int g = 0; g < kGroups; ++g) {
    level[g] = std::numeric_limits<double>::infinity();
    if (f[static_cast<std::size_t>(g)] >= 1.0) continue;
    level_scratch_.clear();
    for (const Task& t : tasks_)
      if (t.next_ns != INT64_MAX && t.budget.share() > 0 && static_cast<int>(group_of(t.kind)) == g)
        level_scratch_.emplace_back(share_in_use(t) - floor_share(t), weight(t));
    level[g] = water_level(level_scratch_, f[static_cast<std::size_t>(g)] * use[g]);
  }
  for (Task& t : tasks_) {
    if (t.budget.share() <= 0) continue;
    const double l = level[static_cast<int>(group_of(t.kind))] * weight(t);
    const double floor = floor_share(t);
    const double u = share_in_use(t) - floor;
    const double scale = u > l ? (l + floor) / t.budget.share() : 1.0;
    if (scale != t.budget.rate() / t.budget.share()) t.budget.set_scale(scale, now_ns);
  }
}

// A window's end waits for a counter point after it up to 4 counter intervals: the stretched
// interval, or the wait until the next counter read (a budget in debt), when longer.
void Scheduler::update_end_timeout(int64_t now_ns) {
  int64_t slowest_counter = opt_.counter_interval_ns;
  for (const Task& t : tasks_)
    if (t.kind == ReadingKind::energy_counter_j && t.next_ns != INT64_MAX)
      slowest_counter = std::max({slowest_counter, expected_interval_ns(t), t.next_ns - now_ns});
  end_timeout_ns_.store(4 * slowest_counter, std::memory_order_relaxed);
}

// Put the task's next read off until its budget allows it; a grid counter's read stays on the
// grid (the first slot, at the same offset from an update, the budget allows).
void Scheduler::pace(Task& t, int64_t now_ns, int64_t read_start_ns) {
  if (t.next_ns == INT64_MAX || !t.pace_next) return;
  int64_t ok = t.budget.earliest_ns(now_ns);
  // Losing data is worse than spending CPU: a reading that loses history when read too rarely
  // (the sample buffer) is never put off past its max safe interval.
  if (t.max_gap_ns > 0) ok = std::min(ok, std::max(t.next_ns, read_start_ns + t.max_gap_ns));
  if (ok <= t.next_ns) return;
  const std::optional<int64_t> slot = t.counter ? t.counter->grid_slot(ok, t.align_ns) : std::nullopt;
  t.next_ns = slot ? *slot : ok;
  stretched_reads_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace wattlab
