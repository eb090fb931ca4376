#include "wattlab/lab/gemm_run.h"

#include <chrono>
#include <utility>

namespace wattlab::lab {

Result<std::unique_ptr<GemmRun>> GemmRun::begin(Store& store, GemmExecutor& exec, RunInfo info) {
  info.start_utc = utc_iso8601(std::chrono::system_clock::now());
  info.start_t_ns = exec.clock().now_ns();
  info.simulated = exec.simulated();
  info.devices = exec.devices();
  info.tags["gemm.executor"] = exec.description();
  auto id = store.begin_run(info);
  if (!id) return id.error();
  if (auto st = store.add_domains(*id, exec.meter().domains()); !st) return st.error();
  return std::make_unique<GemmRun>(store, exec, *id);
}

GemmRun::GemmRun(Store& store, GemmExecutor& exec, RunId id) : store_(store), exec_(exec), id_(id) {}

GemmRun::~GemmRun() { end(1); }

void GemmRun::on_end(std::function<void()> stop) { stop_ = std::move(stop); }

void GemmRun::end(int exit_status) {
  if (ended_) return;
  ended_ = true;
  if (stop_) stop_();
  std::vector<TimedReading> rest;
  exec_.meter().drain_readings(rest);
  if (!rest.empty()) store_.append_readings(id_, rest);
  store_.append_events(id_, exec_.meter().events());
  store_.end_run(id_, exec_.clock().now_ns(), exit_status);
}

}  // namespace wattlab::lab
