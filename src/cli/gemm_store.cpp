#include "gemm_store.h"

#include <chrono>

#include "stop_signal.h"

namespace wattlab::cli {

Result<std::unique_ptr<GemmRun>> GemmRun::begin(Store& store, lab::GemmExecutor& exec, const std::string& device_selection,
                                                std::vector<std::string> command, std::map<std::string, std::string> tags) {
  RunInfo info;
  info.command = std::move(command);
  info.host = local_hostname();
  info.start_utc = utc_iso8601(std::chrono::system_clock::now());
  info.start_t_ns = exec.clock().now_ns();
  info.simulated = exec.simulated();
  info.device_selection = device_selection;
  info.devices = exec.devices();
  info.tags = std::move(tags);
  info.tags["gemm.executor"] = exec.description();
  auto id = store.begin_run(info);
  if (!id) return id.error();
  if (auto st = store.add_domains(*id, exec.meter().domains()); !st) return st.error();
  return std::make_unique<GemmRun>(store, exec, *id);
}

GemmRun::GemmRun(Store& store, lab::GemmExecutor& exec, RunId id) : store_(store), exec_(exec), id_(id) {
  // The SIMULATED meter advances on this thread only; the runner drains it after each point.
  if (!exec.simulated()) flusher_ = std::make_unique<StoreFlusher>(exec.meter(), store, id);
}

GemmRun::~GemmRun() { end(1); }

void GemmRun::end(int exit_status) {
  if (ended_) return;
  ended_ = true;
  if (flusher_) flusher_->finish();
  std::vector<TimedReading> rest;
  exec_.meter().drain_readings(rest);
  if (!rest.empty()) store_.append_readings(id_, rest);
  store_.append_events(id_, exec_.meter().events());
  store_.end_run(id_, exec_.clock().now_ns(), exit_status);
}

}  // namespace wattlab::cli
