// Part "levels" of meter_validate: idle power, then each level's steady phase. The energy counter
// read on its updates at the phase's first, middle and last edge gives the level's power (and its
// drift), energy per unit and time per unit: the long-run rates every other part is judged
// against. With --steady-windows, windows of every short length are placed at random inside the
// phase (they may overlap), each with the counter read at its edges on this thread.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "validate_context.h"
#include "wattlab/marks.h"

namespace wattlab::device {
namespace {

constexpr double kEdgeGapS = 0.02;  // in-phase window edges keep this far from each other
constexpr double kMidZoneS = 0.15;  // the middle edge reads until an update: keep edges out of it

void choose_near(Context& c);

bool near_any(const std::vector<int64_t>& edges, int64_t t) {
  return std::any_of(edges.begin(), edges.end(), [&](int64_t e) { return std::llabs(e - t) < s_to_ns(kEdgeGapS); });
}

struct SteadyWindow {
  double len_s;
  int rep;
  std::size_t ia, ib;  // indices of its edges
};

// Random in-phase windows of each length, their edges inside [t0, t0 + span], apart from each
// other and from the middle edge's zone where possible.
std::vector<SteadyWindow> plan_windows(Context& c, int64_t t0, int64_t t_mid, std::vector<int64_t>& edges) {
  const Options& o = c.opt;
  auto in_zone = [&](int64_t t) { return t >= t_mid - s_to_ns(kEdgeGapS) && t <= t_mid + s_to_ns(kMidZoneS); };
  std::vector<SteadyWindow> wins;
  for (double len : o.steady_lengths) {
    const double room = o.steady_s - len - 2 * kEdgeGapS;
    if (room <= 0) continue;
    for (int rep = 0; rep < o.steady_reps; ++rep) {
      int64_t s = 0, e = 0;
      for (int attempt = 0; attempt < 50; ++attempt) {
        s = t0 + s_to_ns(kEdgeGapS + c.uniform(0, room));
        e = s + s_to_ns(len);
        if (!in_zone(s) && !in_zone(e) && !near_any(edges, s) && !near_any(edges, e)) break;
      }
      edges.push_back(s);
      edges.push_back(e);
      wins.push_back({len, rep, edges.size() - 2, edges.size() - 1});
    }
  }
  return wins;
}

double steady_need_s(const Options& o) { return o.warm_s + o.steady_s + 0.5; }

void steady_phase(Context& c, Level& lvl) {
  const Options& o = c.opt;
  UnitLoad& load = *lvl.load;
  if (!c.has_time(steady_need_s(o))) {
    c.skip("levels " + lvl.name + " steady phase (and every part at this level)", steady_need_s(o));
    return;
  }
  c.progress("levels", lvl.name, "steady phase, " + load.describe());
  load.start();
  const int64_t t_on = marks::monotonic_ns();
  c.sleep_until(t_on + s_to_ns(o.warm_s));
  const AlignedEdge a = c.aligned();
  const uint64_t n_a = load.launched();
  const int64_t t_mid = a.t_ns() + s_to_ns(o.steady_s / 2);
  std::vector<int64_t> edges;
  const std::vector<SteadyWindow> wins = o.steady_windows ? plan_windows(c, a.t_ns(), t_mid, edges) : std::vector<SteadyWindow>{};
  std::vector<std::size_t> order(edges.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return edges[x] < edges[y]; });
  std::vector<CounterRead> reads(edges.size());
  std::vector<uint64_t> launched_at(edges.size());
  std::vector<bool> done(edges.size(), false);
  bool mid_done = false;
  AlignedEdge m;
  uint64_t n_m = 0;
  for (std::size_t idx : order) {
    if (stop_requested()) break;
    if (!mid_done && edges[idx] >= t_mid) {
      c.sleep_until(t_mid);
      m = c.aligned();
      n_m = load.launched();
      mid_done = true;
    }
    c.sleep_until(edges[idx]);
    reads[idx] = c.read();
    launched_at[idx] = load.launched();
    done[idx] = true;
  }
  if (!mid_done) {
    c.sleep_until(t_mid);
    m = c.aligned();
    n_m = load.launched();
  }
  c.sleep_until(a.t_ns() + s_to_ns(o.steady_s));
  const AlignedEdge b = c.aligned();
  const uint64_t n_b = load.launched();
  load.stop();
  const int64_t t_off = marks::monotonic_ns();

  WindowPlan first = c.exact("levels", lvl.name, "rate-first", "rate", 0, a, m);
  WindowPlan second = c.exact("levels", lvl.name, "rate-second", "rate", 0, m, b);
  WindowPlan whole = c.exact("levels", lvl.name, "rate", "rate", 0, a, b);
  first.work_units = static_cast<double>(n_m - n_a);
  second.work_units = static_cast<double>(n_b - n_m);
  whole.work_units = static_cast<double>(n_b - n_a);
  const double dur_s = static_cast<double>(b.t_ns() - a.t_ns()) * 1e-9;
  lvl.power_w = whole.ref_j / dur_s;
  lvl.p1_w = first.ref_j / (static_cast<double>(m.t_ns() - a.t_ns()) * 1e-9);
  lvl.p2_w = second.ref_j / (static_cast<double>(b.t_ns() - m.t_ns()) * 1e-9);
  lvl.t1_ns = a.t_ns() + (m.t_ns() - a.t_ns()) / 2;
  lvl.t2_ns = m.t_ns() + (b.t_ns() - m.t_ns()) / 2;
  lvl.e_unit_j = whole.ref_j / whole.work_units;
  lvl.t_unit_s = dur_s / whole.work_units;
  const PollIntegral poll = c.poller.integrate(a.t_ns(), b.t_ns());
  lvl.capped_share = poll.capped_share;
  lvl.sm_clock_mhz = poll.sm_clock_mhz;
  lvl.measured = true;
  for (WindowPlan* p : {&first, &second, &whole}) p->busy_s = static_cast<double>(p->t_end_ns - p->t_begin_ns) * 1e-9;
  c.log.add(first);
  c.log.add(second);
  c.log.add(whole);
  c.add_phase("levels", lvl.name, "steady-phase", 0, t_on, t_off);

  int written = 0;
  for (const SteadyWindow& w : wins) {
    if (!done[w.ia] || !done[w.ib]) continue;
    WindowPlan p = Context::labelled("short", lvl.name, "steady-" + fmt_len(w.len_s), "window", w.rep);
    p.ctr_begin = reads[w.ia];
    p.ctr_end = reads[w.ib];
    p.t_begin_ns = mid_ns(reads[w.ia]);
    p.t_end_ns = mid_ns(reads[w.ib]);
    p.planned_s = w.len_s;
    p.work_units = static_cast<double>(launched_at[w.ib] - launched_at[w.ia]);
    const double d = static_cast<double>(p.t_end_ns - p.t_begin_ns) * 1e-9;
    p.busy_s = d;
    p.ref_j = lvl.power_at(p.t_begin_ns + (p.t_end_ns - p.t_begin_ns) / 2) * d;
    p.ref_kind = "steady-rate";
    p.ref_alt_j = lvl.power_w * d;
    c.log.add(p);
    ++written;
  }
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%.1f W (halves %.1f, %.1f W), %.4f J and %.3f ms per unit, power-capped %.0f%% of polls, SM %.0f MHz; "
                "%d windows inside",
                lvl.power_w, lvl.p1_w, lvl.p2_w, lvl.e_unit_j, lvl.t_unit_s * 1e3, 100 * poll.capped_share,
                poll.sm_clock_mhz, written);
  c.progress("levels", lvl.name, buf);
  c.log.flush();
}

void idle_phase(Context& c) {
  const Options& o = c.opt;
  c.progress("levels", "idle", "settling " + fmt_len(o.settle_s) + " s, then " + fmt_len(o.idle_s) + " s of idle");
  c.sleep_until(marks::monotonic_ns() + s_to_ns(o.settle_s));
  const AlignedEdge a = c.aligned();
  c.sleep_until(a.t_ns() + s_to_ns(o.idle_s));
  const AlignedEdge b = c.aligned();
  WindowPlan p = c.exact("levels", "idle", "rate", "rate", 0, a, b);
  p.work_units = 0;
  c.idle_w = p.ref_j / (static_cast<double>(b.t_ns() - a.t_ns()) * 1e-9);
  c.log.add(p);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.2f W", c.idle_w);
  c.progress("levels", "idle", buf);
}

bool wanted(const Options& o, const std::string& level) { return ("," + o.levels + ",").find("," + level + ",") != std::string::npos; }

}  // namespace

void run_levels(Context& c) {
  const Options& o = c.opt;
  idle_phase(c);
  Loads& L = c.loads;
  if (wanted(o, "below")) {
    const int blocks = o.below_blocks > 0 ? o.below_blocks : std::max(1, L.cap->sm_count() / 4);
    L.below = std::make_unique<MmaLoad>(blocks, L.mma_iters);
    Level& lvl = c.levels["below"];
    lvl.name = "below";
    lvl.load = L.below.get();
    lvl.unit_s_timed = L.below->time_units_ms(20) * 1e-3;
    steady_phase(c, lvl);
  }
  if (wanted(o, "near")) {
    choose_near(c);
    if (c.levels.count("near") > 0) steady_phase(c, c.levels["near"]);
  }
  if (wanted(o, "cap")) {
    Level& lvl = c.levels["cap"];
    lvl.name = "cap";
    lvl.load = L.cap.get();
    lvl.unit_s_timed = L.cap->time_gemms_ms(10) * 1e-3;
    steady_phase(c, lvl);
  }
}

namespace {

struct Probe {
  std::string kind;
  int k = 0;
  double power_w = kNaN, capped_share = kNaN;
};

// Power of one candidate over about a second of steady load (counter on updates).
Probe probe(Context& c, UnitLoad& load, const std::string& kind, int k) {
  load.start();
  c.sleep_until(marks::monotonic_ns() + s_to_ns(0.6));
  const AlignedEdge a = c.aligned();
  c.sleep_until(a.t_ns() + s_to_ns(1.0));
  const AlignedEdge b = c.aligned();
  load.stop();
  WindowPlan p = c.exact("levels", "near", "probe-" + kind + "-" + std::to_string(k), "rate", 0, a, b);
  Probe r{kind, k, p.ref_j / (static_cast<double>(b.t_ns() - a.t_ns()) * 1e-9), c.poller.integrate(a.t_ns(), b.t_ns()).capped_share};
  c.log.add(p);
  c.notes["near_probes"].push_back({{"kind", kind}, {"k", k}, {"power_w", r.power_w},
                                    {"capped_share", std::isfinite(r.capped_share) ? nlohmann::json(r.capped_share) : nlohmann::json(nullptr)},
                                    {"load", load.describe()}});
  char buf[160];
  std::snprintf(buf, sizeof buf, "probe %s k=%d: %.1f W, power-capped %.0f%% of polls", kind.c_str(), k, r.power_w,
                100 * r.capped_share);
  c.progress("levels", "near", buf);
  return r;
}

constexpr double kProbeS = 2.0;  // a probe with its edges, for the deadline

// The "near" level: the highest power below the cap without touching any GPU setting. The tensor
// kernel on k SMs first (k interpolated between the below level and all SMs towards
// near_target x the power limit); if even all SMs stay under 75 % of the limit, cuBLAS's GEMM on
// fewer SMs (cublasSetSmCountTarget). A candidate counts when it is under 93 % of the limit and
// power-capped in at most 5 % of the polls.
void choose_near(Context& c) {
  const Options& o = c.opt;
  Loads& L = c.loads;
  const int sms = L.cap->sm_count();
  const double limit = std::isfinite(c.power_limit_w) ? c.power_limit_w : 700.0;
  const double target = o.near_target * limit;
  auto ok = [&](const Probe& p) { return p.power_w <= 0.93 * limit && !(p.capped_share > 0.05); };
  Level& lvl = c.levels["near"];
  lvl.name = "near";
  if (o.near_blocks > 0) {
    L.near_mma = std::make_unique<MmaLoad>(std::min(o.near_blocks, sms), L.mma_iters);
    lvl.load = L.near_mma.get();
  } else if (!c.has_time(5 * kProbeS + steady_need_s(o))) {
    c.skip("levels near (probes and steady phase)", 5 * kProbeS + steady_need_s(o));
    c.levels.erase("near");
    return;
  } else {
    L.near_mma = std::make_unique<MmaLoad>(sms, L.mma_iters);
    const Probe full = probe(c, *L.near_mma, "mma", sms);
    const Level* below = c.levels.count("below") > 0 && c.levels["below"].measured ? &c.levels["below"] : nullptr;
    if (ok(full) && full.power_w >= 0.75 * limit) {
      lvl.load = L.near_mma.get();
    } else if (!ok(full)) {
      // Too high: fewer SMs, interpolated between the below level (or idle) and all SMs.
      const int k0 = below != nullptr ? L.below->blocks() : 0;
      const double p0 = below != nullptr ? below->power_w : c.idle_w;
      Probe best = full;
      int k = sms;
      for (int attempt = 0; attempt < 3 && !ok(best); ++attempt) {
        // Interpolated towards the target; at least 10 % fewer SMs (a capped probe under the target
        // interpolates upwards).
        const double f = (target - p0) / (best.power_w - p0);
        const long interp = std::lround(k0 + f * (k - k0));
        k = std::clamp(static_cast<int>(std::min(interp, std::lround(0.9 * k))), std::max(1, k0 + 1), std::max(1, k - 1));
        L.near_mma->configure(k, L.mma_iters);
        best = probe(c, *L.near_mma, "mma", k);
      }
      lvl.load = L.near_mma.get();
    } else {
      // Too low even on all SMs: the GEMM (at the cap on all SMs) on fewer SMs.
      L.near_gemm = std::make_unique<GemmLoad>(o.gemm_n, o.seed + 7);
      int k = std::clamp(static_cast<int>(std::lround(sms * (target - c.idle_w) / (limit - c.idle_w))), 1, sms);
      Probe best;
      for (int attempt = 0; attempt < 3; ++attempt) {
        L.near_gemm->set_sm_count_target(k);
        best = probe(c, *L.near_gemm, "gemm-sms", k);
        if (ok(best) && best.power_w >= 0.75 * limit) break;
        const double f = (target - c.idle_w) / (best.power_w - c.idle_w);
        const int next = std::clamp(static_cast<int>(std::lround(k * f)), 1, sms);
        if (next == k) break;
        k = next;
      }
      if (ok(best) && best.power_w > full.power_w) {
        lvl.load = L.near_gemm.get();
      } else {
        L.near_mma->configure(sms, L.mma_iters);
        lvl.load = L.near_mma.get();
      }
    }
  }
  lvl.unit_s_timed = lvl.load->time_units_ms(10) * 1e-3;
  c.notes["near_choice"] = lvl.load->describe();
  c.progress("levels", "near", "chosen: " + lvl.load->describe());
}

}  // namespace

}  // namespace wattlab::device
