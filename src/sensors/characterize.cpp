// wattlab sensors --characterize: the measurement itself (characterize.h). Phases run on the
// caller's thread in this order: idle (every target, before any load), back-to-back polls of every
// reading, then each target's load with the counter/integrated-power agreement.
#include "sensors/characterize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/energy_math.h"
#include "core/units.h"

namespace wattlab {
namespace {

std::string fmt_s(int64_t t_ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", ns_to_s(t_ns));
  return buf;
}

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// One read of one reading, timed on the caller's thread.
struct TimedRead {
  Status status;
  int64_t t0_ns = 0, t1_ns = 0;
  std::vector<Reading> out;
};

class Probe {
 public:
  Probe(const CharacterizeTarget& t, std::size_t index, Clock& clock, const CharacterizeHooks& hooks)
      : t_(t), index_(index), clock_(clock), hooks_(hooks) {}
  const Domain& domain() const { return t_.sensor->domains().at(t_.domain_index); }
  bool supports(ReadingKind k) const { return domain().model.supports(k); }

  TimedRead read(ReadingKind kind) {
    TimedRead r;
    r.t0_ns = clock_.now_ns();
    r.status = t_.sensor->read(t_.domain_index, kind, r.out);
    r.t1_ns = clock_.now_ns();
    if (r.t1_ns == r.t0_ns && clock_.is_virtual()) {  // a free read on virtual time must not spin forever
      clock_.spend_ns(kNsPerUs);
      r.t1_ns = clock_.now_ns();
    }
    return r;
  }
  void record(const Reading& r) const {
    if (hooks_.record) hooks_.record(index_, r);
  }
  void record_all(const TimedRead& r) const {
    for (const auto& x : r.out) record(x);
  }
  Clock& clock() { return clock_; }

 private:
  const CharacterizeTarget& t_;
  std::size_t index_;
  Clock& clock_;
  const CharacterizeHooks& hooks_;
};

// The energy counter read back to back until its value changes: that read is a tick edge.
struct Edge {
  bool ok = false;
  std::string error;
  int64_t t_ns = 0;         // midpoint of the read that saw the new value
  double value = 0;
  int64_t resolution_ns = 0;  // from the last read with the old value to this one
};

Edge counter_edge(Probe& p, int64_t max_wait_ns, const std::function<void()>& between = {}) {
  Edge e;
  const int64_t t_begin = p.clock().now_ns();
  auto first = p.read(ReadingKind::energy_counter_j);
  if (!first.status || first.out.empty()) {
    e.error = first.status ? "no value" : first.status.error().message();
    return e;
  }
  p.record_all(first);
  double old_value = first.out.back().value;
  int64_t old_t = first.out.back().t_ns;
  while (p.clock().now_ns() - t_begin < max_wait_ns) {
    if (between) between();
    auto r = p.read(ReadingKind::energy_counter_j);
    if (!r.status || r.out.empty()) continue;
    p.record_all(r);
    const Reading& x = r.out.back();
    if (x.value != old_value) {
      e.ok = true;
      e.t_ns = x.t_ns;
      e.value = x.value;
      e.resolution_ns = x.t_ns - old_t;
      return e;
    }
    old_t = x.t_ns;
  }
  e.error = "the energy counter did not change within " + fmt_s(max_wait_ns);
  return e;
}

int64_t edge_wait_ns(const Domain& d) {
  const ReadingModel* m = d.model.find(ReadingKind::energy_counter_j);
  const int64_t period = m && m->update_period_ns > 0 ? m->update_period_ns : 100 * kNsPerMs;
  return std::max<int64_t>(5 * period, kNsPerS);
}

std::optional<ReadingKind> idle_power_kind(const Probe& p) {
  for (ReadingKind k : {ReadingKind::power_instant_w, ReadingKind::power_average_w})
    if (p.supports(k)) return k;
  return std::nullopt;
}

// Reads `kind` every `interval_ns` until `until_ns`, appending values to `values`.
void poll_paced(Probe& p, ReadingKind kind, int64_t interval_ns, int64_t until_ns, std::vector<double>& values) {
  for (int64_t next = p.clock().now_ns(); p.clock().now_ns() < until_ns;) {
    auto r = p.read(kind);
    if (r.status && !r.out.empty()) {
      p.record_all(r);
      values.push_back(r.out.back().value);
    }
    next = std::max(next + interval_ns, r.t1_ns);  // a slow read does not cause a burst after it
    p.clock().sleep_until_ns(std::min(next, until_ns));
  }
}

IdleCharacter measure_idle(Probe& p, const CharacterizeOptions& o) {
  IdleCharacter idle;
  const auto kind = idle_power_kind(p);
  const bool counter = p.supports(ReadingKind::energy_counter_j);
  if (!kind && !counter) {
    idle.skipped = "no power or energy reading";
    return idle;
  }
  // Settle: block means of the power reading until two in a row agree, or --idle-s has passed.
  const int64_t t_wait = p.clock().now_ns();
  if (kind) {
    idle.power_kind = *kind;
    while (true) {
      std::vector<double> block;
      poll_paced(p, *kind, o.idle_poll_interval_ns, p.clock().now_ns() + o.idle_block_ns, block);
      if (!block.empty()) idle.block_means_w.push_back(mean(block));
      const auto& m = idle.block_means_w;
      if (m.size() >= 2 &&
          std::abs(m.back() - m[m.size() - 2]) <= std::max(o.settle_tolerance_w, o.settle_tolerance_rel * std::abs(m.back()))) {
        idle.settled = true;
        break;
      }
      // At least two blocks (one comparison), at most as many as fit in --idle-s.
      if (idle.block_means_w.size() >= std::max<std::size_t>(2, static_cast<std::size_t>(o.idle_max_ns / o.idle_block_ns)) ||
          p.clock().now_ns() - t_wait >= o.idle_max_ns + o.idle_block_ns)
        break;
    }
  } else {
    idle.power_kind = ReadingKind::energy_counter_j;
  }
  idle.waited_ns = p.clock().now_ns() - t_wait;
  // Measure: tick-aligned counter edges around a stretch of power readings.
  std::vector<double> values;
  Edge a, b;
  if (counter) a = counter_edge(p, edge_wait_ns(p.domain()));
  idle.t_begin_ns = a.ok ? a.t_ns : p.clock().now_ns();
  if (kind) poll_paced(p, *kind, o.idle_poll_interval_ns, idle.t_begin_ns + o.idle_measure_ns, values);
  else p.clock().sleep_until_ns(idle.t_begin_ns + o.idle_measure_ns);
  if (a.ok) b = counter_edge(p, edge_wait_ns(p.domain()));
  idle.t_end_ns = b.ok ? b.t_ns : p.clock().now_ns();
  if (a.ok && b.ok && b.t_ns > a.t_ns) {
    const ReadingModel* m = p.domain().model.find(ReadingKind::energy_counter_j);
    const CounterStep step = counter_step(a.value, b.value, m ? m->wrap_range : 0);
    if (!step.reset) {
      idle.counter_power_w = step.delta / ns_to_s(b.t_ns - a.t_ns);
      idle.counter_edge_ns = static_cast<double>(std::max(a.resolution_ns, b.resolution_ns));
    }
  }
  idle.power_reads = values.size();
  if (!values.empty()) {
    idle.power_w = mean(values);
    idle.power_sd_w = values.size() > 1 ? stddev(values) : 0;
  } else if (idle.counter_power_w) {
    idle.power_w = *idle.counter_power_w;
  }
  idle.measured = !values.empty() || idle.counter_power_w.has_value();
  if (!idle.measured) idle.skipped = "no reading answered: " + (a.error.empty() ? std::string("power reads failed") : a.error);
  return idle;
}

// Back-to-back polling of one reading: read cost, change times, sample spacing.
ReadingCharacter poll_reading(Probe& p, const ReadingModel& model, const CharacterizeOptions& o) {
  ReadingCharacter rc;
  rc.domain_id = p.domain().id;
  rc.kind = model.kind;
  rc.model = model;
  const bool samples = model.kind == ReadingKind::power_sample_w;
  std::vector<double> costs, starts, changes, sample_ts, per_update;
  std::optional<double> last_value;
  const int64_t t_begin = p.clock().now_ns();
  int64_t last_start = 0;
  while (p.clock().now_ns() - t_begin < o.poll_ns) {
    auto r = p.read(model.kind);
    ++rc.reads;
    if (costs.size() < o.max_cost_samples) {
      costs.push_back(static_cast<double>(r.t1_ns - r.t0_ns));
      if (last_start != 0) starts.push_back(static_cast<double>(r.t0_ns - last_start));
    }
    last_start = r.t0_ns;
    if (!r.status) {
      if (rc.failed_reads++ == 0) rc.first_error = r.status.error().message();
      continue;
    }
    if (samples) {
      if (r.out.empty()) continue;
      ++rc.changes;
      changes.push_back(static_cast<double>((r.t0_ns + r.t1_ns) / 2));
      per_update.push_back(static_cast<double>(r.out.size()));
      for (const auto& x : r.out) {
        if (sample_ts.empty() || static_cast<double>(x.t_ns) > sample_ts.back()) sample_ts.push_back(static_cast<double>(x.t_ns));
        p.record(x);
      }
      continue;
    }
    if (r.out.empty()) continue;  // e.g. GPM: nothing new yet
    const Reading& x = r.out.back();
    if (!last_value || x.value != *last_value) {
      if (last_value) {
        ++rc.changes;
        changes.push_back(static_cast<double>(x.t_ns));
      }
      last_value = x.value;
      p.record(x);
    }
  }
  rc.poll_dur_ns = p.clock().now_ns() - t_begin;
  rc.read_cost_ns = stats_of(costs);
  rc.read_interval_ns = static_cast<int64_t>(stats_of(starts).median);
  std::vector<double> intervals;
  for (std::size_t i = 1; i < changes.size(); ++i) intervals.push_back(changes[i] - changes[i - 1]);
  rc.update_period_ns = stats_of(intervals);
  if (samples) {
    rc.samples = sample_ts.size();
    std::vector<double> spacing;
    for (std::size_t i = 1; i < sample_ts.size(); ++i) spacing.push_back(sample_ts[i] - sample_ts[i - 1]);
    rc.sample_spacing_ns = stats_of(spacing);
    // The first read returns what piled up since the previous phase: not one update's worth.
    if (!per_update.empty()) per_update.erase(per_update.begin());
    rc.samples_per_update = stats_of(per_update);
  }
  return rc;
}

// A reading's values under load: every read (or sample) as (time, value), and the distinct
// published values (a value that differs from the one before).
struct Series {
  ReadingKind kind;
  std::vector<std::pair<int64_t, double>> points;
  std::vector<std::pair<int64_t, double>> changes;
  void add(const Reading& r) {
    if (!points.empty() && r.t_ns <= points.back().first) return;  // samples seen twice
    if (kind == ReadingKind::power_sample_w || points.empty() || r.value != points.back().second)
      changes.emplace_back(r.t_ns, r.value);
    points.emplace_back(r.t_ns, r.value);
  }
};

std::string bias_note(ReadingKind kind, const ReadingModel* m, const CharacterizeOptions& o, double expected_pct) {
  char buf[640];
  const double window_ms = m ? static_cast<double>(m->averaging_window_ns) * 1e-6 : 0;
  const double period_ms = m ? static_cast<double>(m->update_period_ns) * 1e-6 : 0;
  switch (kind) {
    case ReadingKind::power_instant_w:
      std::snprintf(buf, sizeof buf,
                    "each value averages %.0f ms of every %.0f ms (model; A100/H100/H200: 25 of 100 ms, docs/sensors.md): "
                    "under steady power expect 0%% within the +-; power that moves faster than %.0f ms (power-cap clock "
                    "dithering, periodic work) is seen %.0f%% of the time, so the integral scatters and aliases, while "
                    "the counter sees all of it",
                    window_ms, period_ms, period_ms, period_ms > 0 ? 100 * window_ms / period_ms : 0.0);
      break;
    case ReadingKind::power_average_w:
      std::snprintf(buf, sizeof buf,
                    "a %.0f ms running average: it lags, and the window opens %.2f s into the load, so its first values "
                    "still hold pre-load idle: expect about %+.1f%% from the lag alone (ramp as a step from idle)",
                    window_ms, ns_to_s(o.load_skip_ns), expected_pct);
      break;
    case ReadingKind::power_sample_w:
      std::snprintf(buf, sizeof buf,
                    "each buffered sample taken to stand for the spacing before it (what it averages is undocumented; "
                    "model: %.0f ms); denser than the instant reading, so it aliases less: expect close to 0%%",
                    window_ms);
      break;
    default: buf[0] = 0;
  }
  return buf;
}

AgreementRow agreement(const Series& s, const LoadCharacter& lc, const ReadingModel* m, const CharacterizeOptions& o,
                       double idle_w) {
  AgreementRow row;
  row.kind = s.kind;
  const int64_t a = lc.t_a_ns, b = lc.t_b_ns;
  std::vector<PowerPiece> pieces;
  std::vector<double> inside;
  // A value stands for the interval that ends where it was read: the sensor publishes what it
  // averaged before. A value that does not change (steady or aliased power) still counts.
  for (std::size_t i = 1; i < s.points.size(); ++i)
    pieces.push_back({s.points[i - 1].first, s.points[i].first, s.points[i].second});
  for (const auto& [t, v] : s.changes)
    if (t > a && t <= b) inside.push_back(v);
  const Integral in = integrate(pieces, a, b);
  row.values = inside.size();
  row.covered = static_cast<double>(in.covered_ns) / static_cast<double>(b - a);
  double expected = 0;
  if (s.kind == ReadingKind::power_average_w && m && m->averaging_window_ns > 0) {
    const double w = ns_to_s(m->averaging_window_ns), skip = ns_to_s(o.load_skip_ns);
    const double missing_j = (lc.counter_power_w - idle_w) * std::pow(std::max(0.0, w - skip), 2) / (2 * w);
    expected = lc.counter_j > 0 ? -100 * missing_j / lc.counter_j : 0;
  }
  row.bias = bias_note(s.kind, m, o, expected);
  if (row.covered < 0.9) {
    row.reason = "the readings cover too little of the window (" + std::to_string(inside.size()) + " values, " +
                 std::to_string(static_cast<int>(100 * row.covered)) + "%)";
    return row;
  }
  row.available = true;
  row.integrated_j = in.energy_j;
  row.ratio = in.energy_j / lc.counter_j;
  row.diff_pct = 100 * (in.energy_j - lc.counter_j) / lc.counter_j;
  const double m_w = inside.empty() ? 0 : mean(inside);
  const double stat = m_w > 0 && inside.size() > 1 ? stddev(inside) / (m_w * std::sqrt(static_cast<double>(inside.size()))) : 0;
  const double edge = std::sqrt(2.0) * lc.counter_edge_ns / static_cast<double>(b - a);
  row.uncertainty_pct = 100 * rss({stat, edge});
  return row;
}

LoadCharacter run_load(Probe& p, const CharacterizeTarget& t, const CharacterizeOptions& o, double idle_w) {
  LoadCharacter lc;
  if (!t.load) {
    lc.skipped = t.no_load_reason.empty() ? "no load available" : t.no_load_reason;
    return lc;
  }
  lc.load = t.load->describe();
  lc.simulated = t.load->simulated();
  if (!p.supports(ReadingKind::energy_counter_j)) {
    lc.skipped = "no energy counter to compare integrated power against";
    return lc;
  }
  if (auto st = t.load->prepare(); !st) {
    lc.skipped = "the load could not be prepared: " + st.error().message();
    return lc;
  }
  std::vector<Series> series;
  for (ReadingKind k : {ReadingKind::power_instant_w, ReadingKind::power_average_w, ReadingKind::power_sample_w})
    if (p.supports(k)) series.push_back({k, {}, {}});
  Series* samples = nullptr;
  for (auto& s : series)
    if (s.kind == ReadingKind::power_sample_w) samples = &s;
  if (samples) p.record_all(p.read(ReadingKind::power_sample_w));  // only samples from now on
  int64_t next_samples = 0;
  auto read_power = [&](bool force_samples) {
    for (auto& s : series) {
      if (s.kind == ReadingKind::power_sample_w) {
        if (!force_samples && p.clock().now_ns() < next_samples) continue;
        next_samples = p.clock().now_ns() + o.load_samples_interval_ns;
      }
      auto r = p.read(s.kind);
      if (!r.status) continue;
      for (const auto& x : r.out) {
        p.record(x);
        s.add(x);
      }
    }
  };
  auto poll_until = [&](int64_t until_ns) {
    for (int64_t next = p.clock().now_ns(); p.clock().now_ns() < until_ns;) {
      read_power(false);
      next = std::max(next + o.load_poll_interval_ns, p.clock().now_ns());
      p.clock().sleep_until_ns(std::min(next, until_ns));
    }
  };
  lc.t_start_ns = p.clock().now_ns();
  if (auto st = t.load->start(o.load_ns); !st) {
    lc.skipped = "the load did not start: " + st.error().message();
    return lc;
  }
  lc.ran = true;
  lc.t_stop_ns = lc.t_start_ns + o.load_ns;
  next_samples = lc.t_start_ns + o.load_samples_interval_ns;
  poll_until(lc.t_start_ns + o.load_skip_ns);
  const Edge a = counter_edge(p, edge_wait_ns(p.domain()), [&] { read_power(false); });
  poll_until(lc.t_stop_ns - o.load_tail_ns);
  const Edge b = a.ok ? counter_edge(p, edge_wait_ns(p.domain()), [&] { read_power(false); }) : Edge{};
  poll_until(lc.t_stop_ns);
  read_power(true);
  if (auto st = t.load->finish(lc.load_report); !st) lc.load_report = "the load failed: " + st.error().message();
  if (!a.ok || !b.ok) {
    lc.skipped = "no agreement: " + (a.ok ? b.error : a.error);
    return lc;
  }
  lc.t_a_ns = a.t_ns;
  lc.t_b_ns = b.t_ns;
  lc.counter_edge_ns = static_cast<double>(std::max(a.resolution_ns, b.resolution_ns));
  const ReadingModel* cm = p.domain().model.find(ReadingKind::energy_counter_j);
  const CounterStep step = counter_step(a.value, b.value, cm ? cm->wrap_range : 0);
  if (step.reset || b.t_ns <= a.t_ns) {
    lc.skipped = "no agreement: the energy counter went backwards during the load (reset)";
    return lc;
  }
  lc.counter_j = step.delta;
  lc.counter_power_w = step.delta / ns_to_s(b.t_ns - a.t_ns);
  for (const auto& s : series) lc.rows.push_back(agreement(s, lc, p.domain().model.find(s.kind), o, idle_w));
  return lc;
}

}  // namespace

Stats stats_of(std::vector<double> xs) {
  Stats s;
  s.n = xs.size();
  if (xs.empty()) return s;
  std::sort(xs.begin(), xs.end());
  s.median = quantile(xs, 0.5);
  s.p10 = quantile(xs, 0.1);
  s.p90 = quantile(xs, 0.9);
  s.p99 = quantile(xs, 0.99);
  s.min = xs.front();
  s.max = xs.back();
  return s;
}

std::vector<DomainCharacter> characterize(const std::vector<CharacterizeTarget>& targets, Clock& clock,
                                          const CharacterizeOptions& o, const CharacterizeHooks& hooks) {
  auto say = [&](const std::string& line) {
    if (hooks.progress) hooks.progress(line);
  };
  std::vector<Probe> probes;
  std::vector<DomainCharacter> out(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    probes.emplace_back(targets[i], i, clock, hooks);
    const Domain& d = probes[i].domain();
    out[i].domain_id = d.id;
    out[i].name = d.name;
    out[i].simulated = d.simulated;
  }
  // Sample buffers are emptied now and left alone through the idle phase: the first read after it
  // shows how much the buffer holds.
  std::vector<int64_t> drained(targets.size(), 0);
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (probes[i].supports(ReadingKind::power_sample_w)) {
      auto r = probes[i].read(ReadingKind::power_sample_w);
      probes[i].record_all(r);
      drained[i] = r.t1_ns;
    }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    say("idle: " + out[i].domain_id + ": waiting up to " + fmt_s(o.idle_max_ns) + " for power to settle, then " +
        fmt_s(o.idle_measure_ns) + " of idle power");
    out[i].idle = measure_idle(probes[i], o);
  }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const Domain& d = probes[i].domain();
    say("polling: " + d.id + ": " + std::to_string(d.model.readings.size()) + " readings, " + fmt_s(o.poll_ns) +
        " each, back to back");
    std::size_t depth = 0;
    int64_t alone = 0;
    std::vector<double> depth_ts;
    if (drained[i] != 0) {
      auto r = probes[i].read(ReadingKind::power_sample_w);
      probes[i].record_all(r);
      depth = r.out.size();
      alone = r.t0_ns - drained[i];
      for (const auto& x : r.out) depth_ts.push_back(static_cast<double>(x.t_ns));
    }
    for (const auto& m : d.model.readings) {
      ReadingCharacter rc = poll_reading(probes[i], m, o);
      if (m.kind == ReadingKind::power_sample_w) {
        rc.depth_samples = depth;
        rc.depth_left_alone_ns = alone;
        // Truncated when the samples returned span clearly less than the time left alone.
        const double spacing = rc.sample_spacing_ns.median;
        const double span = depth_ts.size() > 1 ? depth_ts.back() - depth_ts.front() : 0;
        rc.depth_is_lower_bound = !(spacing > 0 && span + 3 * spacing < static_cast<double>(alone));
      }
      out[i].readings.push_back(std::move(rc));
    }
  }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets[i].load)
      say("load: " + out[i].domain_id + ": " + targets[i].load->describe() + " for " + fmt_s(o.load_ns));
    out[i].load = run_load(probes[i], targets[i], o, out[i].idle.measured ? out[i].idle.power_w : 0.0);
  }
  return out;
}

}  // namespace wattlab
