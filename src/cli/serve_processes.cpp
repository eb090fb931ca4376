// `wattlab serve`'s per-process counters (serve_processes.h).
#include "serve_processes.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <vector>

namespace wattlab::cli {
namespace {

// Polls and samples are kept this long: at least 30 s and eight intervals; an interval waits
// for its data at most half of it, so what it needs is still there when it is split.
int64_t keep_ns_for(int interval_ms) { return std::max<int64_t>(30'000'000'000, 8LL * interval_ms * 1'000'000); }

}  // namespace

ServeProcesses::ServeProcesses(Recording& rec, const ProcessOptions& o)
    : rec_(rec),
      opt_(o),
      counters_(static_cast<int64_t>(o.forget_s * 1e9)),
      pending_(keep_ns_for(o.interval_ms) / 2) {
  for (auto& s : rec.sensors()) sensors_.push_back(s.get());
}

void ServeProcesses::start() {
  ProcessSamplerOptions so;
  so.interval_ns = static_cast<int64_t>(opt_.interval_ms) * 1'000'000;
  so.idle_power_w = opt_.idle_power_w;
  so.idle_power_u95_w = opt_.idle_power_u95_w;
  so.keep_ns = keep_ns_for(opt_.interval_ms);
  so.after_poll = [this](int64_t t) { after_poll(t); };
  sampler_ = std::make_unique<ProcessSampler>(sensors_, &rec_.meter(), rec_.clock(), so);
  if (sampler_->any_gpu()) sampler_->start();
}

void ServeProcesses::stop() {
  if (sampler_) sampler_->stop();
}

std::optional<WindowResult> ServeProcesses::ready_estimate(int64_t t_begin_ns, int64_t t_end_ns) const {
  for (const auto& gpu : sampler_->gpu_ids())
    if (sampler_->samples_until_ns(gpu) < t_end_ns) return std::nullopt;
  WindowResult w = rec_.meter().estimate(t_begin_ns, t_end_ns, "process split");
  if (!w.final) return std::nullopt;
  return w;
}

void ServeProcesses::split(const WindowResult& w) {
  const auto gpus = sampler_->gpu_ids();
  for (const auto& d : w.domains) {
    if (!d.available || std::find(gpus.begin(), gpus.end(), d.domain_id) == gpus.end()) continue;
    try {
      counters_.add(sampler_->attribute(d.domain_id, w.t_begin_ns, w.t_end_ns, d.energy_j, d.uncertainty_j,
                                        d.telemetry.mean_utilization_gpu_pct),
                    w.t_end_ns);
    } catch (const std::exception&) {
      // An interval the model refuses (an estimate below zero across a counter reset) is skipped;
      // the intervals counter shows how many were split.
    }
  }
  if (span_begin_ns_.load() == 0) span_begin_ns_.store(w.t_begin_ns);
  span_end_ns_.store(w.t_end_ns);
}

void ServeProcesses::after_poll(int64_t t_ns) {
  if (last_t_ns_ != 0) pending_.add(last_t_ns_, t_ns);
  last_t_ns_ = t_ns;
  // The estimates that found an interval ready are the ones split, in the order take() asked; an
  // interval taken after waiting out is estimated with what there is.
  std::vector<WindowResult> ready;
  const auto taken = pending_.take(t_ns, [&](int64_t a, int64_t b) {
    auto w = ready_estimate(a, b);
    if (w) ready.push_back(std::move(*w));
    return w.has_value();
  });
  std::size_t k = 0;
  for (const auto& i : taken)
    split(i.waited_out ? rec_.meter().estimate(i.t_begin_ns, i.t_end_ns, "process split") : ready[k++]);
  counters_.forget(t_ns);
}

std::string ServeProcesses::format(const std::string& host) const {
  return counters_.format(host, rec_.clock().now_ns());
}

std::pair<int64_t, int64_t> ServeProcesses::split_span_ns() const { return {span_begin_ns_.load(), span_end_ns_.load()}; }

}  // namespace wattlab::cli
