// `wattlab run`'s per-process part (run_processes.h).
#include "run_processes.h"

#include <unistd.h>

#include <algorithm>

namespace wattlab::cli {

void add_process_options(CLI::App& sub, ProcessOptions& o, bool serve) {
  sub.add_option("--idle-power-w", o.idle_power_w,
                 "the GPUs' idle power for the per-process split (default: measured while no process is on the GPU; "
                 "docs/per-process.md)")
      ->check(CLI::Range(0.0, 1e5));
  sub.add_option("--idle-power-u95-w", o.idle_power_u95_w, "the 95 % uncertainty of --idle-power-w")
      ->check(CLI::Range(0.0, 1e5))
      ->capture_default_str();
  sub.add_option("--process-interval-ms", o.interval_ms, "how often the GPUs' processes are polled")
      ->check(CLI::Range(50, 60000))
      ->capture_default_str();
  if (serve)
    sub.add_option("--process-forget-s", o.forget_s,
                   "drop a process's energy series after this many seconds without energy (cardinality)")
        ->check(CLI::Range(1.0, 1e7))
        ->capture_default_str();
}

RunProcesses::RunProcesses(Recording& rec, const ProcessOptions& o) : rec_(rec), opt_(o) {
  for (auto& s : rec.sensors()) sensors_.push_back(s.get());
}

void RunProcesses::start() {
  ProcessSamplerOptions so;
  so.interval_ns = static_cast<int64_t>(opt_.interval_ms) * 1'000'000;
  so.tree_root_pid = static_cast<unsigned>(::getpid());  // the command is our child
  so.idle_power_w = opt_.idle_power_w;
  so.idle_power_u95_w = opt_.idle_power_u95_w;
  sampler_ = std::make_unique<ProcessSampler>(sensors_, &rec_.meter(), rec_.clock(), so);
  if (sampler_->any_gpu()) sampler_->start();
}

void RunProcesses::stop() {
  if (sampler_) sampler_->stop();
}

std::vector<GpuAttribution> RunProcesses::attribute(const WindowResult& w) {
  std::vector<GpuAttribution> out;
  if (!sampler_ || !sampler_->any_gpu()) return out;
  const auto gpus = sampler_->gpu_ids();
  for (const auto& d : w.domains) {
    if (!d.available || std::find(gpus.begin(), gpus.end(), d.domain_id) == gpus.end()) continue;
    if (!sampler_->saw_processes(d.domain_id, w.t_begin_ns, w.t_end_ns)) continue;
    try {
      out.push_back(sampler_->attribute(d.domain_id, w.t_begin_ns, w.t_end_ns, d.energy_j, d.uncertainty_j,
                                        d.telemetry.mean_utilization_gpu_pct));
    } catch (const std::exception& e) {
      // The run is stored already; a split the model refuses is said, not fatal.
      notes_.push_back(d.domain_id + ": no per-process split: " + e.what());
    }
  }
  return out;
}

std::vector<std::string> RunProcesses::notes() const {
  std::vector<std::string> out = notes_;
  if (sampler_)
    for (const auto& [gpu, error] : sampler_->errors()) out.push_back(gpu + ": process query: " + error);
  return out;
}

}  // namespace wattlab::cli
