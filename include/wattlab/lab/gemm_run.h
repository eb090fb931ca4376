// The run a `wattlab gemm` command stores its points in: begun with the executor's start time,
// devices, domains and description; ended with the readings left in the meter, its events and the
// exit status. Between points the runner stores the readings (lab::run_sweep); a caller that also
// wants them stored while a point runs attaches a background flush with on_end(), which end()
// stops before its last drain. The SIMULATED meter advances on the runner's thread only, so no
// background flush may run beside it.
#pragma once
#include <functional>
#include <memory>

#include "wattlab/lab/executor.h"
#include "wattlab/store/store.h"

namespace wattlab::lab {

class GemmRun {
 public:
  // `info`: what the caller knows (command, host, device selection, tags); the start, devices,
  // SIMULATED flag and the tag gemm.executor come from `exec`. Errors: the store's.
  static Result<std::unique_ptr<GemmRun>> begin(Store& store, GemmExecutor& exec, RunInfo info);
  GemmRun(Store& store, GemmExecutor& exec, RunId id);
  ~GemmRun();  // end(1) when the command did not end the run
  GemmRun(const GemmRun&) = delete;
  GemmRun& operator=(const GemmRun&) = delete;
  RunId id() const { return id_; }
  // Called first in end(): stops what the caller runs beside the run.
  void on_end(std::function<void()> stop);
  // Stores the readings and events left and ends the run. Idempotent.
  void end(int exit_status);

 private:
  Store& store_;
  GemmExecutor& exec_;
  RunId id_;
  std::function<void()> stop_;
  bool ended_ = false;
};

}  // namespace wattlab::lab
