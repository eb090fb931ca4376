// Per-process energy counters and their exposition (process_metrics.h).
#include "export/process_metrics.h"

#include <fmt/format.h>

#include <algorithm>

#include "export/live.h"
#include "export/prometheus.h"

namespace wattlab {
namespace {

std::string label(const char* k, const std::string& v) { return std::string(k) + "=\"" + prometheus_escape(v) + "\""; }

std::string gpu_labels(const std::string& host, const std::string& gpu_id) {
  const std::string index = gpu_index_of(gpu_id);
  return label("host", host) + "," + label("gpu", index.empty() ? gpu_id : index);
}

void family(std::string& out, const char* name, const char* type, const char* help, const std::string& body) {
  if (body.empty()) return;
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  out += body;
}

}  // namespace

void ProcessEnergyCounters::add(const GpuAttribution& a, int64_t t_ns) {
  std::lock_guard lk(mu_);
  GpuTotals& g = gpus_[a.gpu_id];
  g.idle_j += a.split.idle_energy_j;
  g.idle_u95_j += a.split.idle_uncertainty_j;
  g.unattributed_j += a.split.unattributed_energy_j;
  g.unattributed_u95_j += a.split.unattributed_uncertainty_j;
  ++g.intervals;
  g.end_ns = std::max(g.end_ns, t_ns);
  for (const auto& r : a.rows) {
    Series& s = series_[{a.gpu_id, r.pid}];
    if (s.last_t_ns == 0 || !r.comm.empty()) {  // labels as first read; a gone process keeps them
      s.comm = r.comm;
      s.container = r.ids.container_id;
      s.pod = r.ids.pod_uid;
      s.slurm_job = r.ids.slurm_job_id;
    }
    s.energy_j += r.share.energy_j;
    s.u95_j += r.share.uncertainty_j;  // a linear sum: the intervals' errors may be correlated
    s.last_t_ns = t_ns;
  }
}

void ProcessEnergyCounters::forget(int64_t t_ns) {
  std::lock_guard lk(mu_);
  dropped_ += std::erase_if(series_, [&](const auto& kv) { return kv.second.last_t_ns < t_ns - forget_after_ns_; });
}

std::size_t ProcessEnergyCounters::series() const {
  std::lock_guard lk(mu_);
  return series_.size();
}

std::string ProcessEnergyCounters::format(const std::string& host, std::optional<int64_t> now_ns) const {
  std::lock_guard lk(mu_);
  if (gpus_.empty()) return "";
  std::string energy, u95, idle, idle_u, unattr, unattr_u, intervals, age;
  for (const auto& [key, s] : series_) {
    const std::string l = gpu_labels(host, key.first) + "," + label("pid", std::to_string(key.second)) + "," +
                          label("comm", s.comm) + "," + label("container", s.container) + "," + label("pod", s.pod) +
                          "," + label("slurm_job", s.slurm_job);
    energy += fmt::format("wattlab_gpu_process_energy_joules_total{{{}}} {}\n", l, s.energy_j);
    u95 += fmt::format("wattlab_gpu_process_energy_u95_joules{{{}}} {}\n", l, s.u95_j);
  }
  for (const auto& [gpu, g] : gpus_) {
    const std::string l = gpu_labels(host, gpu);
    idle += fmt::format("wattlab_gpu_idle_energy_joules_total{{{}}} {}\n", l, g.idle_j);
    idle_u += fmt::format("wattlab_gpu_idle_energy_u95_joules{{{}}} {}\n", l, g.idle_u95_j);
    unattr += fmt::format("wattlab_gpu_unattributed_energy_joules_total{{{}}} {}\n", l, g.unattributed_j);
    unattr_u += fmt::format("wattlab_gpu_unattributed_energy_u95_joules{{{}}} {}\n", l, g.unattributed_u95_j);
    intervals += fmt::format("wattlab_gpu_process_split_intervals_total{{{}}} {}\n", l, g.intervals);
    if (now_ns)
      age += fmt::format("wattlab_gpu_process_split_age_seconds{{{}}} {}\n", l,
                         static_cast<double>(std::max<int64_t>(0, *now_ns - g.end_ns)) * 1e-9);
  }
  std::string out;
  family(out, "wattlab_gpu_process_energy_joules_total", "counter",
         "GPU energy split to a process by its SM time after the idle share (a model: on an H100 right for one process, "
         "indicative only for processes sharing the GPU; docs/per-process.md)", energy);
  family(out, "wattlab_gpu_process_energy_u95_joules", "gauge",
         "Sum of the 95 % uncertainties of the intervals that make wattlab_gpu_process_energy_joules_total", u95);
  family(out, "wattlab_gpu_idle_energy_joules_total", "counter",
         "GPU energy of the idle power over the split intervals (idle power given or measured with no process)", idle);
  family(out, "wattlab_gpu_idle_energy_u95_joules", "gauge", "Sum of the idle share's 95 % uncertainties", idle_u);
  family(out, "wattlab_gpu_unattributed_energy_joules_total", "counter",
         "Active GPU energy of busy time that no listed process accounts for", unattr);
  family(out, "wattlab_gpu_unattributed_energy_u95_joules", "gauge", "Sum of the unattributed share's 95 % uncertainties",
         unattr_u);
  family(out, "wattlab_gpu_process_split_intervals_total", "counter", "Intervals split per process", intervals);
  family(out, "wattlab_gpu_process_split_age_seconds", "gauge",
         "How long before now the newest split interval ends: the per-process, idle and unattributed counters cover "
         "the board's energy up to then (an interval waits for the energy counter and the samples past its end)",
         age);
  out += fmt::format(
      "# HELP wattlab_gpu_process_series_dropped_total Process series dropped after {} s without energy\n"
      "# TYPE wattlab_gpu_process_series_dropped_total counter\nwattlab_gpu_process_series_dropped_total{{{}}} {}\n",
      forget_after_ns_ / 1'000'000'000, label("host", host), dropped_);
  return out;
}

}  // namespace wattlab
