#include "wattlab/meter/meter.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <mutex>
#include <thread>

#include "counter_grid.h"
#include "estimate.h"
#include "timeline.h"

namespace wattlab {
namespace {

// Reads cheaper than this are taken at plain intervals; dearer counters are read on their grid.
constexpr int64_t kExpensiveReadNs = 1'000'000;
// Every Nth read of a grid-tracked counter brackets the update to keep the grid locked.
constexpr int kBracketEvery = 5;

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
  int64_t interval_ns = 0;
  int64_t next_ns = 0;
  // Grid-tracked counter state.
  bool grid = false;
  int phase = 0;  // 0 probing, 1 locked single read, 2 bracket: first read done
  int reads_since_bracket = 0;
  double probe_value = 0;
  int64_t probe_t_ns = 0;
  int64_t last_point_t_ns = INT64_MIN;
  int64_t value_seen_t_ns = INT64_MIN;  // when the plain path first read the current value  // newest counter point added by the plain (gridless) path
  bool have_probe = false;
  std::unique_ptr<CounterGrid> tracker;
};

struct WindowRec {
  WindowId id = 0;
  std::string name;
  int64_t a_ns = 0;
  int64_t b_ns = -1;  // -1 while open
  std::vector<std::optional<EdgeEstimate>> begin;  // anchored per domain
  std::optional<WindowResult> final_result;
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
    states_.resize(refs_.size());
    live_.resize(refs_.size());
    accum_.resize(refs_.size());
    start_ns_ = clock.now_ns();
    fail_streak_.assign(refs_.size() * kReadingKindCount, 0);
    const int64_t now = clock_.now_ns();
    for (uint32_t d = 0; d < refs_.size(); ++d)
      for (const auto& m : refs_[d].domain.model.readings) tasks_.push_back(make_task(d, m, now));
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
      case ReadingKind::power_average_w: t.interval_ns = opt_.power_interval_ns; break;
      case ReadingKind::power_sample_w: t.interval_ns = opt_.samples_interval_ns; break;
      default: t.interval_ns = opt_.telemetry_interval_ns; break;
    }
    if (m.max_safe_interval_ns > 0) t.interval_ns = std::min(t.interval_ns, m.max_safe_interval_ns);
    t.interval_ns = std::max<int64_t>(t.interval_ns, 1'000'000);
    return t;
  }

  // One sampler step: run the earliest due task. Returns the time of the next due task.
  void run_task(Task& t) {
    if (states_[t.domain].lost) {
      t.next_ns = INT64_MAX;
      return;
    }
    scratch_.clear();
    const int64_t t0 = clock_.now_ns();
    const int64_t late_ns = t0 - t.next_ns;
    const Status st = refs_[t.domain].sensor->read(refs_[t.domain].local, t.kind, scratch_);
    const int64_t t1 = clock_.now_ns();
    const int64_t mid = t0 + (t1 - t0) / 2;
    std::lock_guard lk(mu_);
    if (t.reads++ > 0) record_lateness(late_ns);
    stats_.newest_read_ns = t0;
    Timeline& tl = timelines_[t.domain];
    int& streak = fail_streak_[t.domain * kReadingKindCount + static_cast<std::size_t>(t.kind)];
    ReadingHealth& health = live_[t.domain].readings[static_cast<std::size_t>(t.kind)];
    if (!st.ok()) {
      ++health.read_errors;
      health.last_error_ns = mid;
      health.last_error = st.error().message();
      tl.add_failure(mid, t.kind);
      if (st.error().kind == ErrorKind::device_lost) {
        states_[t.domain] = {true, mid};
        event(mid, t.domain, t.kind, "device_lost", st.error().message());
        t.next_ns = INT64_MAX;
        return;
      }
      if (streak++ == 0) event(mid, t.domain, t.kind, "read_error", st.error().message());
      t.next_ns = t1 + t.interval_ns;
      t.phase = 0;
      t.have_probe = false;
      return;
    }
    if (streak > 0) {
      event(mid, t.domain, t.kind, "recovered", "reads work again after " + std::to_string(streak) + " failure(s)");
      streak = 0;
    }
    ++health.reads_ok;
    health.last_ok_ns = mid;
    if (!scratch_.empty()) health.latest = scratch_.back();
    for (const Reading& r : scratch_) export_reading(t.domain, r);
    if (t.kind == ReadingKind::energy_counter_j) {
      counter_read(t, tl, scratch_.at(0).value, mid, t1 - t0);
    } else {
      for (const Reading& r : scratch_) {
        if (r.kind == ReadingKind::power_sample_w) tl.add_sample(r);
        else if (r.kind == ReadingKind::power_instant_w) tl.add_instant(r);
        else tl.add_other(r);
      }
      t.next_ns = t0 + t.interval_ns;
    }
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
      const int64_t margin = std::max<int64_t>(2 * g.uncertainty_ns(), 2'000'000) + dur;
      if (t.phase == 0 || t.phase == 2) {
        // Probing or bracketing: a change since the previous read pins the update between them.
        if (t.have_probe && value != t.probe_value) {
          g.add_bracket(t.probe_t_ns, mid);
          ev = tl.add_counter(value, g.update_at_or_before(mid), g.uncertainty_ns());
          t.phase = 1;
          t.have_probe = false;
          t.reads_since_bracket = 0;
          t.next_ns = g.update_at_or_before(mid + t.interval_ns) + margin;
        } else if (t.phase == 2 && t.have_probe) {
          // No change across the predicted update: the grid drifted; probe again.
          g.unlock();
          t.phase = 0;
          t.probe_value = value;
          t.probe_t_ns = mid;
          t.next_ns = clock_.now_ns();
        } else {
          t.have_probe = true;
          t.probe_value = value;
          t.probe_t_ns = mid;
          // Probing reads back to back; a bracket's second read lands just after the update.
          t.next_ns = t.phase == 0 ? clock_.now_ns() : g.next_update_after(mid) + margin;
        }
      } else {
        ev = tl.add_counter(value, g.update_at_or_before(mid), g.uncertainty_ns());
        if (++t.reads_since_bracket >= kBracketEvery) {
          // Next time: one read just before the update, one just after.
          t.phase = 2;
          t.have_probe = false;
          t.next_ns = g.update_at_or_before(mid + t.interval_ns) - margin;
        } else {
          t.next_ns = g.update_at_or_before(mid + t.interval_ns) + margin;
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
  void process_windows() {
    bool any = false;
    for (auto pit = pending_.begin(); pit != pending_.end();) {
      WindowRec& w = windows_.at(*pit);
      for (std::size_t d = 0; d < refs_.size(); ++d) {
        if (w.begin[d]) continue;
        const EdgeEstimate e = timelines_[d].energy_at(w.a_ns);
        if (e.ok && e.covered) w.begin[d] = e;
      }
      if (w.b_ns < 0) {
        ++pit;
        continue;
      }
      bool covered = true;
      for (std::size_t d = 0; d < refs_.size(); ++d)
        if (!states_[d].lost && !end_is_covered(timelines_[d], w.b_ns)) covered = false;
      // A domain that stopped answering must not hold results back forever.
      if (!covered && clock_.now_ns() - w.b_ns > 4 * opt_.counter_interval_ns) covered = true;
      if (!covered) {
        ++pit;
        continue;
      }
      w.final_result = build(w, true);
      any = true;
      finished_.push_back(w.id);
      pit = pending_.erase(pit);
    }
    // Bounded memory: only the newest finished results are kept.
    while (finished_.size() > opt_.finished_window_capacity) {
      windows_.erase(finished_.front());
      finished_.pop_front();
    }
    if (any) cv_.notify_all();
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
      if (!final && r.domains.back().issues.empty()) r.domains.back().issues.push_back("provisional");
    }
    return r;
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
    while (!stop_.load(std::memory_order_acquire)) {
      Task* t = next_task();
      if (!t || t->next_ns == INT64_MAX) {
        std::unique_lock lk(mu_);
        cv_stop_.wait_for(lk, std::chrono::milliseconds(100), [&] { return stop_.load(); });
        process_windows();
        continue;
      }
      // Sleep in slices so stop() is never held up by a long interval.
      const int64_t target = t->next_ns;
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
      sampler_cpu_ns_.store(thread_cpu_ns(), std::memory_order_relaxed);
      std::lock_guard lk(mu_);
      if (!t->read_once) {
        t->read_once = true;
        if (++tasks_read_once_ == tasks_.size()) cv_.notify_all();
      }
      process_windows();
    }
  }

  std::vector<SensorPtr> sensors_;
  Clock& clock_;
  MeterOptions opt_;
  std::vector<DomainRef> refs_;
  std::vector<Domain> domains_;
  std::vector<Task> tasks_;
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
  std::set<WindowId> pending_;     // not final yet: the only ones process_windows() looks at
  std::deque<WindowId> finished_;  // final, oldest first; trimmed to finished_window_capacity
  WindowId next_id_ = 1;
  std::vector<MeterEvent> events_;
  std::vector<TimedReading> export_;
  std::size_t export_dropped_ = 0;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> sampler_cpu_ns_{0};
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
  WindowRec& w = impl_->windows_[id];
  impl_->pending_.insert(id);
  w.id = id;
  w.name = std::string(name);
  w.a_ns = t;
  w.begin.resize(impl_->refs_.size());
  return id;
}

void Meter::close(WindowId id, const std::function<void()>& sync) {
  if (sync) sync();
  const int64_t t = impl_->clock_.now_ns();
  std::lock_guard lk(impl_->mu_);
  auto it = impl_->windows_.find(id);
  if (it == impl_->windows_.end()) throw std::invalid_argument("Meter::close: no window " + std::to_string(id) + " (unknown, or its result was dropped: only the newest finished_window_capacity are kept)");
  if (it->second.b_ns < 0) it->second.b_ns = t;
}

WindowId Meter::add_window(std::string_view name, int64_t t_begin_ns, int64_t t_end_ns) {
  if (t_end_ns < t_begin_ns) throw std::invalid_argument("Meter::add_window: end before begin");
  std::lock_guard lk(impl_->mu_);
  const WindowId id = impl_->next_id_++;
  WindowRec& w = impl_->windows_[id];
  impl_->pending_.insert(id);
  w.id = id;
  w.name = std::string(name);
  w.a_ns = t_begin_ns;
  w.b_ns = t_end_ns;
  w.begin.resize(impl_->refs_.size());
  return id;
}

std::optional<WindowResult> Meter::result(WindowId id) const {
  std::lock_guard lk(impl_->mu_);
  auto it = impl_->windows_.find(id);
  if (it == impl_->windows_.end()) return std::nullopt;
  return it->second.final_result;
}

WindowResult Meter::wait_result(WindowId id, std::chrono::milliseconds timeout) {
  std::unique_lock lk(impl_->mu_);
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
