#include "estimate.h"

#include "average_power.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <fmt/format.h>

namespace wattlab {
namespace {

// The counter span that scales the samples: long enough that a few ms of counter timing error
// is a small fraction of its energy.
constexpr int64_t kCalibrationSpanNs = 20'000'000'000;

// The second estimate of a window, which cross-checks the primary one.
struct CrossCheck {
  double energy_j = 0;
  double u_j = 0;  // 1 sigma
  EstimatorUsed estimator;
};

double u2(const EdgeEstimate& e) {
  return e.u_shape_j * e.u_shape_j + e.u_timing_j * e.u_timing_j + e.u_noise_j * e.u_noise_j;
}

// Returns a note when a summary comes from another estimate than its usual one.
std::optional<std::string> summarize_telemetry(const SensorModel& model, const Timeline& tl, int64_t a, int64_t b,
                                               TelemetrySummary& t) {
  auto mean_of = [&](ReadingKind k, std::optional<double>& dst) {
    const auto s = tl.series(k, a, b);
    if (s.n) dst = s.mean;
  };
  mean_of(ReadingKind::sm_clock_mhz, t.mean_sm_clock_mhz);
  mean_of(ReadingKind::mem_clock_mhz, t.mean_mem_clock_mhz);
  mean_of(ReadingKind::utilization_gpu_pct, t.mean_utilization_gpu_pct);
  mean_of(ReadingKind::gpm_sm_activity_pct, t.mean_sm_activity_pct);
  mean_of(ReadingKind::gpm_sm_occupancy_pct, t.mean_sm_occupancy_pct);
  mean_of(ReadingKind::gpm_tensor_activity_pct, t.mean_tensor_activity_pct);
  mean_of(ReadingKind::gpm_dram_bw_pct, t.mean_dram_bw_pct);
  mean_of(ReadingKind::power_limit_w, t.power_limit_w);
  const auto temp = tl.series(ReadingKind::temperature_c, a, b);
  if (temp.n) {
    t.mean_temperature_c = temp.mean;
    t.temperature_begin_c = temp.first;
    t.temperature_end_c = temp.last;
  }
  const auto mem = tl.series(ReadingKind::memory_used_bytes, a, b);
  if (mem.n) t.max_memory_used_bytes = mem.last > mem.mean ? mem.last : mem.mean;
  const auto reasons = tl.series(ReadingKind::clock_event_reasons, a, b);
  if (reasons.n) t.clock_event_reasons_seen = reasons.bit_or;
  // Violation counters are cumulative ns: their slope over the window is the capped share.
  auto capped = [&](ReadingKind k, std::optional<double>& dst) {
    const auto s = tl.series(k, a, b);
    if (s.n >= 2 && s.t_last_ns > s.t_first_ns)
      dst = std::clamp((s.last - s.first) / static_cast<double>(s.t_last_ns - s.t_first_ns), 0.0, 1.0);
  };
  capped(ReadingKind::power_violation_ns, t.power_capped_fraction);
  capped(ReadingKind::thermal_violation_ns, t.thermal_capped_fraction);
  // The violation counters are dear (1-2 ms a read on an H200) and read every few seconds, so a
  // short window rarely holds two of their reads; the clock-event reasons, cheap and read several
  // times a second, sample the same state: the share of them with the policy's bits set.
  // Only where the domain has the counter: a share where it has none (the sim) would be new, not a stand-in.
  std::string from_reasons;
  int n_from_reasons = 0;
  auto from_bits = [&](std::optional<double>& dst, ReadingKind counter, uint64_t mask, const char* what) {
    if (dst || !model.supports(counter)) return;
    const auto r = tl.series(ReadingKind::clock_event_reasons, a, b, mask);
    if (!r.n) return;
    dst = static_cast<double>(r.n_masked) / static_cast<double>(r.n);
    ++n_from_reasons;
    from_reasons += fmt::format("{}{} share from {} clock-event reason reading(s) in the window ({} with the {})",
                                from_reasons.empty() ? "" : "; ", what, r.n, r.n_masked,
                                mask == kClockEventSwPowerCap ? "SW power cap bit" : "thermal slowdown bits");
  };
  from_bits(t.power_capped_fraction, ReadingKind::power_violation_ns, kClockEventSwPowerCap, "power-capped");
  from_bits(t.thermal_capped_fraction, ReadingKind::thermal_violation_ns, kClockEventSwThermal | kClockEventHwThermal,
            "thermally capped");
  if (n_from_reasons > 0)
    return from_reasons + (n_from_reasons == 1 ? ", not the violation counter (fewer than two of its reads fell inside)"
                                               : ", not the violation counters (fewer than two of their reads fell inside)");
  return std::nullopt;
}

}  // namespace

bool end_is_covered(const Timeline& tl, int64_t b_ns) {
  if (tl.has_counter()) return tl.energy_at(b_ns).covered;
  // Nothing this domain reads can ever cover an end (NVML's gpu:0/memory has only the 1 s power
  // average): waiting for it held every result back until the end timeout, 4 s on the H200.
  if (!tl.has_power_shape())
    return tl.average_model() == nullptr || average_covers_end(tl.average_readings(), *tl.average_model(), b_ns);
  return tl.integrate_power(b_ns - 1, b_ns).ok;
}

DomainEnergy estimate_window(const Domain& domain, const Timeline& tl, const DomainState& state, int64_t a,
                             int64_t b, const std::optional<EdgeEstimate>& begin) {
  DomainEnergy d;
  d.domain_id = domain.id;
  d.simulated = domain.simulated;
  const double dur_s = static_cast<double>(b - a) * 1e-9;
  if (state.lost && state.lost_at_ns <= b) {
    d.add_issue(IssueCode::device_lost, fmt::format("{} was lost {:.3f} s into the window: no energy after that",
                                                    domain.id, static_cast<double>(state.lost_at_ns - a) * 1e-9));
  }
  bool primary_ok = false;
  if (tl.has_counter()) {
    const EdgeEstimate ea = begin ? *begin : tl.energy_at(a);
    const EdgeEstimate eb = tl.energy_at(b);
    if (ea.ok && eb.ok) {
      primary_ok = true;
      d.energy_j = eb.energy_j - ea.energy_j;
      d.uncertainty_j = 2.0 * std::sqrt(u2(ea) + u2(eb) + 2 * std::pow(tl.counter_resolution_j() / std::sqrt(12.0), 2) +
                                        tl.bridged_u2(a, b));
      d.estimator = EstimatorUsed::edges(ea.estimator, eb.estimator);
      // The counter-scaled samples, where the timeline still holds them: usually the sharper of
      // the two for windows of seconds; the counter's own edges win for long windows.
      bool cal_covered = false;
      const auto cal = tl.calibrated_samples(a, b, kCalibrationSpanNs, &cal_covered);
      std::optional<CrossCheck> other;
      if (cal.ok && 2.0 * cal.u_j < d.uncertainty_j) {
        other = CrossCheck{d.energy_j, d.uncertainty_j / 2.0, d.estimator};
        d.energy_j = cal.energy_j;
        d.uncertainty_j = 2.0 * cal.u_j;
        d.estimator = cal.estimator;
      } else if (cal.ok) {
        other = CrossCheck{cal.energy_j, cal.u_j, cal.estimator};
      } else {
        const auto raw = tl.integrate_power(a, b);
        if (raw.ok) other = CrossCheck{raw.energy_j, raw.u_j, raw.estimator};
      }
      if (other) {
        d.cross_check_j = other->energy_j;
        d.cross_check_estimator = other->estimator;
        // Raw integrated power carries the board's gain: allow the gain tolerance for it.
        const double gain =
            other->estimator.end_kind == Estimator::none && integrates_power_only(other->estimator.kind)
                ? domain.model.gain_tolerance
                : 0.0;
        const double tol = std::hypot(d.uncertainty_j, 2 * other->u_j) + (gain + 0.01) * std::abs(d.energy_j);
        const double diff = std::abs(other->energy_j - d.energy_j);
        if (diff > tol) {
          // Either may be the wrong one: the uncertainty grows to reach the cross-check's own range.
          const double widened = diff + 2 * other->u_j + gain * std::abs(other->energy_j);
          const bool widen = widened > d.uncertainty_j;
          if (widen) d.uncertainty_j = widened;
          d.add_issue(IssueCode::sources_disagree,
                      fmt::format("sources disagree: {} gives {:.3f} J, {} gives {:.3f} J{}", to_string(d.estimator),
                                  d.energy_j, to_string(other->estimator), other->energy_j,
                                  widen ? fmt::format("; the uncertainty is widened to {:.3f} J to cover both",
                                                      d.uncertainty_j)
                                        : std::string()));
        }
      }
      if (!eb.covered)
        d.add_issue(IssueCode::counter_not_published,
                    "provisional: the counter has not yet published past the window's end");
    } else {
      d.add_issue(IssueCode::counter_not_held, "the timeline does not hold the energy counter around the window's edges");
    }
  }
  if (!primary_ok) {
    const auto integ = tl.integrate_power(a, b);
    if (integ.ok) {
      primary_ok = true;
      d.energy_j = integ.energy_j;
      d.uncertainty_j = 2.0 * integ.u_j;
      d.estimator = integ.estimator;
    }
  }
  // Only a trailing average (NVML's gpu:N/memory): its own estimator, which says why when it
  // has no estimate or none it can stand behind.
  const bool average_only = !tl.has_counter() && !tl.has_power_shape() && tl.average_model() != nullptr;
  bool average_unavailable = false;
  if (!primary_ok && average_only) {
    const AverageEstimate avg = integrate_average(tl.average_readings(), *tl.average_model(), a, b);
    if (avg.ok) {
      primary_ok = true;
      d.energy_j = avg.energy_j;
      d.uncertainty_j = 2.0 * avg.u_j;
      d.estimator = Estimator::integrated_average;
      d.readings_used = avg.points;
    }
    if (avg.issue) {
      average_unavailable = avg.ok;
      d.add_issue(*avg.issue, avg.why);
    }
  }
  d.available = primary_ok && !average_unavailable && !(state.lost && state.lost_at_ns <= b);
  if (!primary_ok && !average_only)
    d.add_issue(IssueCode::no_estimate, "no energy estimate: no counter or power readings cover the window");
  if (tl.has_counter() && b - a < tl.counter_update_ns())
    d.add_issue(IssueCode::shorter_than_update, fmt::format(
        "window of {:.1f} ms is shorter than the {:.0f} ms counter update: its energy comes from the power shape "
        "between updates (see the uncertainty)",
        dur_s * 1e3, static_cast<double>(tl.counter_update_ns()) * 1e-6));
  for (const ReadingKind k : {ReadingKind::energy_counter_j, ReadingKind::power_sample_w, ReadingKind::power_instant_w,
                              average_only ? ReadingKind::power_average_w : ReadingKind::kCount})
    if (const std::size_t n = tl.failures(k, a, b))
      d.add_issue(IssueCode::reading_failed, fmt::format("{} read(s) of {} failed during the window", n, to_string(k)));
  for (const CounterBridge& r : tl.resets(a, b))
    d.add_issue(IssueCode::counter_reset,
                fmt::format("energy counter {} {:.3f} s into the window; that step was bridged with "
                            "integrated power",
                            r.jump        ? "jumped implausibly"
                            : r.caught_up ? "caught up after a stale value"
                            : r.stale     ? "held a stale value (stuck)"
                                          : "reset",
                            static_cast<double>(r.t_ns - a) * 1e-9));
  d.systematic_j = domain.model.gain_tolerance * std::abs(d.energy_j) + domain.model.unseen_power_w * dur_s;
  d.mean_power_w = dur_s > 0 ? d.energy_j / dur_s : 0;
  d.peak_power_w = tl.peak_power_w(a, b).value_or(d.mean_power_w);
  if (auto note = summarize_telemetry(domain.model, tl, a, b, d.telemetry))
    d.add_issue(IssueCode::capped_share_from_reasons, std::move(*note));
  return d;
}

WindowResult build_window_result(const DomainTimelines& tl, WindowId id, const std::string& name, int64_t a_ns,
                                 int64_t b_ns, const std::vector<std::optional<EdgeEstimate>>& begin, bool final) {
  WindowResult r;
  r.id = id;
  r.name = name;
  r.t_begin_ns = a_ns;
  r.t_end_ns = b_ns;
  r.final = final;
  for (std::size_t d = 0; d < tl.size(); ++d) {
    r.domains.push_back(estimate_window(tl.domains[d], tl.timelines[d], tl.states[d], a_ns, b_ns,
                                        begin.empty() ? std::nullopt : begin[d]));
    if (!final) r.domains.back().add_issue(IssueCode::provisional, "provisional");  // also beside other notes
  }
  return r;
}

}  // namespace wattlab
