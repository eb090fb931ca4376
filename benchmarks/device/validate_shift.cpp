// Part "edges" of meter_validate, second half: windows shifted across transitions. Each repeat
// is idle, then the level's load for 1.5 s, then idle, between two counter updates (exact). For the
// repeat's own shift s the counter is read on this thread at transition + s and half a second
// either side, around the idle->load and the load->idle transition: four windows with the
// counter at their edges (role "zeus"). wattlab also gets the same four windows for every shift
// of the list, placed against the transitions as they happened (role "scan"). The reference is
// a step model: idle power before an idle->load transition, the level's steady power after it.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "validate_context.h"
#include "wattlab/marks.h"

namespace wattlab::device {
namespace {

constexpr double kIdleBeforeS = 1.0, kLoadS = 1.5, kIdleAfterS = 1.2;

// Energy of [a, b] if the power stepped from p_before to p_after at t.
double step_model_j(int64_t a, int64_t b, int64_t t, double p_before, double p_after) {
  const double before_s = static_cast<double>(std::clamp(t, a, b) - a) * 1e-9;
  const double after_s = static_cast<double>(b - std::clamp(t, a, b)) * 1e-9;
  return p_before * before_s + p_after * after_s;
}

struct Edge4 {
  const char* set;
  bool up;      // around the idle->load transition
  bool ending;  // the window ends at transition + shift (else begins there)
};
constexpr Edge4 kEdges[] = {{"shift-up-end", true, true},
                            {"shift-up-begin", true, false},
                            {"shift-down-end", false, true},
                            {"shift-down-begin", false, false}};

void one_repeat(Context& c, Level& lvl, double shift_ms, int rep) {
  const Options& o = c.opt;
  UnitLoad& load = *lvl.load;
  const int64_t len = s_to_ns(o.shift_window_s);
  const int64_t s = s_to_ns(shift_ms * 1e-3);
  const AlignedEdge a = c.aligned();
  const int64_t up_plan = a.t_ns() + s_to_ns(kIdleBeforeS);
  const int64_t down_plan = up_plan + s_to_ns(kLoadS);
  // Planned actions: six counter reads, the start and the stop; reads first at equal times.
  struct Act {
    int64_t t;
    int what;  // 0..5 read (up: -len, 0, +len; down: -len, 0, +len), 6 start, 7 stop
  };
  std::vector<Act> acts = {{up_plan + s - len, 0}, {up_plan + s, 1},        {up_plan + s + len, 2},
                           {down_plan + s - len, 3}, {down_plan + s, 4},    {down_plan + s + len, 5},
                           {up_plan, 6},             {down_plan, 7}};
  std::stable_sort(acts.begin(), acts.end(), [](const Act& x, const Act& y) { return x.t < y.t; });
  CounterRead reads[6];
  int64_t t_up = up_plan, t_down = down_plan;
  for (const Act& act : acts) {
    c.sleep_until(act.t);
    if (act.what < 6) {
      reads[act.what] = c.read();
    } else if (act.what == 6) {
      t_up = marks::monotonic_ns();
      load.start();
    } else {
      load.stop();
      t_down = marks::monotonic_ns();
    }
  }
  c.sleep_until(t_down + s_to_ns(kIdleAfterS));
  const AlignedEdge b = c.aligned();

  c.log.add(c.exact("edges", lvl.name, "shift-span", "whole", rep, a, b));
  auto plan = [&](const Edge4& e, double shift, int64_t t_a, int64_t t_b, const std::string& role) {
    const int64_t tau = e.up ? t_up : t_down;
    WindowPlan p = Context::labelled("edges", lvl.name, e.set, role, rep);
    p.name.append("/").append(fmt_len(shift));
    p.t_begin_ns = t_a;
    p.t_end_ns = t_b;
    p.shift_ms = shift;
    p.shift_actual_ms = static_cast<double>((e.ending ? t_b : t_a) - tau) * 1e-6;
    p.ref_j = e.up ? step_model_j(t_a, t_b, tau, c.idle_w, lvl.power_w) : step_model_j(t_a, t_b, tau, lvl.power_w, c.idle_w);
    p.ref_kind = "step-model";
    return p;
  };
  for (std::size_t k = 0; k < 4; ++k) {
    const Edge4& e = kEdges[k];
    const std::size_t i0 = e.up ? 0 : 3;
    const CounterRead& ra = e.ending ? reads[i0] : reads[i0 + 1];
    const CounterRead& rb = e.ending ? reads[i0 + 1] : reads[i0 + 2];
    WindowPlan p = plan(e, shift_ms, mid_ns(ra), mid_ns(rb), "zeus");
    p.ctr_begin = ra;
    p.ctr_end = rb;
    c.log.add(p);
  }
  for (double shift : o.shifts_ms)
    for (const Edge4& e : kEdges) {
      const int64_t at = (e.up ? t_up : t_down) + s_to_ns(shift * 1e-3);
      c.log.add(e.ending ? plan(e, shift, at - len, at, "scan") : plan(e, shift, at, at + len, "scan"));
    }
  c.add_phase("edges", lvl.name, "shift-load", rep, t_up, t_down);
}

void shifts(Context& c, Level& lvl) {
  const Options& o = c.opt;
  std::vector<double> order;
  for (int r = 0; r < o.shift_reps; ++r) order.insert(order.end(), o.shifts_ms.begin(), o.shifts_ms.end());
  std::shuffle(order.begin(), order.end(), c.rng());
  c.progress("edges", lvl.name, std::to_string(order.size()) + " shifted-edge repeats");
  int rep = 0;
  for (double shift : order) {
    const double need_s = kIdleBeforeS + kLoadS + kIdleAfterS + 0.4;
    if (!c.has_time(need_s)) {
      c.skip("edges shift " + lvl.name + ": " + std::to_string(order.size() - static_cast<std::size_t>(rep)) + " repeats", need_s);
      break;
    }
    one_repeat(c, lvl, shift, rep++);
    c.log.flush();
  }
}

}  // namespace

void run_shifts(Context& c) {
  for (const char* name : {"below", "near", "cap"})
    if (c.selected(c.opt.shift_levels, name)) shifts(c, c.levels[name]);
}

}  // namespace wattlab::device
