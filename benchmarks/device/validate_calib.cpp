// Part "calib" of meter_validate: windows of 1 to 20 counter updates (about 0.1-2 s) chained
// through a steady phase at idle and at each level, every edge on a counter update (the counter
// read back to back until it changes). The counter's delta between two updates is the window's
// energy, independent of the meter: its only error is where the update lies inside each edge's
// bracket (`ref_u_j` bounds it). The meter reads the counter on its own 1 s grid and never sees
// these edges, so the windows test wattlab's stated uncertainty on short windows whose edges fall
// between its own counter reads: the calibration the steady-rate references cannot give.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "validate_context.h"
#include "wattlab/marks.h"

namespace wattlab::device {
namespace {

// The next edge is read back to back from this long before the update is due: the update period
// jitters by a few ms, and reading too early only costs reads.
constexpr double kLeadS = 0.03;

// Lengths (in updates) and repeats in random order, so drift and heating spread over all lengths.
std::vector<std::pair<int, int>> schedule(Context& c) {
  std::vector<std::pair<int, int>> s;
  for (int n : c.opt.calib_updates)
    for (int rep = 0; rep < c.opt.calib_reps; ++rep) s.emplace_back(n, rep);
  std::shuffle(s.begin(), s.end(), c.rng());
  return s;
}

// Chains the scheduled windows from edge `a` on; each window's last edge is the next one's first.
int chain(Context& c, const std::string& level, UnitLoad* load, AlignedEdge a, double period_s) {
  int written = 0;
  for (const auto& [n, rep] : schedule(c)) {
    if (stop_requested()) break;
    c.sleep_until(a.t_ns() + s_to_ns(n * period_s - kLeadS));
    const uint64_t units_a = load != nullptr ? load->launched() : 0;
    const AlignedEdge b = c.aligned();
    WindowPlan p = c.exact("calib", level, "calib-" + std::to_string(n), "exact", rep, a, b);
    p.planned_s = n * period_s;
    p.work_units = load != nullptr ? static_cast<double>(load->launched() - units_a) : 0.0;
    p.busy_s = load != nullptr ? static_cast<double>(p.t_end_ns - p.t_begin_ns) * 1e-9 : 0.0;
    c.log.add(p);
    ++written;
    a = b;
    if (written % 32 == 0) c.log.flush();
  }
  return written;
}

void calib_level(Context& c, const std::string& level, UnitLoad* load, double need_s) {
  const Options& o = c.opt;
  if (!c.has_time(need_s)) {
    c.skip("calib " + level, need_s);
    return;
  }
  c.progress("calib", level, load != nullptr ? "chained windows under " + load->describe() : "chained windows at idle");
  if (load != nullptr) load->start();
  c.sleep_until(marks::monotonic_ns() + s_to_ns(load != nullptr ? o.warm_s : o.settle_s));
  // Two updates back to back give the period the chain is timed by.
  const AlignedEdge first = c.aligned();
  const AlignedEdge second = c.aligned();
  const double period_s = std::clamp(static_cast<double>(second.t_ns() - first.t_ns()) * 1e-9, 0.02, 1.0);
  const int written = chain(c, level, load, second, period_s);
  if (load != nullptr) load->stop();
  char buf[128];
  std::snprintf(buf, sizeof buf, "%d windows, counter update period %.1f ms", written, period_s * 1e3);
  c.progress("calib", level, buf);
  c.log.flush();
}

}  // namespace

double calib_need_s(const Options& o, bool idle) {
  double updates = 0;
  for (int n : o.calib_updates) updates += n;
  constexpr double kPeriodS = 0.1;  // the H200's counter update period
  return (idle ? o.settle_s : o.warm_s) + 0.3 + o.calib_reps * updates * kPeriodS;
}

void run_calib(Context& c) {
  const Options& o = c.opt;
  if (("," + o.calib_levels + ",").find(",idle,") != std::string::npos) calib_level(c, "idle", nullptr, calib_need_s(o, true));
  for (const char* l : {"below", "near", "cap"})
    if (c.selected(o.calib_levels, l)) calib_level(c, l, c.levels.at(l).load, calib_need_s(o, false));
}

}  // namespace wattlab::device
