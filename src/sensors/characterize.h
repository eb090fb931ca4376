// wattlab sensors --characterize: measure how each reading of each domain really behaves here
// (docs/sensors-characterize.md): update period, read cost, sample-buffer spacing and depth,
// idle power, and how far integrated power agrees with the energy counter under a load.
// Everything runs on the caller's thread through Sensor::read(), on the given clock: on the
// simulated GPU with a VirtualClock it is fast and deterministic.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/core/clock.h"
#include "sensors/device_load.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

struct CharacterizeOptions {
  int64_t idle_max_ns = 10'000'000'000;       // --idle-s: longest wait for idle power to settle
  int64_t idle_block_ns = 1'000'000'000;      // settle test: consecutive block means of power
  double settle_tolerance_w = 1.0;            // settled: two blocks within max(this, rel * power)
  double settle_tolerance_rel = 0.01;
  int64_t idle_measure_ns = 2'000'000'000;    // idle power measured over this, once settled
  int64_t idle_poll_interval_ns = 10'000'000; // power read this often while idle
  int64_t poll_ns = 2'000'000'000;            // --poll-s: back-to-back polling per reading
  std::size_t max_cost_samples = 1'000'000;   // read costs kept per reading (bounded memory)
  int64_t load_ns = 10'000'000'000;           // --load-s
  int64_t load_skip_ns = 500'000'000;         // the load's ramp, left out of the agreement window
  int64_t load_tail_ns = 300'000'000;         // agreement window ends at the first tick after end - this
  int64_t load_poll_interval_ns = 2'000'000;  // power readings read this often under load
  int64_t load_samples_interval_ns = 500'000'000;  // sample buffer read this often (it holds ~2.4 s)
};

// Order statistics of a series (ns or the reading's unit); n == 0: no data.
struct Stats {
  std::size_t n = 0;
  double median = 0, p10 = 0, p90 = 0, p99 = 0, min = 0, max = 0;
};
Stats stats_of(std::vector<double> xs);

struct ReadingCharacter {
  std::string domain_id;
  ReadingKind kind = ReadingKind::power_instant_w;
  ReadingModel model;               // what the backend's model says, to compare against
  int64_t poll_dur_ns = 0;          // how long it was polled back to back
  std::size_t reads = 0;
  std::size_t failed_reads = 0;
  std::string first_error;          // of the first failed read
  Stats read_cost_ns;               // wall time of one Sensor::read call on the caller's thread
  int64_t read_interval_ns = 0;     // median start-to-start spacing of the reads: resolution of change times
  std::size_t changes = 0;          // reads whose value differed from the previous read
  Stats update_period_ns;           // intervals between changes (n = changes - 1)
  // power_sample_w only: the driver's buffer.
  std::size_t samples = 0;          // samples returned while polling
  Stats sample_spacing_ns;          // spacing of the samples' own timestamps
  Stats samples_per_update;         // samples in each read that returned any
  std::size_t depth_samples = 0;    // samples returned by one read after the buffer was left alone
  int64_t depth_left_alone_ns = 0;  // for how long it was left alone
  bool depth_is_lower_bound = true; // the read returned every sample of that time: depth >= this
};

struct IdleCharacter {
  bool measured = false;
  std::string skipped;                 // why not, when not measured
  ReadingKind power_kind = ReadingKind::power_instant_w;  // the reading watched
  bool settled = false;
  int64_t waited_ns = 0;               // from the start of the wait to the settled verdict
  std::vector<double> block_means_w;   // the 1 s block means the settle test compared
  int64_t t_begin_ns = 0, t_end_ns = 0;  // the measurement interval
  double power_w = 0;                  // mean of the watched reading over the interval
  double power_sd_w = 0;               // scatter of its readings (sample standard deviation)
  std::size_t power_reads = 0;
  std::optional<double> counter_power_w;  // energy counter delta / time, tick-aligned edges
  double counter_edge_ns = 0;          // resolution of the counter's edges (read interval)
};

struct AgreementRow {
  ReadingKind kind = ReadingKind::power_instant_w;  // the integrated reading
  bool available = false;
  std::string reason;            // why not, when not available
  double integrated_j = 0;       // integral of the reading over the window
  double ratio = 0;              // integrated / counter
  double diff_pct = 0;           // 100 * (integrated - counter) / counter
  double uncertainty_pct = 0;    // 1 sigma, from reading scatter and edge timing (not gain)
  std::size_t values = 0;        // distinct published values (or samples) inside the window
  double covered = 0;            // share of the window the values cover
  std::string bias;              // the bias this reading is expected to show, and why
};

struct LoadCharacter {
  bool ran = false;
  std::string skipped;             // why not, when it did not run
  std::string load;                // DeviceLoad::describe()
  std::string load_report;         // DeviceLoad::finish()'s report
  bool simulated = false;
  int64_t t_start_ns = 0, t_stop_ns = 0;  // load started, load's planned end
  int64_t t_a_ns = 0, t_b_ns = 0;  // agreement window: counter ticks
  double counter_j = 0;            // energy counter delta over [a, b]
  double counter_edge_ns = 0;      // resolution of the tick edges
  double counter_power_w = 0;      // counter_j / (b - a)
  std::vector<AgreementRow> rows;  // instant, average, samples: whichever the domain has
};

struct DomainCharacter {
  std::string domain_id;
  std::string name;
  bool simulated = false;
  IdleCharacter idle;
  std::vector<ReadingCharacter> readings;
  LoadCharacter load;
};

// One domain to characterize and the load to run on it (null: none; `no_load_reason` says why).
struct CharacterizeTarget {
  Sensor* sensor = nullptr;
  std::size_t domain_index = 0;
  DeviceLoad* load = nullptr;
  std::string no_load_reason;
};

struct CharacterizeHooks {
  std::function<void(std::string_view)> progress;  // one line per phase
  // Every reading kept for the store: idle and load phases in full, poll phases as change points.
  std::function<void(std::size_t target_index, const Reading&)> record;
};

// Phases: idle (all targets, before any load), back-to-back polls (every reading of every target),
// then each target's load. A failing reading is reported in its row, never fatal.
std::vector<DomainCharacter> characterize(const std::vector<CharacterizeTarget>& targets, Clock& clock,
                                          const CharacterizeOptions& options, const CharacterizeHooks& hooks = {});

}  // namespace wattlab
