// The meter's wiring: the sampler thread (or, on virtual time, advance_to) runs the scheduler's
// tasks, files each read into the timelines and live state, and lets the window book finalize
// results; open/close go through the window intake and never take the meter's lock.
#include "wattlab/meter/meter.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <stdexcept>
#include <thread>

#include "estimate.h"
#include "live_state.h"
#include "scheduler.h"
#include "timeline.h"
#include "window_book.h"
#include "window_intake.h"

namespace wattlab {
namespace {

// At most this many window results are built per hold of the meter's lock, so that threads that
// read results or snapshots never wait behind a long batch.
constexpr std::size_t kFinalPerLock = 16;
// Real time: the bookkeeping after reads runs at least every this many reads, so a sampler that
// falls behind still finalizes windows.
constexpr int kReadsPerBatch = 32;

struct SensorRef {
  Sensor* sensor = nullptr;
  std::size_t local = 0;  // the domain's index within its sensor
};

DomainTimelines make_timelines(const std::vector<SensorPtr>& sensors, std::size_t capacity) {
  DomainTimelines tl;
  for (const auto& s : sensors)
    for (const Domain& d : s->domains()) tl.domains.push_back(d);
  for (const Domain& d : tl.domains) tl.timelines.emplace_back(d, capacity);
  for (const Timeline& t : tl.timelines) tl.any_counter |= t.has_counter();
  tl.states.resize(tl.domains.size());
  return tl;
}

std::string no_window(const char* what, WindowId id) {
  return std::string("Meter::") + what + ": no window " + std::to_string(id) +
         " (unknown, or its result was dropped: only the newest finished_window_capacity are kept)";
}

}  // namespace

class Meter::Impl {
 public:
  Impl(std::vector<SensorPtr> sensors, Clock& clock, MeterOptions options)
      : sensors_(std::move(sensors)),
        clock_(clock),
        opt_(options),
        start_ns_(clock.now_ns()),
        tl_(make_timelines(sensors_, opt_.timeline_capacity)),
        sched_(tl_.domains, opt_, clock.now_ns(), !clock.is_virtual()),
        live_(tl_.domains, opt_.export_capacity, start_ns_),
        book_(tl_.size(), tl_.any_counter, opt_.finished_window_capacity) {
    for (auto& s : sensors_)
      for (std::size_t i = 0; i < s->domains().size(); ++i) refs_.push_back({s.get(), i});
  }

  // One sampler step: read the task's reading, then pay for it and schedule the next.
  void run_task(Task& t) {
    sched_.begin_read(t);
    int64_t dur = -1, t_end = 0, cpu = -1;
    read_task(t, dur, t_end, cpu);
    sched_.after_read(t, dur, t_end, cpu);
  }

  // cpu_out: on real time, the thread CPU the read used (Scheduler::after_read).
  void read_task(Task& t, int64_t& dur_out, int64_t& t_end_out, int64_t& cpu_out) {
    step_read_ = false;
    if (tl_.states[t.domain].lost) {  // written by this thread only
      step_read_ = true;
      sched_.after_lost(t);
      return;
    }
    // The counter's start-up hint reads another field, or puts the read off: the counter is not
    // read yet (Meter::wait_first_reads waits for its first read).
    if (t.hinting()) return read_hint(t);
    if (t.counter)
      if (const auto later = t.counter->put_off_hinted_read(clock_.now_ns())) {
        t.next_ns = *later;  // too late to bracket the hinted instant: one period on, unread
        return;
      }
    step_read_ = true;
    scratch_.clear();
    const bool real = !clock_.is_virtual();
    const int64_t cpu0 = real ? thread_cpu_clock_ns() : 0;
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
    if (real) cpu_out = thread_cpu_clock_ns() - cpu0;
    const int64_t mid = t0 + (t1 - t0) / 2;
    dur_out = t2 - t0;
    t_end_out = t2;
    const std::span<const Reading> all(scratch_);
    std::lock_guard lk(mu_);
    live_.count_read(t0, t2 - t0, t.reads++ > 0 ? &late_ns : nullptr);
    Timeline& tl = tl_.timelines[t.domain];
    DomainState& state = tl_.states[t.domain];
    using Outcome = LiveState::Outcome;
    Outcome o = live_.record(t.domain, t.kind, st, mid, all.subspan(0, own_end), tl, state);
    std::size_t begin = own_end;
    for (std::size_t i = 0; i < with_status_.size() && o != Outcome::lost; ++i) {
      if (live_.record(t.domain, t.with[i], with_status_[i], t1 + (t2 - t1) / 2,
                       all.subspan(begin, with_end_[i] - begin), tl, state) == Outcome::lost)
        o = Outcome::lost;
      begin = with_end_[i];
    }
    if (o == Outcome::lost) return sched_.after_lost(t);
    if (o == Outcome::failed) return sched_.after_failed_read(t, t1);
    if (!t.counter) return sched_.after_plain_read(t, t0);
    const double value = scratch_.at(0).value;
    const CounterNext next = t.counter->on_read({value, mid, t1 - t0, clock_.now_ns(), t.budget.cost_ns()});
    sched_.after_counter_read(t, next);
    if (!next.point) return;
    std::string ev = tl.add_counter(next.point->value, next.point->t_ns, next.point->sigma_ns);
    if (!ev.empty()) live_.counter_reset(t.domain, mid, std::move(ev));
  }

  // A grid counter's start-up: one read of the domain's cheap instant power field in its stead,
  // to find where that field refreshes (refresh_hint.h); once found, the counter's probe starts
  // there. The value only times the refresh (the field's own task files its readings), and the
  // read is not the counter's: it is not charged to the counter's budget (the thread CPU governor
  // sees it, as it sees the counter's free probe).
  void read_hint(Task& t) {
    scratch_.clear();
    const int64_t t0 = clock_.now_ns();
    const Status st = refs_[t.domain].sensor->read(refs_[t.domain].local, t.hint_kind, scratch_);
    const int64_t t1 = clock_.now_ns();
    {
      std::lock_guard lk(mu_);
      live_.count_read(t0, t1 - t0, nullptr);  // the sampler's read time counts every read
    }
    if (!st.ok() || scratch_.empty()) {
      t.hint->give_up();
      t.next_ns = t1;
      return;
    }
    const int64_t next_ns = t.hint->on_read(scratch_.front().value, t0 + (t1 - t0) / 2);
    if (t.hint->searching()) {
      t.next_ns = next_ns;
    } else if (const auto& b = t.hint->bracket()) {
      t.next_ns = t.counter->take_hint(b->lo_ns, b->hi_ns, t1, t.budget.cost_ns());
    } else {
      t.next_ns = t1;
    }
  }

  // Caller holds mu_. The edges the callers pushed, applied in the order they pushed them.
  void apply_edges() {
    edges_.clear();
    intake_.drain(edges_);
    for (EdgeEvent& e : edges_) book_.apply(e);
  }

  // Caller holds mu_. Anchors and finalizes windows (at most max_final results); returns true
  // when more are ready.
  bool process_windows(std::size_t max_final = SIZE_MAX) {
    apply_edges();
    dropped_.clear();
    const auto p = book_.process(tl_, clock_.now_ns(), sched_.end_timeout_ns(), max_final, dropped_,
                                 has_sink_ ? &ready_ : nullptr);
    intake_.dropped(dropped_);
    if (p.finished_any) cv_.notify_all();
    return p.more;
  }

  // Process windows, dropping the lock every kFinalPerLock results so readers get in between and
  // the results made final go to the sink.
  void process_windows_yielding(std::unique_lock<std::mutex>& lk) {
    while (process_windows(kFinalPerLock)) {
      lk.unlock();
      hand_on();
      std::this_thread::yield();
      lk.lock();
    }
    if (!ready_.empty()) {
      lk.unlock();
      hand_on();
      lk.lock();
    }
  }

  // Caller does not hold mu_. Hands the results made final so far to the sink: one caller at a
  // time, so each batch follows the one before.
  void hand_on() {
    std::lock_guard s(sink_mu_);
    {
      std::lock_guard lk(mu_);
      handing_.swap(ready_);
    }
    if (handing_.empty()) return;
    try {
      if (sink_) sink_(handing_);
    } catch (...) {
      // The sink must not throw (meter.h); the sampler goes on, and the batch stays among the
      // newest finished results for result().
    }
    handing_.clear();
  }

  // Caller holds mu_: the result so far of a window the book holds.
  WindowResult provisional(const WindowRec& w) const {
    if (w.final_result) return *w.final_result;
    return build_window_result(tl_, w.id, w.name, w.a_ns, w.b_ns >= 0 ? w.b_ns : clock_.now_ns(), w.begin, false);
  }

  void step_until(int64_t t_end_ns) {
    while (true) {
      Task* t = sched_.next_task();
      if (!t || t->next_ns > t_end_ns) break;
      clock_.sleep_until_ns(t->next_ns);
      run_task(*t);
      std::unique_lock lk(mu_);
      process_windows_yielding(lk);
    }
    clock_.sleep_until_ns(t_end_ns);
    std::unique_lock lk(mu_);
    process_windows_yielding(lk);
  }

  // Sleeps until t_ns or stop(), in slices so stop() is never held up by a long interval.
  void sleep_until(int64_t t_ns) {
    std::unique_lock lk(stop_mu_);
    while (!stop_.load(std::memory_order_acquire) && clock_.now_ns() < t_ns)
      cv_stop_.wait_for(lk, std::chrono::nanoseconds(std::min<int64_t>(t_ns - clock_.now_ns(), 50'000'000)),
                        [&] { return stop_.load(); });
  }

  void thread_main() {
    int batch = 0;
    if (!opt_.budget_counts_step_cpu) sched_.start_governor(clock_.now_ns(), thread_cpu_ns());
    while (!stop_.load(std::memory_order_acquire)) {
      Task* t = sched_.next_task();
      if (!t || t->next_ns == INT64_MAX) {
        sleep_until(clock_.now_ns() + 100'000'000);
        std::unique_lock lk(mu_);
        process_windows_yielding(lk);
        continue;
      }
      sleep_until(Scheduler::wake_ns(*t));
      if (stop_.load()) break;
      try {
        run_task(*t);
      } catch (const std::exception& e) {
        // No exception escapes the sampler: it becomes an event on the timeline.
        std::lock_guard lk(mu_);
        live_.event(clock_.now_ns(), t->domain, t->kind, "read_error", std::string("exception: ") + e.what());
        t->next_ns = clock_.now_ns() + t->interval_ns;
      }
      if (opt_.budget_counts_step_cpu) {
        // The budget pays for the whole step, not only the read: on a VM a wake-up alone can
        // cost tens of us, more than a power read.
        const int64_t cpu_ns = thread_cpu_ns();
        const int64_t step_cpu_ns = cpu_ns - std::max<int64_t>(sampler_cpu_ns_.load(std::memory_order_relaxed), 0);
        sched_.charge_step_overhead(*t, step_cpu_ns, clock_.now_ns());
        sampler_cpu_ns_.store(cpu_ns, std::memory_order_relaxed);
      }
      std::unique_lock lk(mu_);
      if (!t->read_once && step_read_) {
        t->read_once = true;
        if (++tasks_read_once_ == sched_.tasks().size()) cv_.notify_all();
      }
      // Another read is due already: run it first. The bookkeeping below runs once per wake-up,
      // not once per read (a wake-up reads 1-16 readings; getrusage is a system call), and at
      // least every kReadsPerBatch reads.
      if (const Task* n = sched_.next_task(); n && Scheduler::wake_ns(*n) <= clock_.now_ns() && ++batch < kReadsPerBatch)
        continue;
      batch = 0;
      process_windows_yielding(lk);
      lk.unlock();
      if (!opt_.budget_counts_step_cpu) observe_thread_cpu();
    }
    sampler_cpu_ns_.store(thread_cpu_ns(), std::memory_order_relaxed);
  }

  // Once per wake-up on real time: the thread's CPU so far, for the governor and the stats.
  void observe_thread_cpu() {
    const int64_t cpu_ns = thread_cpu_ns();
    sampler_cpu_ns_.store(cpu_ns, std::memory_order_relaxed);
    sched_.observe_thread_cpu(clock_.now_ns(), cpu_ns);
  }

  std::vector<SensorPtr> sensors_;
  Clock& clock_;
  MeterOptions opt_;
  int64_t start_ns_;
  std::vector<SensorRef> refs_;  // per domain
  WindowIntake intake_;          // callers' edges: lock-free, never behind mu_

  mutable std::mutex mu_;  // guards tl_ (but domains), live_, book_, tasks_read_once_
  std::condition_variable cv_;  // a result became final, or every reading was read once
  DomainTimelines tl_;
  // Sampler thread only (the calling thread on virtual time).
  Scheduler sched_;
  std::vector<Reading> scratch_;
  std::vector<Status> with_status_;    // read_task's scratch: each ride-along read's status
  std::vector<std::size_t> with_end_;  // and where its readings end in scratch_
  LiveState live_;
  WindowBook book_;
  std::vector<EdgeEvent> edges_;     // apply_edges' scratch
  std::vector<WindowId> dropped_;    // process_windows' scratch
  bool has_sink_ = false;            // a sink is set: results made final are queued in ready_
  std::vector<std::shared_ptr<const WindowResult>> ready_;  // made final, not handed to the sink yet
  std::mutex sink_mu_;  // taken before mu_, never while holding it: guards sink_, handing_
  WindowResultSink sink_;
  std::vector<std::shared_ptr<const WindowResult>> handing_;  // the batch being handed on
  std::size_t tasks_read_once_ = 0;
  bool step_read_ = false;  // the last step read the task's reading (or found its device lost)

  std::thread thread_;
  std::mutex stop_mu_;
  std::condition_variable cv_stop_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> sampler_cpu_ns_{0};
  bool started_ = false;
};

Meter::Meter(std::vector<SensorPtr> sensors, Clock& clock, MeterOptions options)
    : impl_(std::make_unique<Impl>(std::move(sensors), clock, options)) {}

Meter::~Meter() { stop(); }

const std::vector<Domain>& Meter::domains() const { return impl_->tl_.domains; }
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
  return impl_->cv_.wait_for(lk, timeout, [&] { return impl_->tasks_read_once_ >= impl_->sched_.tasks().size(); });
}

void Meter::stop() {
  if (!impl_->started_) return;
  {
    std::lock_guard lk(impl_->stop_mu_);
    impl_->stop_.store(true);
  }
  impl_->cv_stop_.notify_all();
  impl_->thread_.join();
  impl_->started_ = false;
  std::unique_lock lk(impl_->mu_);
  impl_->process_windows_yielding(lk);
}

void Meter::advance_to(int64_t t_ns) {
  if (!impl_->clock_.is_virtual()) throw std::logic_error("Meter::advance_to needs a virtual clock");
  impl_->step_until(t_ns);
}

WindowId Meter::open(std::string_view name, const std::function<void()>& sync) {
  if (sync) sync();
  return impl_->intake_.open(name, impl_->clock_.now_ns());
}

void Meter::close(WindowId id, const std::function<void()>& sync) {
  if (sync) sync();
  if (!impl_->intake_.close(id, impl_->clock_.now_ns())) throw std::invalid_argument(no_window("close", id));
}

WindowId Meter::add_window(std::string_view name, int64_t t_begin_ns, int64_t t_end_ns) {
  if (t_end_ns < t_begin_ns) throw std::invalid_argument("Meter::add_window: end before begin");
  return impl_->intake_.add(name, t_begin_ns, t_end_ns);
}

std::optional<WindowResult> Meter::result(WindowId id) const {
  std::lock_guard lk(impl_->mu_);
  impl_->apply_edges();
  const WindowRec* w = impl_->book_.find(id);
  if (!w) return std::nullopt;
  if (!w->final_result) return std::nullopt;
  return *w->final_result;
}

WindowResult Meter::wait_result(WindowId id, std::chrono::milliseconds timeout) {
  std::unique_lock lk(impl_->mu_);
  impl_->apply_edges();
  if (!impl_->book_.find(id)) throw std::invalid_argument(no_window("wait_result", id));
  if (impl_->clock_.is_virtual() || !impl_->started_) {
    impl_->process_windows_yielding(lk);
  } else {
    impl_->cv_.wait_for(lk, timeout, [&] {
      const WindowRec* w = impl_->book_.find(id);
      return !w || w->final_result != nullptr;
    });
  }
  const WindowRec* w = impl_->book_.find(id);
  if (!w) throw std::invalid_argument(no_window("wait_result", id));  // final, then dropped while we waited
  return impl_->provisional(*w);
}

WindowResult Meter::provisional_result(WindowId id) const {
  std::lock_guard lk(impl_->mu_);
  impl_->apply_edges();
  const WindowRec* w = impl_->book_.find(id);
  if (!w) throw std::invalid_argument(no_window("provisional_result", id));
  return impl_->provisional(*w);
}

void Meter::set_result_sink(WindowResultSink sink) {
  std::lock_guard s(impl_->sink_mu_);
  std::lock_guard lk(impl_->mu_);
  impl_->has_sink_ = static_cast<bool>(sink);
  if (!impl_->has_sink_) impl_->ready_.clear();
  impl_->sink_ = std::move(sink);
}

WindowResult Meter::estimate(int64_t t_begin_ns, int64_t t_end_ns, std::string_view name) const {
  std::lock_guard lk(impl_->mu_);
  const DomainTimelines& tl = impl_->tl_;
  bool covered = true;
  for (std::size_t d = 0; d < tl.size(); ++d)
    if (!tl.states[d].lost && !end_is_covered(tl.timelines[d], t_end_ns)) covered = false;
  return build_window_result(tl, 0, std::string(name), t_begin_ns, t_end_ns, {}, covered);
}

std::size_t Meter::drain_readings(std::vector<TimedReading>& out) {
  std::lock_guard lk(impl_->mu_);
  return impl_->live_.drain_readings(out);
}

std::vector<MeterEvent> Meter::events() const {
  std::lock_guard lk(impl_->mu_);
  return impl_->live_.events();
}

MeterSnapshot Meter::snapshot() const {
  std::lock_guard lk(impl_->mu_);
  MeterSnapshot s = impl_->live_.snapshot(impl_->tl_, impl_->clock_.now_ns());
  s.sampler.cpu_ns = impl_->sampler_cpu_ns_.load(std::memory_order_relaxed);
  s.sampler.stretched_reads = impl_->sched_.stretched_reads();
  s.sampler.rest_cpu_share = impl_->sched_.rest_cpu_share();
  s.sampler.read_cpu_share = impl_->sched_.read_cpu_share();
  return s;
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
