// Part "memory" of meter_validate: what wattlab says about the GPU's memory domain (gpu:N/memory)
// while the HBM works hard. Device-to-device copies run for a while between idle stretches; every
// stretch is a window between counter updates, and every row of the CSV carries the memory
// domain's result and the memory-scope power fields polled every 10 ms.
#include <cstdio>

#include "validate_context.h"
#include "wattlab/marks.h"

namespace wattlab::device {

void run_memory(Context& c) {
  const Options& o = c.opt;
  const double need_s = 2 + 0.5 + o.memory_load_s + 3 + 1;
  if (!c.has_time(need_s)) {
    c.skip("memory", need_s);
    return;
  }
  Loads& L = c.loads;
  L.copy = std::make_unique<CopyLoad>(static_cast<std::size_t>(o.copy_mib * 1024 * 1024));
  const double unit_s = L.copy->time_units_ms(5) * 1e-3;
  c.progress("memory", "hbm-copy", L.copy->describe() + ", " + fmt_len(unit_s * 1e3) + " ms per copy");
  const AlignedEdge a = c.aligned();
  c.sleep_until(a.t_ns() + s_to_ns(2.0));
  const AlignedEdge b = c.aligned();
  L.copy->start();
  const int64_t t_on = marks::monotonic_ns();
  c.sleep_until(t_on + s_to_ns(0.5));
  const AlignedEdge d = c.aligned();
  const uint64_t n_d = L.copy->launched();
  c.sleep_until(d.t_ns() + s_to_ns(o.memory_load_s));
  const AlignedEdge e = c.aligned();
  const uint64_t n_e = L.copy->launched();
  L.copy->stop();
  const int64_t t_off = marks::monotonic_ns();
  c.sleep_until(t_off + s_to_ns(3.0));
  const AlignedEdge f = c.aligned();

  c.log.add(c.exact("memory", "hbm-copy", "idle-before", "rate", 0, a, b));
  WindowPlan load = c.exact("memory", "hbm-copy", "copy", "rate", 0, d, e);
  load.work_units = static_cast<double>(n_e - n_d);
  c.log.add(load);
  c.log.add(c.exact("memory", "hbm-copy", "after-copy", "rate", 0, e, f));
  const double copy_w = load.ref_j / (static_cast<double>(e.t_ns() - d.t_ns()) * 1e-9);
  // One-second windows inside the copy phase, back to back.
  int k = 0;
  for (int64_t t = d.t_ns(); t + s_to_ns(1.0) <= e.t_ns(); t += s_to_ns(1.0), ++k) {
    WindowPlan p = Context::labelled("memory", "hbm-copy", "copy-1", "window", k);
    p.t_begin_ns = t;
    p.t_end_ns = t + s_to_ns(1.0);
    p.planned_s = 1.0;
    p.ref_j = copy_w * 1.0;
    p.ref_kind = "steady-rate";
    c.log.add(p);
  }
  c.add_phase("memory", "hbm-copy", "copy-phase", 0, t_on, t_off);
  c.log.flush();
  char buf[128];
  std::snprintf(buf, sizeof buf, "copy phase %.1f W (counter), %.0f copies", copy_w, load.work_units);
  c.progress("memory", "hbm-copy", buf);
}

}  // namespace wattlab::device
