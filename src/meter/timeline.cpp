#include "timeline.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace wattlab {
namespace {

constexpr double kNs = 1e-9;
const double kSqrt3 = std::sqrt(3.0);
constexpr int64_t kMaxSampleFill = 2;  // spacings of a sample-buffer gap filled (add_sample)
constexpr int64_t kMaxInstantHold = 2;  // updates an instant power value is held back over (add_instant)
// A counter step below this share of the integrated power's energy (less 4 sigma) is a reset the
// reads did not see go back: the 4 sigma margin holds the power's own shape and noise error.
constexpr double kHiddenResetShare = 0.85;
constexpr int64_t kHiddenResetMinUpdates = 4;  // shortest step checked, in counter updates
// Below this reading noise (W, 1 sigma) equal successive samples can be real (a noiseless source).
constexpr double kMinNoiseForFrozenW = 0.05;
// A run of equal samples more unlikely than this by chance is a stuck buffer (stuck_run_samples).
constexpr double kStuckRunChance = 1e-6;
// The repeat chance is taken over the newest pieces, again every few samples: it follows the load
// from busy (every sample new) to idle (a few values) within a second.
constexpr std::size_t kRepeatChanceSamples = 64;
constexpr int kRepeatChanceEvery = 16;

// Whether a counter step of `delta_j` over `dt_ns` is far below what the samples say was drawn,
// beyond their uncertainty and the energy that the points' timing (timing_s, both sigmas) may move.
// 1 sigma of a bridge's energy: the power's own, and what the end points' timing may move.
double bridge_u_j(const Timeline::Integrated& power, double timing_s, int64_t dt_ns) {
  const double mean_w = power.energy_j / (static_cast<double>(dt_ns) * kNs);
  return std::hypot(power.u_j, mean_w * timing_s);
}

bool hides_reset(double delta_j, const Timeline::Integrated& power, double timing_s, int64_t dt_ns) {
  const double mean_w = power.energy_j / (static_cast<double>(dt_ns) * kNs);
  return delta_j < kHiddenResetShare * power.energy_j - 4 * power.u_j - 4 * mean_w * timing_s;
}

// Whether a counter step holds far more than the samples say was drawn: the step out of a stale
// value (a stuck counter catching up), by the same margins as hides_reset the other way.
bool catches_up(double delta_j, const Timeline::Integrated& power, double timing_s, int64_t dt_ns) {
  const double mean_w = power.energy_j / (static_cast<double>(dt_ns) * kNs);
  return kHiddenResetShare * delta_j > power.energy_j + 4 * power.u_j + 4 * mean_w * timing_s;
}

// A reading's value as a bit mask (the clock event reasons): a value that no mask can be (negative,
// not finite, 2^64 or more: garbage from a faulty read) contributes no bits.
uint64_t mask_bits(double value) {
  return value >= 0 && value < 18446744073709551616.0 ? static_cast<uint64_t>(value) : 0;
}

}  // namespace

Timeline::Timeline(const Domain& domain, std::size_t capacity)
    : counter_(std::max<std::size_t>(capacity / 16, 64)),
      samples_(capacity),
      sample_fills_(std::max<std::size_t>(capacity / 4, 64)),
      instant_(capacity),
      failures_(4096),
      resets_(256) {
  for (std::size_t k = 0; k < kReadingKindCount; ++k) other_.emplace_back(std::max<std::size_t>(capacity / 8, 64));
  if (const auto* m = domain.model.find(ReadingKind::energy_counter_j)) {
    has_counter_ = true;
    counter_update_ns_ = m->update_period_ns;
    counter_res_j_ = m->resolution;
    wrap_range_j_ = m->wrap_range;  // RAPL's 32-bit MSR wraps; NVML's 64-bit counter does not (0)
  }
  if (const auto* m = domain.model.find(ReadingKind::power_sample_w)) {
    has_samples_ = true;
    samples_.spacing_ns = m->update_period_ns;
    sample_window_ns_ = m->averaging_window_ns > 0 ? m->averaging_window_ns : m->update_period_ns;
  }
  if (const auto* m = domain.model.find(ReadingKind::power_instant_w)) {
    has_instant_ = true;
    instant_.spacing_ns = m->update_period_ns;
    instant_lag_ns_ = m->update_period_ns / 2 + m->averaging_window_ns / 2;
  }
  if (const auto* m = domain.model.find(ReadingKind::power_average_w)) average_model_ = *m;
}

std::string Timeline::add_counter(double raw, int64_t t_value_ns, int64_t sigma_ns) {
  if (!last_raw_) {
    last_raw_ = raw;
    counter_.push({t_value_ns, 0.0, sigma_ns, false});
    return "";
  }
  const CounterPoint prev = counter_.back();
  if (t_value_ns <= prev.t_ns) {
    // The same update read again (or a stale grid estimate): keep the first.
    if (raw == *last_raw_) return "";
  }
  const double prev_raw = *last_raw_;
  const CounterStep step = counter_step(prev_raw, raw, wrap_range_j_);
  last_raw_ = raw;
  const int64_t t = std::max(t_value_ns, prev.t_ns + 1);
  // A rise no board can draw: the step is garbage (or the step back up from a garbage value).
  const double dt_s = static_cast<double>(std::max(t - prev.t_ns, counter_update_ns_)) * kNs;
  const bool jump = !step.reset && step.delta > kMaxPlausiblePowerW * dt_s + counter_res_j_;
  // A reset between two reads that the counter climbed back over since (reads a second apart, resets
  // closer) shows as a step far smaller than the power drawn: a hidden reset.
  // Judged on the sample buffer only (the instant power is too coarse to tell), on steps of several
  // updates (a probe's short step can hold no update at all), allowing for where the two points
  // really are.
  const Integrated bridge = integrate_power(prev.t_ns, t);
  const bool by_samples = bridge.ok && bridge.estimator == Estimator::integrated_samples;
  const bool checkable = t - prev.t_ns >= kHiddenResetMinUpdates * counter_update_ns_;
  const double timing_s = static_cast<double>(prev.sigma_t_ns + sigma_ns) * kNs;
  // The same value again while the power says energy flowed: a stuck counter's stale value, which
  // belongs to some earlier instant. Not placed; the step to its next new value holds the energy.
  if (raw == prev_raw && bridge.ok) {
    const double mean_w = bridge.energy_j / (static_cast<double>(t - prev.t_ns) * kNs);
    if (bridge.energy_j - 4 * bridge.u_j - 4 * mean_w * timing_s > counter_res_j_) return "";
  }
  const bool hidden_reset = !step.reset && !jump && by_samples && checkable &&
                            hides_reset(step.delta, bridge, timing_s, t - prev.t_ns);
  const double taken_back_j =
      !step.reset && !jump && !hidden_reset && by_samples ? settle_stale(prev.t_ns, t, step.delta, bridge) : 0.0;
  const bool caught_up = taken_back_j > 0;
  const bool catch_up = !step.reset && !jump && !hidden_reset && !caught_up && by_samples && checkable &&
                        catches_up(step.delta, bridge, timing_s, t - prev.t_ns);
  if (!step.reset && !jump && !hidden_reset && !catch_up) {
    counter_.push({t, prev.energy_j + step.delta - taken_back_j, sigma_ns, false});
    // Without samples over the step yet, check it for a hidden reset once they cover it.
    if (!by_samples && checkable && has_samples_)
      pending_bridges_.push_back(PendingBridge{prev.t_ns, t, step.delta, true, timing_s});
    return "";
  }
  // Bridge the step with integrated power where the timeline has it. Else count the post-reset
  // value alone (nothing, for a jump) for now, with an uncertainty as wide as the step could hold,
  // and bridge again once the sample buffer has caught up.
  const double provisional_j = jump ? 0.0 : step.delta;
  const double delta = bridge.ok ? bridge.energy_j : provisional_j;
  const double u_j = bridge.ok ? bridge_u_j(bridge, timing_s, t - prev.t_ns) : kMaxPlausiblePowerW * dt_s / 2.0;
  counter_.push({t, prev.energy_j + delta, sigma_ns, true});
  resets_.push({t, jump, prev.t_ns, u_j, hidden_reset && bridge.ok ? bridge.energy_j - step.delta : 0.0, false, false});
  if (!bridge.ok) pending_bridges_.push_back(PendingBridge{prev.t_ns, t, delta, false, timing_s});
  const std::string what = jump ? "energy counter jumped from " + std::to_string(prev_raw) + " J to " +
                                      std::to_string(raw) + " J, faster than any board draws"
                           : hidden_reset ? "energy counter rose " + std::to_string(step.delta) + " J while power drew " +
                                                std::to_string(bridge.energy_j) + " J: reset between reads"
                           : catch_up ? "energy counter rose " + std::to_string(step.delta) + " J while power drew " +
                                            std::to_string(bridge.energy_j) + " J: a stale value caught up"
                                          : "energy counter went back from " + std::to_string(prev_raw) + " J to " +
                                                std::to_string(raw) + " J";
  return what + "; bridged with " +
         (bridge.ok ? std::string(to_string(bridge.estimator))
                    : std::string("nothing yet (the sample buffer has not caught up; the uncertainty covers it)"));
}

void Timeline::resolve_pending_bridges() {
  const int64_t newest_sample_ns = samples_.pieces.back().t1_ns;
  for (std::size_t k = 0; k < pending_bridges_.size();) {
    const PendingBridge pb = pending_bridges_[k];
    if (!samples_.covers(pb.t0_ns, pb.t1_ns)) {
      // The buffer has moved past the step with a hole in it: it never will cover it. A bridge
      // keeps its provisional energy and its wide uncertainty.
      if (newest_sample_ns >= pb.t1_ns) pending_bridges_.erase(pending_bridges_.begin() + static_cast<long>(k));
      else ++k;
      continue;
    }
    pending_bridges_.erase(pending_bridges_.begin() + static_cast<long>(k));
    const Integrated bridge = integrate_power(pb.t0_ns, pb.t1_ns);
    if (!bridge.ok) continue;
    if (pb.check_only) {
      if (settle_stale(pb.t0_ns, pb.t1_ns, pb.provisional_j, bridge) > 0) continue;
      const bool low = hides_reset(pb.provisional_j, bridge, pb.timing_s, pb.t1_ns - pb.t0_ns);
      if (!low && !catches_up(pb.provisional_j, bridge, pb.timing_s, pb.t1_ns - pb.t0_ns)) continue;
      for (std::size_t i = 0; i < counter_.size(); ++i)
        if (counter_[i].t_ns == pb.t1_ns) counter_[i].bridged = true;
      resets_.push({pb.t1_ns, false, pb.t0_ns, 0.0, low ? bridge.energy_j - pb.provisional_j : 0.0, false, false});
    }
    const double correction = bridge.energy_j - pb.provisional_j;
    for (std::size_t i = 0; i < counter_.size(); ++i)
      if (counter_[i].t_ns >= pb.t1_ns) counter_[i].energy_j += correction;
    for (std::size_t i = 0; i < resets_.size(); ++i)
      if (resets_[i].t_ns == pb.t1_ns) resets_[i].u_j = bridge_u_j(bridge, pb.timing_s, pb.t1_ns - pb.t0_ns);
  }
}

double Timeline::settle_stale(int64_t t0_ns, int64_t t1_ns, double delta_j, const Integrated& power) {
  CounterBridge* b = nullptr;
  for (std::size_t i = resets_.size(); i-- > 0;)
    if (resets_[i].t_ns == t0_ns) {
      b = &resets_[i];
      break;
    }
  if (!b || b->deficit_j <= 0 || b->stale) return 0.0;
  // Stale if the step's excess over the power is nearer the deficit than nothing (a reset's next
  // step holds what the power drew).
  const double excess_j = delta_j - power.energy_j;
  if (std::abs(excess_j - b->deficit_j) >= std::abs(excess_j)) return 0.0;
  b->stale = true;
  for (std::size_t i = 0; i < counter_.size(); ++i)
    if (counter_[i].t_ns >= t1_ns) counter_[i].energy_j -= b->deficit_j;
  // The point t1 (when already in the timeline) is the counter's own again; before it, the stale
  // point keeps the power's energy, and the step into t1 carries that bridge's uncertainty.
  const double deficit_j = b->deficit_j;
  resets_.push({t1_ns, false, t0_ns, b->u_j, 0.0, false, true});
  return deficit_j;
}

int Timeline::stuck_run_samples() const {
  // A run of k equal samples is a stuck buffer once chance explains it less than once in a
  // million: p^(k-1) < 1e-6, p the chance that two samples agree to the last bit. Readings with
  // continuous noise (the simulator's) never agree, p = 0 and k = 2; an H100's idle samples sit
  // on a few values 0.08-0.32 W apart and agree a third of the time (k = 12 at p = 0.27).
  if (!(sample_repeat_chance_ > 0)) return 2;
  const double p = std::min(0.5, sample_repeat_chance_);
  return 1 + std::max(1, static_cast<int>(std::ceil(std::log(kStuckRunChance) / std::log(p))));
}

void Timeline::add_sample(const Reading& r) {
  if (!samples_.pieces.empty() && r.t_ns <= samples_.pieces.back().t1_ns) return;  // seen already
  if (!held_repeats_.empty() && r.t_ns <= held_repeats_.back().t_ns) return;
  // The very value of the previous sample, from a buffer whose readings carry noise: a repeat that
  // chance explains is a measurement, a longer run (stuck_run_samples) a stuck buffer repeating
  // itself. Repeats wait until the run ends or grows too long; a stuck run is left out: a hole
  // that the instant power shapes instead.
  if (r.value == last_sample_w_ && samples_noise_w_ > kMinNoiseForFrozenW) {
    if (stuck_run_) return;
    held_repeats_.push_back(r);
    if (static_cast<int>(held_repeats_.size()) + 1 >= stuck_run_samples()) {
      held_repeats_.clear();
      stuck_run_ = true;
    }
    return;
  }
  stuck_run_ = false;
  for (const Reading& h : held_repeats_) push_sample(h);
  held_repeats_.clear();
  push_sample(r);
}

void Timeline::push_sample(const Reading& r) {
  PowerPiece p{r.t_ns - sample_window_ns_, r.t_ns, r.value};
  if (!samples_.pieces.empty()) {
    const PowerPiece& last = samples_.pieces.back();
    // The H200's buffer is not evenly spaced: 17.5% of 22,249 gaps were 22-45 ms at a nominal
    // 20 ms (docs/results/gemm-h200.md). A gap up to kMaxSampleFill spacings is filled; without
    // that, a hole broke coverage in nearly every window and the coarse instant power became the
    // shape. Longer gaps stay holes (a missed stretch). The power in the gap is unknown between
    // the samples either side (where the load stepped inside it, anywhere from one to the other):
    // the fill takes their middle, and its half range is an error of up to uniform spread that
    // the estimates carry (fill_u_j). Holding the next sample back over the gap instead would put
    // a step at the gap's start wherever in the gap it was.
    const int64_t gap_ns = p.t0_ns - last.t1_ns;
    if (gap_ns > 0 && gap_ns <= kMaxSampleFill * samples_.spacing_ns) {
      samples_.pieces.push({last.t1_ns, p.t0_ns, 0.5 * (last.power_w + r.value)});
      sample_fills_.push({last.t1_ns, p.t0_ns, std::abs(r.value - last.power_w)});
    }
    p.t0_ns = std::max(p.t0_ns, samples_.pieces.back().t1_ns);
  }
  samples_.pieces.push(p);
  last_sample_w_ = r.value;
  if (!pending_bridges_.empty()) resolve_pending_bridges();
  if (++samples_since_noise_ >= 256 || samples_noise_w_ == 0) {
    estimate_noise(samples_, samples_noise_w_);
    samples_since_noise_ = 0;
  }
  if (++samples_since_repeat_chance_ >= kRepeatChanceEvery) {
    samples_since_repeat_chance_ = 0;
    // The chance that two samples agree to the last bit: the collision probability of the last
    // values taken, sum c(c - 1) / (n(n - 1)) over the counts c of each value.
    std::array<double, kRepeatChanceSamples> v{};
    std::size_t m = 0;
    for (std::size_t i = samples_.pieces.size(); i > 0 && m < v.size(); --i) v[m++] = samples_.pieces[i - 1].power_w;
    std::sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m));
    double pairs = 0;
    for (std::size_t i = 0, j = 0; i < m; i = j) {
      while (j < m && v[j] == v[i]) ++j;
      pairs += static_cast<double>(j - i) * static_cast<double>(j - i - 1);
    }
    const double n = static_cast<double>(m);
    sample_repeat_chance_ = n > 1 ? pairs / (n * (n - 1)) : 0;
  }
}

void Timeline::add_instant(const Reading& r) {
  // Held from the previous read to this one: a coarse shape, used where the sample buffer is
  // missing or has a hole.
  // Shifted back by the value's mean age: it averages the last `window` before a refresh every
  // `period`, so at a read it is period/2 + window/2 old on average (62.5 ms on NVML; the H200's
  // stored readings matched the sample buffer best at 60 ms). Unshifted, the shape lagged the load
  // and windows ending at a drop to idle read 4-8% low.
  // A read that took longer than a quarter period (a latency spike) may hold a value from
  // anywhere inside it: it shapes nothing, and the held piece spans it instead.
  if (instant_.spacing_ns > 0 && r.read_dur_ns > instant_.spacing_ns / 4) {
    other_[static_cast<std::size_t>(r.kind)].push(r);
    return;
  }
  if (last_instant_ && r.t_ns > last_instant_->t_ns)
  {
    // Held back at most kMaxInstantHold updates: over a longer gap (reads that failed, stalled or
    // were dropped as garbage) the value says nothing about the power earlier on, and the gap
    // stays a hole instead of a confident flat stretch.
    const int64_t from_ns =
        instant_.spacing_ns > 0 ? std::max(last_instant_->t_ns, r.t_ns - kMaxInstantHold * instant_.spacing_ns)
                                : last_instant_->t_ns;
    instant_.pieces.push({from_ns - instant_lag_ns_, r.t_ns - instant_lag_ns_, r.value});
    if (++instant_since_noise_ >= 256 || instant_noise_w_ == 0) {
      estimate_noise(instant_, instant_noise_w_);
      instant_since_noise_ = 0;
    }
  }
  last_instant_ = r;
  other_[static_cast<std::size_t>(r.kind)].push(r);
}

void Timeline::add_other(const Reading& r) { other_[static_cast<std::size_t>(r.kind)].push(r); }

void Timeline::add_failure(int64_t t_ns, ReadingKind kind) { failures_.push({t_ns, kind}); }

const PieceSource* Timeline::shape_source(int64_t a_ns, int64_t b_ns) const {
  if (has_samples_ && samples_.covers(a_ns, b_ns)) return &samples_;
  if (has_instant_ && instant_.covers(a_ns, b_ns)) return &instant_;
  return nullptr;
}

double Timeline::noise_sigma_w(const PieceSource& src, int64_t, int64_t) const {
  return &src == &samples_ ? samples_noise_w_ : instant_noise_w_;
}

EdgeEstimate Timeline::energy_at(int64_t t) const {
  EdgeEstimate e;
  if (counter_.empty()) return e;
  const long i = last_at_or_before(counter_, t, [](const CounterPoint& p) { return p.t_ns; });
  if (i < 0 || static_cast<std::size_t>(i) + 1 >= counter_.size()) {
    // Before the first or after the newest counter point: extend with integrated power.
    const CounterPoint& p = i < 0 ? counter_.front() : counter_.back();
    const int64_t a = std::min(p.t_ns, t), b = std::max(p.t_ns, t);
    const Integrated part = integrate_power(a, b);
    if (!part.ok) return e;
    e.ok = true;
    e.covered = i < 0;  // before the first point nothing newer is needed
    e.energy_j = i < 0 ? p.energy_j - part.energy_j : p.energy_j + part.energy_j;
    e.u_shape_j = part.u_j;
    // Where the point really is moves the split between it and the power: the power around the
    // point times its timing sigma (the same term as between two points).
    if (p.sigma_t_ns > 0) {
      const Integrated around = integrate_power(p.t_ns - p.sigma_t_ns, p.t_ns + p.sigma_t_ns);
      if (around.ok) e.u_timing_j = around.energy_j / 2.0;
    }
    e.estimator = counter_plus(part.estimator);
    return e;
  }
  const CounterPoint& p0 = counter_[static_cast<std::size_t>(i)];
  const CounterPoint& p1 = counter_[static_cast<std::size_t>(i) + 1];
  e.ok = e.covered = true;
  const double dE = p1.energy_j - p0.energy_j;
  const double L = static_cast<double>(p1.t_ns - p0.t_ns);
  const PieceSource* src = shape_source(p0.t_ns, p1.t_ns);
  // Final only once the best shape the domain has has arrived too: the sample buffer is read less
  // often than the counter publishes, so it may still be catching up with p1.
  if (has_samples_ && src != &samples_ && !samples_.pieces.empty() && samples_.pieces.back().t1_ns < p1.t_ns)
    e.covered = false;
  double f = static_cast<double>(t - p0.t_ns) / L;
  double p_at0 = dE / (L * kNs), p_at1 = p_at0;
  if (src) {
    const double sig = noise_sigma_w(*src, p0.t_ns, p1.t_ns);
    const double tol = 4 * sig + 0.5;
    const auto raw = src->slice(p0.t_ns, p1.t_ns);
    const auto sl = src == &samples_ ? resolve_steps(raw, tol) : raw;
    const double S = integrate(sl, p0.t_ns, p1.t_ns).energy_j;
    if (S > 0) {
      const double k = dE / S;
      f = integrate(sl, p0.t_ns, t).energy_j / S;
      if (src == &samples_) {
        // The split inside the samples holding t, p0 and p1 (the last two set the scale S):
        // E(t) moves by k (e_t - (1 - f) e_p0 - f e_p1) for errors e of the energy before each.
        const double u_t = edge_u_j(raw, t, tol);
        const double u_p0 = (1 - f) * edge_u_j(raw, p0.t_ns, tol), u_p1 = f * edge_u_j(raw, p1.t_ns, tol);
        e.u_shape_j = k * std::sqrt(u_t * u_t + u_p0 * u_p0 + u_p1 * u_p1 +
                                    std::pow(fill_u_j(p0.t_ns, p1.t_ns, t, 1 - f, f), 2));
      } else {
        // The instant reading lags and sees a quarter of each period: a whole update's worth.
        double lo = raw.front().power_w, hi = lo;
        for (const auto& p : raw) lo = std::min(lo, p.power_w), hi = std::max(hi, p.power_w);
        e.u_shape_j = k * (hi - lo) * static_cast<double>(counter_update_ns_) * kNs / kSqrt3;
      }
      const double sp = static_cast<double>(src->spacing_ns > 0 ? src->spacing_ns : 1);
      const double na = static_cast<double>(t - p0.t_ns) / sp, nb = static_cast<double>(p1.t_ns - t) / sp;
      e.u_noise_j = k * sig * sp * kNs * std::sqrt(na * (1 - f) * (1 - f) + nb * f * f);
      // Each point's timing error moves the power around it: with samples, the highest near it.
      p_at0 = k * std::max(sl.front().power_w, src == &samples_ ? near_peak_w(p0.t_ns) : 0.0);
      p_at1 = k * std::max(sl.back().power_w, src == &samples_ ? near_peak_w(p1.t_ns) : 0.0);
      e.estimator = src == &samples_ ? Estimator::counter_samples : Estimator::counter_instant;
    }
  }
  if (e.estimator == Estimator::none) {
    // Linear in time: the energy could have fallen anywhere in the step.
    e.u_shape_j = dE * std::min(f, 1 - f) / kSqrt3;
    e.estimator = Estimator::counter;
  }
  f = std::clamp(f, 0.0, 1.0);
  e.energy_j = p0.energy_j + dE * f;
  // The grid half-width is not a hard bound (the period drifts between brackets): take it as 1 sigma.
  const double s0 = static_cast<double>(p0.sigma_t_ns) * kNs, s1 = static_cast<double>(p1.sigma_t_ns) * kNs;
  e.u_timing_j = std::hypot(p_at0 * s0 * (1 - f), p_at1 * s1 * f);
  return e;
}

Timeline::Integrated Timeline::integrate_power(int64_t a_ns, int64_t b_ns) const {
  Integrated out;
  if (b_ns <= a_ns) {
    out.ok = true;
    out.estimator = has_samples_ ? Estimator::integrated_samples : Estimator::integrated_instant;
    return out;
  }
  const PieceSource* src = shape_source(a_ns, b_ns);
  if (!src) return out;
  const double sig = noise_sigma_w(*src, a_ns, b_ns);
  const double tol = 4 * sig + 0.5;
  const auto sl = src->slice(a_ns, b_ns);
  out.ok = true;
  const double sp = static_cast<double>(src->spacing_ns > 0 ? src->spacing_ns : 1);
  const double n = static_cast<double>(b_ns - a_ns) / sp;
  const double noise = sig * sp * kNs * std::sqrt(n);
  if (src == &samples_) {
    // Slice with a neighbour either side, so edge samples can be judged against them.
    const auto wide = src->slice(a_ns - 2 * src->spacing_ns, b_ns + 2 * src->spacing_ns);
    out.energy_j = integrate(resolve_steps(wide, tol), a_ns, b_ns).energy_j;
    out.u_j = rss({edge_u_j(wide, a_ns, tol), edge_u_j(wide, b_ns, tol), noise, fill_u_j(a_ns, b_ns, b_ns, 1, 1)});
    out.estimator = Estimator::integrated_samples;
  } else {
    // The instant reading sees a fraction of each period; what it misses is unknown within the
    // range of power it showed.
    double lo = sl.front().power_w, hi = lo;
    for (const auto& p : sl) lo = std::min(lo, p.power_w), hi = std::max(hi, p.power_w);
    out.energy_j = integrate(sl, a_ns, b_ns).energy_j;
    out.u_j = rss({(hi - lo) * 0.5 * static_cast<double>(b_ns - a_ns) * kNs / kSqrt3 / std::sqrt(std::max(1.0, n)),
                   (hi - lo) * static_cast<double>(counter_update_ns_ > 0 ? counter_update_ns_ : src->spacing_ns) * kNs / kSqrt3,
                   noise});
    out.estimator = Estimator::integrated_instant;
  }
  return out;
}

Timeline::Integrated Timeline::calibrated_samples(int64_t a_ns, int64_t b_ns, int64_t span_ns, bool* covered) const {
  Integrated out;
  *covered = false;
  if (!has_samples_ || counter_.size() < 2 || !samples_.covers(a_ns, b_ns)) return out;
  const long ia = last_at_or_before(counter_, a_ns, [](const CounterPoint& p) { return p.t_ns; });
  const long ib = last_at_or_before(counter_, b_ns, [](const CounterPoint& p) { return p.t_ns; }) + 1;
  if (ia < 0 || static_cast<std::size_t>(ib) >= counter_.size()) return out;
  // Widen the span backwards while the samples still cover it and no reset intervenes. Coverage of
  // adjacent stretches adds up, so each step checks only the stretch it adds (the whole stretch
  // back to a_ns each time made this quadratic in the span).
  long lo = ia;
  while (lo > 0 && counter_[static_cast<std::size_t>(ib)].t_ns - counter_[static_cast<std::size_t>(lo)].t_ns < span_ns &&
         !counter_[static_cast<std::size_t>(lo)].bridged &&
         samples_.covers(counter_[static_cast<std::size_t>(lo - 1)].t_ns,
                         lo == ia ? a_ns : counter_[static_cast<std::size_t>(lo)].t_ns))
    --lo;
  for (long i = lo + 1; i <= ib; ++i)
    if (counter_[static_cast<std::size_t>(i)].bridged) return out;  // a reset inside: no single level
  const CounterPoint& p0 = counter_[static_cast<std::size_t>(lo)];
  const CounterPoint& p1 = counter_[static_cast<std::size_t>(ib)];
  if (!samples_.covers(p0.t_ns, p1.t_ns)) return out;
  const auto sl = samples_.slice(p0.t_ns, p1.t_ns);
  const double S = integrate(sl, p0.t_ns, p1.t_ns).energy_j;
  const double dE = p1.energy_j - p0.energy_j;
  if (S <= 0 || dE <= 0) return out;
  const double k = dE / S;
  if (k < 0.5 || k > 2.0) return out;  // the two sources disagree too much to combine
  const Integrated raw = integrate_power(a_ns, b_ns);
  if (!raw.ok) return out;
  // Level uncertainty: when the span's end points really were, and the counter's resolution.
  // The grid half-width is not a hard bound (the period drifts between brackets): take it as 1 sigma.
  const double s0 = static_cast<double>(p0.sigma_t_ns) * kNs, s1 = static_cast<double>(p1.sigma_t_ns) * kNs;
  const double u_dE = rss({k * near_peak_w(p0.t_ns) * s0, k * near_peak_w(p1.t_ns) * s1, counter_res_j_});
  // The samples' fills inside the span move S, and with it the scale; so does the split of the
  // samples that hold the span's ends (how much of each lies inside).
  const double tol = 4 * noise_sigma_w(samples_, p0.t_ns, p1.t_ns) + 0.5;
  const double u_ends_j = std::hypot(edge_u_j(sl, p0.t_ns, tol), edge_u_j(sl, p1.t_ns, tol));
  double u_k = rss({k * u_dE / dE, k * fill_u_j(p0.t_ns, p1.t_ns, p1.t_ns, 1, 1) / S, k * u_ends_j / S});
  // The counter's edge times can be off by more than the grid claims, so also take the scale's
  // own scatter: the scales of the span's four quarters are independent estimates of k, and
  // their standard deviation over sqrt(4) is that of the whole span's.
  if (ib - lo >= 8) {
    std::vector<double> quarters;
    for (int q = 0; q < 4; ++q) {
      const CounterPoint& c0 = counter_[static_cast<std::size_t>(lo + (ib - lo) * q / 4)];
      const CounterPoint& c1 = counter_[static_cast<std::size_t>(lo + (ib - lo) * (q + 1) / 4)];
      const double s_j = integrate(samples_.slice(c0.t_ns, c1.t_ns), c0.t_ns, c1.t_ns).energy_j;
      if (s_j > 0) quarters.push_back((c1.energy_j - c0.energy_j) / s_j);
    }
    if (quarters.size() == 4) u_k = std::max(u_k, stddev(quarters) / 2.0);
  }
  out.ok = true;
  out.energy_j = k * raw.energy_j;
  out.u_j = rss({k * raw.u_j, u_k * raw.energy_j});
  out.estimator = Estimator::samples_counter;
  *covered = true;
  return out;
}

double Timeline::near_peak_w(int64_t t_ns) const {
  double w = 0;
  for (const auto& q : samples_.slice(t_ns - 2 * samples_.spacing_ns, t_ns + 2 * samples_.spacing_ns))
    w = std::max(w, q.power_w);
  return w;
}

double Timeline::fill_u_j(int64_t a_ns, int64_t b_ns, int64_t t_ns, double w_before, double w_after) const {
  // A fill's energy error is uniform within +-(range * span / 2): 1 sigma is that over sqrt 3.
  double u2 = 0;
  const long i0 = last_at_or_before(sample_fills_, a_ns, [](const PowerPiece& p) { return p.t0_ns; });
  for (std::size_t i = static_cast<std::size_t>(std::max(0L, i0)); i < sample_fills_.size(); ++i) {
    const PowerPiece& g = sample_fills_[i];
    if (g.t0_ns >= b_ns) break;
    const int64_t lo = std::max(g.t0_ns, a_ns), hi = std::min(g.t1_ns, b_ns);
    if (hi <= lo) continue;
    // The range of the power around the gap, two spacings either side: under a load that
    // changes faster than the gap is long, the samples next to it may agree while it held another level.
    double range_w = g.power_w, p_lo = INFINITY, p_hi = -INFINITY;
    for (const auto& q : samples_.slice(g.t0_ns - 2 * samples_.spacing_ns, g.t1_ns + 2 * samples_.spacing_ns))
      p_lo = std::min(p_lo, q.power_w), p_hi = std::max(p_hi, q.power_w);
    if (p_hi >= p_lo) range_w = std::max(range_w, p_hi - p_lo);
    const double weight = hi <= t_ns ? w_before : lo >= t_ns ? w_after : 1.0;
    const double u = weight * range_w * 0.5 * static_cast<double>(hi - lo) * kNs / kSqrt3;
    u2 += u * u;
  }
  return std::sqrt(u2);
}

std::optional<double> Timeline::peak_power_w(int64_t a_ns, int64_t b_ns) const {
  std::optional<double> peak;
  const PieceSource& src = has_samples_ && !samples_.pieces.empty() ? samples_ : instant_;
  for (const auto& p : src.slice(a_ns, b_ns)) peak = std::max(peak.value_or(p.power_w), p.power_w);
  return peak;
}

Timeline::Series Timeline::series(ReadingKind kind, int64_t a_ns, int64_t b_ns, uint64_t mask) const {
  Series s;
  const auto& r = other_[static_cast<std::size_t>(kind)];
  long i = last_at_or_before(r, a_ns - 1, [](const Reading& x) { return x.t_ns; }) + 1;
  double sum = 0;
  for (std::size_t j = static_cast<std::size_t>(i); j < r.size() && r[j].t_ns <= b_ns; ++j) {
    if (s.n == 0) s.first = r[j].value, s.t_first_ns = r[j].t_ns;
    s.last = r[j].value;
    s.t_last_ns = r[j].t_ns;
    sum += r[j].value;
    s.bit_or |= mask_bits(r[j].value);
    s.n_masked += (mask_bits(r[j].value) & mask) != 0;
    ++s.n;
  }
  if (s.n) s.mean = sum / static_cast<double>(s.n);
  return s;
}

std::size_t Timeline::failures(ReadingKind kind, int64_t a_ns, int64_t b_ns) const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < failures_.size(); ++i)
    if (failures_[i].second == kind && failures_[i].first >= a_ns && failures_[i].first <= b_ns) ++n;
  return n;
}

std::vector<CounterBridge> Timeline::resets(int64_t a_ns, int64_t b_ns) const {
  std::vector<CounterBridge> out;
  for (std::size_t i = 0; i < resets_.size(); ++i)
    if (resets_[i].t_ns >= a_ns && resets_[i].t_ns <= b_ns) out.push_back(resets_[i]);
  return out;
}

double Timeline::bridged_u2(int64_t a_ns, int64_t b_ns) const {
  double u2 = 0;
  for (std::size_t i = 0; i < resets_.size(); ++i)
    if (resets_[i].from_ns < b_ns && resets_[i].t_ns > a_ns) u2 += resets_[i].u_j * resets_[i].u_j;
  return u2;
}

int64_t Timeline::newest_counter_ns() const { return counter_.empty() ? INT64_MIN : counter_.back().t_ns; }

std::optional<CounterPoint> Timeline::newest_counter() const {
  if (counter_.empty()) return std::nullopt;
  return counter_.back();
}

int64_t Timeline::newest_power_ns() const {
  int64_t t = INT64_MIN;
  if (!samples_.pieces.empty()) t = samples_.pieces.back().t1_ns;
  if (!instant_.pieces.empty()) t = std::max(t, instant_.pieces.back().t1_ns);
  return t;
}

int64_t Timeline::newest_sample_ns() const { return samples_.pieces.empty() ? INT64_MIN : samples_.pieces.back().t1_ns; }

void Timeline::accumulate_power(int64_t& to_ns, double& energy_j, int64_t& unmeasured_ns) const {
  const RingBuffer<PowerPiece>& src = has_samples_ && !samples_.pieces.empty() ? samples_.pieces : instant_.pieces;
  if (src.empty() || src.back().t1_ns <= to_ns) return;
  // Walk back to the first piece that ends after to_ns: only new pieces are visited.
  std::size_t i = src.size();
  while (i > 0 && src[i - 1].t1_ns > to_ns) --i;
  if (to_ns == INT64_MIN) to_ns = src[i].t0_ns;
  for (; i < src.size(); ++i) {
    const PowerPiece& p = src[i];
    if (p.t0_ns > to_ns) unmeasured_ns += p.t0_ns - to_ns;
    const int64_t a = std::max(p.t0_ns, to_ns);
    energy_j += p.power_w * static_cast<double>(p.t1_ns - a) * kNs;
    to_ns = p.t1_ns;
  }
}

}  // namespace wattlab
