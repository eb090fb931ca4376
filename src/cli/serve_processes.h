// `wattlab serve`'s per-process part: a ProcessSampler over the GPUs that list processes, and after
// each poll the split of the interval before the previous poll (by then the meter's timeline covers
// it) added to per-process counters (src/export/process_metrics.h). Nothing on devices without
// processes: no thread, and the exposition is unchanged.
#pragma once
#include <memory>
#include <string>
#include <vector>

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

 private:
  void after_poll(int64_t t_ns);

  Recording& rec_;
  ProcessOptions opt_;
  std::vector<Sensor*> sensors_;
  std::unique_ptr<ProcessSampler> sampler_;
  ProcessEnergyCounters counters_;
  int64_t prev_t_ns_ = 0, last_t_ns_ = 0;  // the two newest polls (sampler thread only)
};

}  // namespace wattlab::cli
