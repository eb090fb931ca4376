// What `wattlab sensors --characterize` stores (docs/sensors-characterize.md, "Store"): one window
// per domain and phase, the numbers as window counts and labels. One codec per window kind; the
// command stores characterization_windows(result) and every reader decodes with these.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wattlab/core/error.h"
#include "wattlab/meter/window.h"
#include "sensors/characterize.h"

namespace wattlab {

// "characterize:idle <domain>": idle power over the measurement interval.
struct CharacterizeIdleRecord {
  std::string domain_id;
  ReadingKind reading = ReadingKind::power_instant_w;  // the reading watched
  bool settled = false;
  int64_t t_begin_ns = 0, t_end_ns = 0;
  double idle_power_w = 0, idle_power_sd_w = 0;
  double waited_s = 0;                     // until the settled verdict
  std::optional<double> counter_power_w;   // energy counter delta / time

  bool operator==(const CharacterizeIdleRecord&) const = default;

  WindowResult encode(WindowId id) const;
  static Result<CharacterizeIdleRecord> decode(const WindowResult& w);
};

// "characterize:reading <domain> <reading>": one reading polled back to back.
struct CharacterizeReadingRecord {
  std::string domain_id;
  ReadingKind reading = ReadingKind::power_instant_w;
  std::string first_error;  // of the first failed read; empty: none failed
  double reads = 0, failed_reads = 0, changes = 0;
  std::optional<double> read_cost_median_us, read_cost_p99_us;
  std::optional<double> update_period_median_ms, update_period_p10_ms, update_period_p90_ms;
  std::optional<double> sample_spacing_median_ms, sample_spacing_p10_ms, sample_spacing_p90_ms;
  std::optional<double> buffer_depth_samples;

  bool operator==(const CharacterizeReadingRecord&) const = default;

  WindowResult encode(WindowId id) const;
  static Result<CharacterizeReadingRecord> decode(const WindowResult& w);
};

// "characterize:load <domain>": counter against integrated power under the load, over the
// agreement window [t_a, t_b]; the window's domain energy is the counter's.
struct CharacterizeLoadRecord {
  struct Agreement {
    ReadingKind kind = ReadingKind::power_instant_w;
    double ratio = 0, diff_pct = 0, uncertainty_pct = 0;
    bool operator==(const Agreement&) const = default;
  };
  std::string domain_id;
  bool simulated = false;
  std::string load, load_report;
  int64_t t_a_ns = 0, t_b_ns = 0;
  double counter_j = 0, counter_power_w = 0;
  std::optional<double> integrated_instant_j;  // the cross-check: integrated instant power
  std::vector<Agreement> rows;                 // the readings that could be compared

  bool operator==(const CharacterizeLoadRecord&) const = default;

  WindowResult encode(WindowId id) const;
  static Result<CharacterizeLoadRecord> decode(const WindowResult& w);
};

// Every window a characterization stores, numbered from `first_id`: per domain its idle window
// (when measured), one per reading, and its load window (when the load ran).
std::vector<WindowResult> characterization_windows(const std::vector<DomainCharacter>& result, WindowId first_id = 1);

}  // namespace wattlab
