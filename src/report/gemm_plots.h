// GEMM sweep plots from a run's windows. The GEMM lab stores each measurement point as a
// gemm_point window, read here through its codec (GemmPointRecord, src/store/gemm_point_record.h):
// the experiment, engine, swept parameter and its value, energy per GEMM, mean power, TFLOP/s.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "report/gemm_analysis.h"
#include "report/plot.h"
#include "wattlab/store/run_record.h"

namespace wattlab::report {

struct GemmPoint {
  std::string window;       // the window's name
  std::string param_value;  // as labelled
  double x = 0;             // param_value as a number, or its category's position
  std::optional<double> energy_per_gemm_j, energy_per_gemm_u_j, mean_power_w, tflops;
};

// One experiment's sweep of one parameter; points per engine, ascending in x.
struct GemmSweep {
  std::string experiment;
  std::string param;
  bool numeric = true;  // every param_value is a number; else x is the category's position
  std::vector<std::string> categories;  // non-numeric values in order of first appearance
  std::vector<std::pair<std::string, std::vector<GemmPoint>>> engines;  // in order of first appearance
};

// Every (experiment, param) swept in `run`, in order of first appearance; empty when the run
// has no gemm_point windows. Throws WattlabError (parse) for a gemm_point window that does not
// decode, naming the run and the window (as gemm_measurements does).
std::vector<GemmSweep> gemm_sweeps(const RunRecord& run);

// Energy per GEMM (J, with the point's uncertainty as error bars) and mean power (W) against the
// swept parameter, one series per engine. Titles say SIMULATED for simulated runs.
Plot gemm_energy_plot(const GemmSweep& sweep, bool simulated);
Plot gemm_power_plot(const GemmSweep& sweep, bool simulated);

// The (shape, experiment) pairs of an analyzed sweep (GEMM engines first, then the controls).
struct GemmPlotKey {
  std::string shape, experiment;
};
std::vector<GemmPlotKey> gemm_plot_keys(const GemmSweepAnalysis& sweep);

// Energy per GEMM or power (q) divided by the same seed's reference, mean ± SD across seeds as error
// bars, one line per engine, against the swept parameter; the reference is 1.0 (a line). Titles
// say SIMULATED for simulated sweeps. nullopt when no engine has a value to draw, and for
// the energy of controls (no GEMMs).
std::optional<Plot> gemm_normalized_plot(const GemmSweepAnalysis& sweep, const GemmPlotKey& key, GemmQty q);

}  // namespace wattlab::report
