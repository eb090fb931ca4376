// The run a `wattlab gemm` command stores its points in: begun with the executor's devices and
// domains, readings flushed like `wattlab run` (GPU executor: every 500 ms on a thread; the
// SIMULATED one is drained by the runner after each point), events and exit status at the end.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store_flusher.h"
#include "wattlab/lab/executor.h"
#include "wattlab/store/store.h"

namespace wattlab::cli {

class GemmRun {
 public:
  // Errors: the store's (io, schema, ...).
  static Result<std::unique_ptr<GemmRun>> begin(Store& store, lab::GemmExecutor& exec, const std::string& device_selection,
                                                std::vector<std::string> command, std::map<std::string, std::string> tags);
  GemmRun(Store& store, lab::GemmExecutor& exec, RunId id);
  ~GemmRun();
  GemmRun(const GemmRun&) = delete;
  GemmRun& operator=(const GemmRun&) = delete;
  RunId id() const { return id_; }
  // Stops the flusher, stores what readings and events are left, ends the run. Idempotent.
  void end(int exit_status);

 private:
  Store& store_;
  lab::GemmExecutor& exec_;
  RunId id_;
  std::unique_ptr<StoreFlusher> flusher_;
  bool ended_ = false;
};

}  // namespace wattlab::cli
