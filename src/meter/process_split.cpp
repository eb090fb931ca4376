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

double pct_of(const ProcessPoll& p, unsigned pid) {
  auto it = p.sm_util_pct.find(pid);
  return it == p.sm_util_pct.end() ? 0.0 : it->second;
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

  // SM-seconds per process over the covered time, and the hold error between successive polls.
  std::set<unsigned> pids;
  for (const auto& p : in.polls)
    for (const auto& [pid, pct] : p.sm_util_pct) {
      if (!(pct >= 0)) throw UsageError(fmt::format("process split: pid {} has SM utilization {} %", pid, pct));
      pids.insert(pid);
    }
  std::map<unsigned, double> sm_s, hold_s;
  double covered_s = 0;
  for (std::size_t k = 0; k < in.polls.size(); ++k) {
    const ProcessPoll& p = in.polls[k];
    int64_t from = p.t_ns - in.max_hold_ns;
    if (k > 0) from = std::max(from, in.polls[k - 1].t_ns);
    const double ov = overlap_s(from, p.t_ns, in.t_begin_ns, in.t_end_ns);
    if (ov <= 0) continue;
    covered_s += ov;
    for (unsigned pid : pids) {
      const double now = pct_of(p, pid);
      sm_s[pid] += now / 100.0 * ov;
      // Held back from this poll, the value may have moved anywhere between the two polls' values.
      if (k > 0 && from == in.polls[k - 1].t_ns) hold_s[pid] += std::abs(now - pct_of(in.polls[k - 1], pid)) / 100.0 * ov / 2;
    }
  }
  out.coverage = std::min(1.0, covered_s / dur_s);
  double sm_total_s = 0;
  for (const auto& [pid, s] : sm_s) sm_total_s += s;

  // The device's busy time that no listed process accounts for (the covered part scaled to the whole).
  double gap = 0;
  if (sm_total_s <= 0) {
    gap = 1;
  } else if (in.device_busy_pct && *in.device_busy_pct > 0) {
    const double busy_s = *in.device_busy_pct / 100.0 * dur_s;
    gap = std::clamp(1.0 - (sm_total_s / out.coverage) / busy_s, 0.0, 1.0);
  }
  out.unattributed_busy_share = gap;
  if (out.coverage < 0.999)
    out.notes.push_back(fmt::format("process polls describe {:.1f} % of the interval; the rest is split alike",
                                    out.coverage * 100));
  if (pids.empty()) out.notes.push_back("no process was seen on the GPU: the active energy is unattributed");

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
        j_per_sm_s * hold_s[pid],      // how SM utilization moved between polls
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
