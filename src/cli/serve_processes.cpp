// `wattlab serve`'s per-process counters (serve_processes.h).
#include "serve_processes.h"

#include <algorithm>
#include <exception>

namespace wattlab::cli {

ServeProcesses::ServeProcesses(Recording& rec, const ProcessOptions& o)
    : rec_(rec), opt_(o), counters_(static_cast<int64_t>(o.forget_s * 1e9)) {
  for (auto& s : rec.sensors()) sensors_.push_back(s.get());
}

void ServeProcesses::start() {
  ProcessSamplerOptions so;
  so.interval_ns = static_cast<int64_t>(opt_.interval_ms) * 1'000'000;
  so.idle_power_w = opt_.idle_power_w;
  so.idle_power_u95_w = opt_.idle_power_u95_w;
  so.keep_ns = std::max<int64_t>(10'000'000'000, 4 * so.interval_ns);
  so.after_poll = [this](int64_t t) { after_poll(t); };
  sampler_ = std::make_unique<ProcessSampler>(sensors_, &rec_.meter(), rec_.clock(), so);
  if (sampler_->any_gpu()) sampler_->start();
}

void ServeProcesses::stop() {
  if (sampler_) sampler_->stop();
}

void ServeProcesses::after_poll(int64_t t_ns) {
  if (prev_t_ns_ != 0 && last_t_ns_ > prev_t_ns_) {
    const WindowResult w = rec_.meter().estimate(prev_t_ns_, last_t_ns_, "process split");
    const auto gpus = sampler_->gpu_ids();
    for (const auto& d : w.domains) {
      if (!d.available || std::find(gpus.begin(), gpus.end(), d.domain_id) == gpus.end()) continue;
      try {
        counters_.add(sampler_->attribute(d.domain_id, prev_t_ns_, last_t_ns_, d.energy_j, d.uncertainty_j,
                                          d.telemetry.mean_utilization_gpu_pct),
                      last_t_ns_);
      } catch (const std::exception&) {
        // An interval the model refuses (an estimate below zero across a counter reset) is skipped;
        // the intervals counter shows how many were split.
      }
    }
    counters_.forget(t_ns);
  }
  prev_t_ns_ = last_t_ns_;
  last_t_ns_ = t_ns;
}

std::string ServeProcesses::format(const std::string& host) const { return counters_.format(host); }

}  // namespace wattlab::cli
