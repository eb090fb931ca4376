// Per-process GPU use over time: a thread that polls every GPU domain that reports processes (NVML)
// at a fixed interval, keeps each GPU's polls (the listed pids) and every utilization sample the
// driver published (each over its own sample period), reads each new process's
// labels from /proc while it is alive (command name, container, pod, Slurm job, whether it belongs
// to the measured command's process tree), measures the idle floor from the meter's energy between
// polls with no process on the GPU, and splits an interval's energy per process
// (src/meter/process_split.h; docs/per-process.md).
#pragma once
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "wattlab/core/clock.h"
#include "wattlab/meter/meter.h"
#include "meter/process_split.h"
#include "sensors/proc_info.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

struct ProcessSamplerOptions {
  int64_t interval_ns = 500'000'000;  // real time between polls
  std::filesystem::path proc_root = "/proc";
  unsigned tree_root_pid = 0;  // processes descending from it are the command's tree (0: none)
  int64_t keep_ns = 0;         // polls older than this are dropped (0: kept for the sampler's life)
  // Idle power given by the user; else the measured floor; else unknown (process_split.h).
  std::optional<double> idle_power_w;
  double idle_power_u95_w = 0;
  double proxy_rel_u95 = 0.10;
  // Called on the sampler's thread after each poll, with the poll's time.
  std::function<void(int64_t t_ns)> after_poll;
};

struct SeenProcess {
  ProcInfo info;  // read when first seen, so a process that ended keeps its labels
  bool in_tree = false;
  int64_t first_t_ns = 0, last_t_ns = 0;
};

// Mean power between polls that saw no process on the GPU, with twice the spread of those means.
struct IdleFloor {
  std::size_t intervals = 0;
  double duration_s = 0;
  double power_w = 0, u95_w = 0;
};

class ProcessSampler {
 public:
  // `sensors` and `meter` (may be null: no measured floor) are borrowed and must outlive the sampler.
  ProcessSampler(std::vector<Sensor*> sensors, const Meter* meter, Clock& clock, ProcessSamplerOptions options);
  ~ProcessSampler();
  ProcessSampler(const ProcessSampler&) = delete;
  ProcessSampler& operator=(const ProcessSampler&) = delete;

  bool any_gpu() const { return !gpus_.empty(); }
  std::vector<std::string> gpu_ids() const;

  void poll();   // one poll now, on the calling thread
  void start();  // a thread that polls every interval_ns
  void stop();   // polls once more and joins

  std::optional<IdleFloor> idle_floor(const std::string& gpu_id) const;
  std::map<unsigned, SeenProcess> seen() const;
  // Whether some poll of the GPU listed a process whose describe time overlaps [t0, t1].
  bool saw_processes(const std::string& gpu_id, int64_t t0_ns, int64_t t1_ns) const;
  // The time up to which the GPU's utilization samples are complete: the oldest of the publishing
  // processes' newest samples, or a successful query's time less the longest span a sample covers
  // (a sample period from a history of samples, kMaxRowSpanNs from newest rows: a sample for time
  // before that would have come back already). INT64_MIN before the first successful query.
  int64_t samples_until_ns(const std::string& gpu_id) const;
  // The longest sample period NVML documents for its utilization samples (1/6 s to 1 s by product).
  static constexpr int64_t kMaxSamplePeriodNs = 1'000'000'000;
  // The longest span one row of a driver that keeps only each process's newest row counts over:
  // the sensor's look-back, as far as such a row's average reaches (docs/per-process.md).
  static constexpr int64_t kMaxRowSpanNs = 2'000'000'000;
  // The first error a GPU's process query returned, if any (permissions, a driver without it).
  std::map<std::string, std::string> errors() const;

  // The split of a GPU's energy (energy_j with its 95 % uncertainty_j) over [t0, t1], per process
  // and for the two groups. device_busy_pct: the GPU's mean utilization there, if known.
  GpuAttribution attribute(const std::string& gpu_id, int64_t t0_ns, int64_t t1_ns, double energy_j,
                           double uncertainty_j, std::optional<double> device_busy_pct) const;

 private:
  struct Gpu {
    Sensor* sensor = nullptr;
    std::size_t domain_index = 0;  // in its sensor
    std::string id;
    std::optional<std::size_t> meter_index;
    std::vector<ProcessPoll> polls;
    std::vector<SmSample> samples;              // as they arrived (the split needs no order)
    std::map<unsigned, int64_t> last_sample_t_ns;  // each pid's newest sample
    std::deque<int64_t> spacings_ns;            // recent spacings between a pid's successive samples
    // A query brought two or more samples of one process: the driver keeps a history of samples,
    // one per period. Until then it is taken to keep only each process's newest row.
    bool sample_history = false;
    int64_t samples_until_ns = INT64_MIN;
    bool last_empty = false;
    int64_t last_energy_t_ns = 0;
    double last_energy_j = 0;
    bool have_energy = false;
    std::vector<std::pair<double, double>> floor;  // (duration s, mean power W) of no-process intervals
    std::string error;
  };
  const Gpu* find(const std::string& id) const;
  static int64_t sample_period_ns(const Gpu& g);
  static void add_samples(Gpu& g, const std::vector<ProcessUsage>& list);
  void run();

  std::vector<Gpu> gpus_;
  const Meter* meter_;
  Clock& clock_;
  ProcessSamplerOptions opt_;
  mutable std::mutex mu_;
  std::map<unsigned, SeenProcess> seen_;
  std::mutex run_mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace wattlab
