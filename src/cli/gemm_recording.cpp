#include "gemm_recording.h"

#include <ostream>

namespace wattlab::cli {
namespace {

RecordingOptions recording_options(const lab::GemmExecutor& exec, Store& store, GemmRunMeta meta, Io& io) {
  RecordingOptions o;
  o.store = &store;
  o.devices.device = std::move(meta.device);
  o.command = std::move(meta.command);
  o.tags = std::move(meta.tags);
  o.tags["gemm.executor"] = exec.description();
  o.on_note = [&io](std::string_view n) { io.err << "wattlab gemm: " << n << "\n"; };
  return o;
}

}  // namespace

GemmRecording::GemmRecording(lab::GemmExecutor& exec, Store& store, GemmRunMeta meta, Io& io)
    : exec_(exec), io_(io),
      rec_(exec.meter(), exec.devices(), exec.simulated(), recording_options(exec, store, std::move(meta), io)) {
  rec_.start();
}

Result<lab::SweepOutcome> GemmRecording::measure(const lab::SweepPlan& plan, const std::vector<lab::PlannedPoint>& points,
                                                 const GemmMeasureOptions& o) {
  auto outcome = lab::run_sweep(plan, points, exec_, rec_.store(), rec_.run_id(), o.protocol, o.progress, nullptr,
                                o.max_points, o.stop_before_next);
  if (!outcome) rec_.end(kExitFailure);
  return outcome;
}

std::vector<StoredGemmPoint> GemmRecording::stored_points() {
  std::vector<StoredGemmPoint> points;
  auto run = rec_.store().load_run(rec_.run_id());
  if (!run) {
    io_.err << "wattlab: " << run.error().message() << "\n";
    return points;
  }
  for (const auto& w : run->windows) {
    auto p = GemmPointRecord::decode(w);
    if (p) points.push_back({w, std::move(*p)});
    else io_.err << "wattlab: " << p.error().message() << "\n";
  }
  return points;
}

}  // namespace wattlab::cli
