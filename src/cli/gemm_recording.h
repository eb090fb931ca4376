// The run a `wattlab gemm run|sweep|study` command measures its points into: a wattlab::Recording
// attached to the executor's meter (the executor owns and moves it: virtual time on the SIMULATED
// executor, where no flush thread runs beside it). The recording stores the run's info (command
// line, host, devices, driver and library versions; the executor as the tag gemm.executor), moves
// readings to the store every 500 ms on real time, and ends the run with its status: the
// command's, 1 when measuring fails (or the command throws), 128 + N on signal N.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli.h"
#include "lab/executor.h"
#include "lab/progress.h"
#include "lab/runner.h"
#include "wattlab/record/recording.h"
#include "store/gemm_point_record.h"

namespace wattlab::cli {

struct GemmRunMeta {
  std::string device;                       // --device: the run's device selection
  std::vector<std::string> command;         // the command line recorded with the run
  std::map<std::string, std::string> tags;  // gemm.command, gemm.sweep, ...
};

// How run_sweep measures: the protocol, and what may stop it between points.
struct GemmMeasureOptions {
  lab::ProtocolOptions protocol;
  lab::Progress* progress = nullptr;
  std::size_t max_points = 0;              // 0: no limit
  std::function<bool()> stop_before_next;  // a signal, a time budget
};

// A point as stored: its window (energy, telemetry) and its record (labels, counts).
struct StoredGemmPoint {
  WindowResult window;
  GemmPointRecord point;
};

class GemmRecording {
 public:
  // Begins the run in `store` (borrowed, as `exec` and `io`). Throws WattlabError when the store fails.
  GemmRecording(lab::GemmExecutor& exec, Store& store, GemmRunMeta meta, Io& io);
  Recording& recording() { return rec_; }
  RunId run_id() const { return rec_.run_id(); }
  // Measures `points` of `plan` into the run (lab::run_sweep stores each point's window once its
  // result is final). When that fails the run ends here with kExitFailure.
  Result<lab::SweepOutcome> measure(const lab::SweepPlan& plan, const std::vector<lab::PlannedPoint>& points,
                                    const GemmMeasureOptions& o);
  // The points stored in the run, in order; a window that does not decode is named on io.err.
  std::vector<StoredGemmPoint> stored_points();
  // Ends the run with `status` (the first end wins). Throws WattlabError with a store error.
  void end(int status) { rec_.end(status); }

 private:
  lab::GemmExecutor& exec_;
  Io& io_;
  Recording rec_;
};

}  // namespace wattlab::cli
