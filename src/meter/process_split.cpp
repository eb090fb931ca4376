// The SM-time-proportional split of a GPU's energy among its processes (process_split.h; the model
// and its uncertainty are spelled out in docs/per-process.md).
#include "meter/process_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "wattlab/core/error.h"

namespace wattlab {
namespace {

double overlap_s(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  const int64_t lo = std::max(a0, b0), hi = std::min(a1, b1);
  return hi > lo ? static_cast<double>(hi - lo) * 1e-9 : 0.0;
}

}  // namespace

ProcessSplit split_energy(const SplitInput& in) {
  if (in.t_end_ns <= in.t_begin_ns)
    throw UsageError(fmt::format("process split: the interval [{}, {}] ns is empty", in.t_begin_ns, in.t_end_ns));
  if (!(in.energy_j >= 0) || !(in.uncertainty_j >= 0))
    throw UsageError(fmt::format("process split: energy {} J and uncertainty {} J must be >= 0", in.energy_j,
                                 in.uncertainty_j));
  if (in.idle_power_w && (!(*in.idle_power_w >= 0) || !(in.idle_power_u95_w >= 0)))
    throw UsageError(fmt::format("process split: idle power {} W +- {} W must be >= 0", *in.idle_power_w,
                                 in.idle_power_u95_w));
  if (in.max_hold_ns <= 0 || !(in.proxy_rel_u95 >= 0))
    throw UsageError("process split: max_hold_ns must be > 0 and proxy_rel_u95 >= 0");

  ProcessSplit out;
  out.total_energy_j = in.energy_j;
  out.total_uncertainty_j = in.uncertainty_j;
  const double dur_s = static_cast<double>(in.t_end_ns - in.t_begin_ns) * 1e-9;

  // Idle share: idle power times the interval, never more than the total.
  double idle_u_j = 0;
  if (in.idle_power_w) {
    out.idle_known = true;
    out.idle_source = in.idle_source;
    out.idle_energy_j = *in.idle_power_w * dur_s;
    idle_u_j = in.idle_power_u95_w * dur_s;
    if (out.idle_energy_j > in.energy_j) {
      out.notes.push_back(fmt::format("idle power {:.1f} W x {:.3f} s exceeds the total {:.3f} J: idle share clamped to it",
                                      *in.idle_power_w, dur_s, in.energy_j));
      out.idle_energy_j = in.energy_j;
    }
    out.idle_uncertainty_j = idle_u_j;
  } else {
    out.notes.push_back("idle power unknown: no idle share is taken out, so the shares include the idle energy");
  }
  const double active_j = in.energy_j - out.idle_energy_j;
  out.active_energy_j = active_j;

  // SM-seconds per process: each sample's utilization over the part of its period inside the
  // interval. A sample whose period straddles an edge says how busy the process was over the whole
  // period, not on which side: its part inside may be anywhere from none to all of its SM time.
  std::set<unsigned> pids;
  for (const auto& p : in.polls) pids.insert(p.pids.begin(), p.pids.end());
  std::map<unsigned, double> sm_s, edge_s;
  for (const auto& x : in.samples) {
    if (!(x.sm_util_pct >= 0) || x.t_end_ns < x.t_begin_ns)
      throw UsageError(fmt::format("process split: pid {} has SM utilization {} % over [{}, {}] ns", x.pid,
                                   x.sm_util_pct, x.t_begin_ns, x.t_end_ns));
    pids.insert(x.pid);
    const double ov = overlap_s(x.t_begin_ns, x.t_end_ns, in.t_begin_ns, in.t_end_ns);
    if (ov <= 0) continue;
    const double len_s = static_cast<double>(x.t_end_ns - x.t_begin_ns) * 1e-9;
    sm_s[x.pid] += x.sm_util_pct / 100.0 * ov;
    edge_s[x.pid] += x.sm_util_pct / 100.0 * std::min(ov, len_s - ov) / 2;
  }
  // The time the polls describe: a poll's query covers back to the previous poll.
  double covered_s = 0;
  for (std::size_t k = 0; k < in.polls.size(); ++k) {
    int64_t from = in.polls[k].t_ns - in.max_hold_ns;
    if (k > 0) from = std::max(from, in.polls[k - 1].t_ns);
    covered_s += overlap_s(from, in.polls[k].t_ns, in.t_begin_ns, in.t_end_ns);
  }
  out.coverage = std::min(1.0, covered_s / dur_s);
  double sm_total_s = 0;
  for (const auto& [pid, s] : sm_s) sm_total_s += s;

  // The device's busy time that no listed process accounts for. The samples describe the whole
  // interval, polls that failed included: a later query returns what an earlier one missed.
  double gap = 0;
  if (sm_total_s <= 0) {
    gap = 1;
  } else if (in.device_busy_pct && *in.device_busy_pct > 0) {
    const double busy_s = *in.device_busy_pct / 100.0 * dur_s;
    gap = std::clamp(1.0 - sm_total_s / busy_s, 0.0, 1.0);
  }
  out.unattributed_busy_share = gap;
  if (out.coverage < 0.999)
    out.notes.push_back(fmt::format("process polls describe {:.1f} % of the interval; the rest is split alike",
                                    out.coverage * 100));
  if (pids.empty()) out.notes.push_back("no process was seen on the GPU: the active energy is unattributed");
  // Measured on an H100 (docs/results/h100-checks.md): one process's SM utilization follows its
  // work, but with two processes sharing the GPU the driver's per-process shares do not.
  const auto sharing = std::count_if(sm_s.begin(), sm_s.end(), [](const auto& kv) { return kv.second > 0; });
  if (sharing >= 2)
    out.notes.push_back(fmt::format(
        "{} processes used the SMs in this interval: NVML's per-process utilization does not follow each one's work "
        "when processes share a GPU (on an H100, two loads whose work divided 69/31 were split 48/52), so the shares "
        "between them are indicative only (docs/per-process.md)",
        sharing));

  const double attributed_j = (1 - gap) * active_j;
  const double j_per_sm_s = sm_total_s > 0 ? attributed_j / sm_total_s : 0;
  const double uncovered_j = (1 - out.coverage) * active_j;
  const double unattributed_j = gap * active_j;
  out.unattributed_energy_j = unattributed_j;
  // Each term is a 95 % half-width; independent terms add in quadrature.
  for (unsigned pid : pids) {
    ProcessShare s;
    s.pid = pid;
    s.sm_s = sm_s[pid];
    s.energy_j = j_per_sm_s * s.sm_s;
    const double w = active_j > 0 ? s.energy_j / active_j : 0;
    const double terms[] = {
        w * in.uncertainty_j,          // the total's own uncertainty, in proportion
        w * idle_u_j,                  // the idle share's, taken out of the active energy
        j_per_sm_s * edge_s[pid],      // samples straddling the interval's edges
        uncovered_j,                   // time no poll describes could belong to any process
        unattributed_j,                // busy time no listed process accounts for could be this one's
        in.proxy_rel_u95 * s.energy_j  // SM time is a proxy for power
    };
    double sq = 0;
    for (double t : terms) sq += t * t;
    s.uncertainty_j = std::sqrt(sq);
    out.processes.push_back(s);
  }
  {
    const double w = active_j > 0 ? unattributed_j / active_j : 0;
    const double terms[] = {w * in.uncertainty_j, w * idle_u_j, uncovered_j, in.proxy_rel_u95 * unattributed_j};
    double sq = 0;
    for (double t : terms) sq += t * t;
    out.unattributed_uncertainty_j = std::sqrt(sq);
  }
  return out;
}

}  // namespace wattlab
