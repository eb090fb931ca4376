// `wattlab serve`'s per-process part: a ProcessSampler over the GPUs that list processes, and after
// each poll the split of every earlier interval whose data is in (the meter's counter published
// past its end, every process's utilization samples past it: pending_intervals.h) added to
// per-process counters (src/export/process_metrics.h). Nothing on devices without processes: no
// thread, and the exposition is unchanged.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pending_intervals.h"
#include "run_processes.h"
#include "export/process_metrics.h"

namespace wattlab::cli {

class ServeProcesses {
 public:
  ServeProcesses(Recording& rec, const ProcessOptions& o);  // before rec.start()
  ~ServeProcesses() { stop(); }  // the sampler's last poll adds to counters_, so it stops first
  void start();                                             // after rec.start()
  void stop();                                              // before rec.end()
  std::string format(const std::string& host) const;        // "" when no GPU lists processes
  // The time the split intervals cover, from the first one's begin to the newest one's end
  // ({0, 0} before the first): the counters add up to the board's energy over it.
  std::pair<int64_t, int64_t> split_span_ns() const;

 private:
  void after_poll(int64_t t_ns);
  // The interval's estimate once its data is in (the counter published past its end, every
  // process's samples past it); nullopt before.
  std::optional<WindowResult> ready_estimate(int64_t t_begin_ns, int64_t t_end_ns) const;
  void split(const WindowResult& w);

  Recording& rec_;
  ProcessOptions opt_;
  std::vector<Sensor*> sensors_;
  std::unique_ptr<ProcessSampler> sampler_;
  ProcessEnergyCounters counters_;
  int64_t last_t_ns_ = 0;      // the newest poll (sampler thread only)
  PendingIntervals pending_;   // sampler thread only
  std::atomic<int64_t> span_begin_ns_{0}, span_end_ns_{0};
};

}  // namespace wattlab::cli
