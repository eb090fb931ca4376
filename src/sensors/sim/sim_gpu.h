// A GPU that exists only in software, with a known true power trace and sensors that behave like
// an H100/H200's (docs/sensors.md): a cumulative counter updated every 100 ms, an "instant"
// power that averages 25 ms of every 100 ms, a 1 s averaged power, a 20 ms sample buffer, a per-board
// gain error, read costs, and faults on request. Everything it produces is labelled SIMULATED.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim_faults.h"
#include "sim_workload.h"
#include "wattlab/core/clock.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab::sim {

struct SimConfig {
  std::string workload;        // empty: Workload::default_script()
  std::string faults;
  int gpus = 1;
  uint64_t seed = 1;
  // Per-board gain error; NaN: drawn from the seed within ±3% (a real board's is up to ±5%).
  double gain_error = std::numeric_limits<double>::quiet_NaN();
  double noise_w = 1.0;        // standard deviation of the noise on each power reading
  double idle_w = 75.0;
  double board_max_w = 700.0;  // H200 enforced limit
  bool read_costs = true;      // spend the H200's read costs (CPU time on a real clock)
  // The sensor's timing (H200 values from docs/sensors.md).
  int64_t update_period_ns = 100'000'000;
  int64_t instant_window_ns = 25'000'000;
  int64_t average_window_ns = 1'000'000'000;
  int64_t sample_spacing_ns = 20'000'000;
  int64_t sample_window_ns = 20'000'000;  // what one buffered sample averages (undocumented by NVIDIA)
  std::size_t sample_buffer_depth = 119;
  // Share of buffer samples the driver skips (each skip leaves a 2x gap). An H200's buffer is
  // uneven: 17.5% of 22,249 gaps were 22-45 ms at a nominal 20 ms (docs/results/gemm-h200.md).
  double sample_miss_fraction = 0;
  // A memory domain per board (gpu:N/memory, after every board's domain), as NVML's on an H200:
  // only a trailing average of its power (the sim's 1 s average, refreshed every update period),
  // no counter, no instant power. Its true power is memory_idle_w plus memory_share of the board's
  // power above idle: a part of the board's power, never to be added to it.
  bool memory_domain = false;
  double memory_idle_w = 37.0;
  double memory_share = 0.15;
};

class SimGpu final : public Sensor {
 public:
  SimGpu(SimConfig config, Clock& clock);
  std::string backend() const override { return "sim"; }
  const std::vector<Domain>& domains() const override { return domains_; }
  Status read(std::size_t domain_index, ReadingKind kind, std::vector<Reading>& out) override;
  std::vector<std::pair<std::string, std::string>> properties() const override;

  // Ground truth, for tests and for the SIMULATED label's "true energy" column.
  const Workload& workload() const { return workload_; }
  int64_t origin_ns() const { return origin_ns_; }  // clock time at which the workload started
  double true_energy_j(int64_t a_ns, int64_t b_ns) const;  // clock times
  double gain(std::size_t domain_index) const { return boards_.at(domain_index).gain; }
  // A scripted load on one board from now on, for `dur_ns`: the board's true power follows `script`
  // (workload grammar, time 0 = now) instead of the workload; afterwards the workload resumes.
  // This is what stands in for a GPU kernel (wattlab sensors --characterize). Throws UsageError.
  void start_load(std::size_t domain_index, std::string_view script, int64_t dur_ns);
  // Ground truth of one board, the load included: true energy over clock times [a, b].
  double true_energy_j(std::size_t domain_index, int64_t a_ns, int64_t b_ns) const;
  // Ground truth of board `board`'s memory domain (SimConfig::memory_domain) over clock times [a, b].
  double true_memory_energy_j(std::size_t board, int64_t a_ns, int64_t b_ns) const;
  int64_t grid_phase_ns(std::size_t domain_index) const { return boards_.at(domain_index).phase_ns; }

 private:
  // A scripted load: replaces the workload in [begin, end) (sim times); the load's time 0 is begin.
  struct Load {
    std::shared_ptr<const Workload> script;
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
  };
  struct Board {
    double gain = 1;
    int64_t phase_ns = 0;         // offset of the 100 ms update grid
    int64_t sample_phase_ns = 0;  // offset of the 20 ms sample grid
    int64_t last_sample_ns = -1;  // newest sample handed out (sim time)
    uint64_t garbage_reads = 0;   // garbage values handed out (a garbage fault cycles through kinds)
    uint64_t seed = 0;
    std::vector<Load> loads;  // start_load(), in time order, never overlapping
  };
  const Load* load_at(const Board& b, int64_t t_sim_ns) const;
  // The board's true power, its scripted load overlaid on the workload (sim times).
  double energy_to(const Board& b, int64_t t_sim_ns) const;  // cumulative over [0, t]
  const Segment& segment_at(const Board& b, int64_t t_sim_ns) const;
  bool capped_at(const Board& b, int64_t t_sim_ns) const;
  double uncapped_power_w(const Board& b, int64_t t_sim_ns) const;
  int64_t capped_ns(const Board& b, int64_t t_sim_ns) const;
  double value_at(const Board& b, ReadingKind kind, int64_t t_sim_ns) const;
  double mean_power(const Board& b, int64_t a_ns, int64_t b_ns) const;  // true, over sim times
  double memory_power(double board_power_w) const;  // the memory domain's share of a board power
  Status read_memory(Board& b, const Domain& d, ReadingKind kind, std::vector<Reading>& out);
  // Spends the read's cost (and a scripted slow-read's delay) and says whether a scripted fault
  // fails it. t_mid_ns: the call's midpoint (clock time), as the caller sees it; t_value_ns: the
  // sim time whose value the read returns; call_ns: how long the call took.
  Status begin_read(const Domain& d, ReadingKind kind, int64_t& t_mid_ns, int64_t& t_value_ns, int64_t& call_ns);
  double noise(const Board& b, ReadingKind kind, int64_t k) const;
  int64_t last_update(const Board& b, int64_t t_sim_ns) const;
  int64_t read_cost_ns(ReadingKind kind) const;

  SimConfig config_;
  Clock& clock_;
  Workload workload_;
  Faults faults_;
  int64_t origin_ns_ = 0;
  std::vector<Board> boards_;
  std::vector<Domain> domains_;
};

}  // namespace wattlab::sim
