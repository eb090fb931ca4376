// One GEMM lab point as stored: a window labelled kind=gemm_point with what was measured (the
// labels) and what the window found (the counts). Every writer (lab::run_sweep) and reader (the
// sweep resume, report::gemm_measurements, the point and results printers) goes through this
// codec, so each label and count name is spelled here only (docs/gemm-cli.md, "Store").
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "wattlab/core/error.h"
#include "wattlab/meter/window.h"

namespace wattlab {

// What the window found, as the lab's protocol writes it (lab::collect). Absent: not written
// (no GPU energy on this device, no spot check, no such telemetry, or a window stored by an older
// writer). Values are as stored: a reader that needs finite numbers checks.
struct GemmPointCounts {
  std::optional<double> gemms;             // GEMMs inside the window
  std::optional<double> replays;           // graph replays inside the window
  std::optional<double> gemms_per_replay;
  std::optional<double> replay_s;          // one replay, as prepared
  std::optional<double> window_s;          // the window's duration
  std::optional<double> prepare_s;         // inputs, checks, graph capture
  std::optional<double> warmup_s;          // 0: no warm-up (fidelity mode)
  std::optional<bool> warmup_steady;       // the warm-up ended on a steady temperature
  std::optional<double> warmup_drift_c;    // temperature change over the warm-up's last span
  std::optional<double> tflops;
  std::optional<double> rel_error;         // relative Frobenius error of spot-checked C entries
  bool rel_error_nonfinite = false;        // the spot check's error was inf or NaN
  std::optional<double> nonfinite_fraction;  // share of C's entries that are inf or NaN
  std::map<std::string, double> input_stats;      // bit statistics of the inputs, by name
  std::map<std::string, double> prepare_steps_s;  // preparation time by step
  // The GPU domain's energy over the window.
  std::optional<double> energy_j, energy_u_j, energy_sys_j, mean_power_w, mean_power_u_w;
  std::optional<double> energy_per_gemm_j, energy_per_gemm_u_j;
  // The GPU domain's telemetry over the window.
  std::optional<double> mean_sm_clock_mhz, temperature_c, power_capped_fraction, tensor_activity_pct, power_limit_w;

  bool operator==(const GemmPointCounts&) const = default;
};

struct GemmPointRecord {
  std::string experiment;   // "E11", "X2", "ref" (a reference point), "run" (wattlab gemm run)
  std::string engine;       // the engine's name ("bf16"), or "control" for the controls X1-X3
  int64_t m = 0, n = 0, k = 0;
  std::string recipe_a, recipe_b;
  uint64_t seed = 0;
  std::string param, param_value;  // the swept parameter and its value ("k", "0.5")
  bool reference = false;          // a reference point of its (shape, engine)
  std::string sweep;               // the sweep id; points of one sweep resume together
  int point = 0;                   // the point's index in its plan
  bool simulated = false;
  GemmPointCounts counts;

  bool operator==(const GemmPointRecord&) const = default;
  // Sets the labels and counts of `w` (other labels and counts are left as they are).
  void encode(WindowResult& w) const;
  // Errors (parse): not a gemm_point window, or a label missing or malformed, named with the window.
  static Result<GemmPointRecord> decode(const WindowResult& w);
};

// The window is labelled kind=gemm_point (decode() may still find it malformed).
bool is_gemm_point(const WindowResult& w);

}  // namespace wattlab
