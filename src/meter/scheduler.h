// When the sampler reads what: one task per reading of each domain (its interval and next read),
// the CPU budget that may put a read off (read_budget.h), wake-up coalescing on real time, and the
// thread CPU governor. Sampler thread only (on virtual time, the thread that advances the meter);
// the figures other threads read (end timeout, stretched reads, governor shares) are atomics.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "counter_tracker.h"
#include "read_budget.h"
#include "refresh_hint.h"
#include "wattlab/meter/meter.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

struct Task {
  uint32_t domain = 0;
  ReadingKind kind{};
  std::vector<ReadingKind> with;  // read right after kind's read, which computes them (ReadingModel::read_with)
  bool read_once = false;         // at least one read attempted (for Meter::wait_first_reads)
  uint64_t reads = 0;  // reads attempted (lateness counts from the second: the first waits for start)
  int64_t interval_ns = 0;
  int64_t next_ns = 0;  // INT64_MAX: never again (the domain is lost)
  // CPU budget: what a read costs and how often the reading may be read.
  ReadBudget budget;
  double reads_per_slot = 1;  // reads per interval (a grid counter's brackets add a read every Nth)
  bool pace_next = true;      // the next read is a scheduled one the budget may put off
  int64_t align_ns = 0;       // a grid counter's next read sits this far from an update
  int64_t max_gap_ns = 0;     // the sensor model's max safe interval (the sample buffer's depth): the budget stops there
  int64_t last_dur_ns = -1;   // the newest read's duration (-1: none)
  std::unique_ptr<CounterTracker> counter;  // energy counters: where each value belongs, when to read next
  // A grid counter's start-up: where the domain's instant power field refreshes, found first with
  // reads of that field (hint_kind), so that the grid probe starts there (refresh_hint.h).
  std::unique_ptr<RefreshHint> hint;
  ReadingKind hint_kind{};

  bool hinting() const { return hint && hint->searching(); }

  bool probe_free() const { return counter && counter->probe_free(); }
};

// CPU time the calling thread has used (getrusage RUSAGE_THREAD), in ns.
int64_t thread_cpu_ns();
// CLOCK_THREAD_CPUTIME_ID (ns): exact, where getrusage's thread times may step by a scheduler
// tick; for one read's CPU.
int64_t thread_cpu_clock_ns();

class Scheduler {
 public:
  // Reads cheaper than this are taken at plain intervals; dearer counters are read on their grid.
  static constexpr int64_t kExpensiveReadNs = 1'000'000;
  // Real time: waking up costs more than a cheap read (tens of us on a VM), so a read due within
  // kCoalesceNs of the one that woke the sampler is taken in the same wake-up. Energy counters
  // keep their instants (a grid counter's read is timed against the counter's updates).
  static constexpr int64_t kCoalesceNs = 5'000'000;

  // real_time: the meter runs on a real clock (MeterOptions::counter_probe_hint).
  Scheduler(const std::vector<Domain>& domains, const MeterOptions& opt, int64_t now_ns, bool real_time = false);

  std::vector<Task>& tasks() { return tasks_; }
  const std::vector<Task>& tasks() const { return tasks_; }
  // The task due first (nullptr without tasks); its next_ns is INT64_MAX when nothing is due ever.
  Task* next_task();
  // Real time: when to wake up for t (a little early, to take it with the read that wakes us).
  static int64_t wake_ns(const Task& t);

  // A read's outcome sets the next read: call one of these, between begin_read() and after_read().
  void begin_read(Task& t) const;
  void after_plain_read(Task& t, int64_t t0_ns) const;
  void after_counter_read(Task& t, const CounterNext& next) const;
  void after_failed_read(Task& t, int64_t t1_ns) const;
  void after_lost(Task& t) const;
  // Pays for the read (dur_ns < 0: there was none), shares the budget out again, puts t's next
  // read off if its budget is in debt, and updates the end timeout. end_ns: when the step ended.
  // cpu_ns: on real time, the thread CPU the read used (< 0: not measured, the virtual clock). The
  // budget pays the smaller of the two: a read preempted by other processes takes longer on the
  // clock than on the CPU, and charged its whole duration it would put the reading off as if it
  // had used the CPU that long. The mean cost, which times the counter's reads, stays the
  // duration's.
  void after_read(Task& t, int64_t dur_ns, int64_t end_ns, int64_t cpu_ns = -1);
  // MeterOptions::budget_counts_step_cpu: the step's CPU besides the read, paid for too.
  void charge_step_overhead(Task& t, int64_t step_cpu_ns, int64_t now_ns) const;

  // Real time: the thread CPU governor (MeterOptions::sampler_thread_cpu_share).
  void start_governor(int64_t now_ns, int64_t cpu_ns);
  void observe_thread_cpu(int64_t now_ns, int64_t cpu_ns);

  // A window's end waits for a counter point after it up to this long.
  int64_t end_timeout_ns() const { return end_timeout_ns_.load(std::memory_order_relaxed); }
  uint64_t stretched_reads() const { return stretched_reads_.load(std::memory_order_relaxed); }
  double rest_cpu_share() const { return rest_cpu_share_.load(std::memory_order_relaxed); }
  double read_cpu_share() const { return read_cpu_share_.load(std::memory_order_relaxed); }

 private:
  Task make_task(const Domain& domain, uint32_t d, const ReadingModel& m, int64_t now_ns) const;
  void update_budget_scale(int64_t now_ns);
  void update_end_timeout(int64_t now_ns);
  void pace(Task& t, int64_t now_ns, int64_t read_start_ns);

  MeterOptions opt_;
  bool hint_;  // grid counters start their probe from a RefreshHint
  std::vector<Task> tasks_;
  std::vector<std::pair<double, double>> level_scratch_;  // update_budget_scale's (use, weight), reused
  ThreadCpuGovernor governor_;
  std::atomic<int64_t> end_timeout_ns_{4'000'000'000};
  std::atomic<uint64_t> stretched_reads_{0};
  std::atomic<double> rest_cpu_share_{0}, read_cpu_share_{0};
};

}  // namespace wattlab
