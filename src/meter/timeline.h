// One domain's timeline: what the sampler has read, kept in bounded rings, and the estimate of the
// cumulative energy at any instant the timeline covers (DESIGN.md, rule 2).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plausible.h"
#include "power_shape.h"
#include "core/energy_math.h"
#include "core/ring_buffer.h"
#include "wattlab/meter/estimator.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

// A point of the cumulative energy curve, from the counter: value at an instant known to ±sigma.
struct CounterPoint {
  int64_t t_ns = 0;
  double energy_j = 0;     // cumulative since the meter started, resets and wraps removed
  int64_t sigma_t_ns = 0;  // how far t_ns may be off (grid tracking, or the update period)
  bool bridged = false;    // the step into this point crossed a reset or a jump and was bridged by power
};

// A counter step the timeline does not take at face value: the counter went back (a reset, or a
// garbage value) or rose faster than any board can draw (a garbage value, or the step back up
// from one). Either way its energy comes from integrated power instead.
struct CounterBridge {
  int64_t t_ns = 0;       // the bridged point
  bool jump = false;      // rose implausibly fast (false: went back)
  int64_t from_ns = 0;    // where the bridged step starts (the previous point)
  double u_j = 0;         // 1 sigma of the bridge's energy
  // A step far below the power (a hidden reset, or a stuck counter's stale value): the energy the
  // bridge added. When the next step holds that much more than the power, the value was stale and
  // the counter itself caught up: the bridge is taken back there (Timeline::settle_stale).
  double deficit_j = 0;
  bool stale = false;      // the bridged point held a stale value (the counter caught up after it)
  bool caught_up = false;  // the step out of a stale value: the counter's own values from here on
};

// The cumulative energy at one instant, with its standard uncertainties (1 sigma, in J).
struct EdgeEstimate {
  bool ok = false;          // the timeline holds data around t
  bool covered = false;     // a counter point exists after t: the value is final
  double energy_j = 0;
  double u_shape_j = 0;     // where inside the counter step the energy fell
  double u_timing_j = 0;    // when the counter points really were
  double u_noise_j = 0;     // noise of the power readings used to shape
  Estimator estimator = Estimator::none;  // counter_samples, counter_instant, counter, counter_integrated_*
};

class Timeline {
 public:
  Timeline(const Domain& domain, std::size_t capacity);

  // Sampler side ---------------------------------------------------------------------------
  // A counter value read at `t_read_ns`, which belongs to instant `t_value_ns` (± sigma).
  // Returns an event text when the counter went backwards ("" otherwise).
  std::string add_counter(double raw_value, int64_t t_value_ns, int64_t sigma_ns);
  void add_sample(const Reading& r);   // power_sample_w: a piece ending at r.t_ns
  void add_instant(const Reading& r);  // power_instant_w
  void add_other(const Reading& r);    // average power and telemetry
  void add_failure(int64_t t_ns, ReadingKind kind);

  // Estimation side ------------------------------------------------------------------------
  EdgeEstimate energy_at(int64_t t_ns) const;
  // Energy over [a, b] integrated from power readings only (the cross-check, or the primary
  // estimate where no counter exists).
  struct Integrated {
    bool ok = false;
    double energy_j = 0;
    double u_j = 0;  // 1 sigma
    Estimator estimator = Estimator::none;
  };
  Integrated integrate_power(int64_t a_ns, int64_t b_ns) const;
  // Samples integrated over [a, b], scaled by the counter: k = counter energy / sample energy over a
  // span of at least `span_ns` around the window. The counter sets the level, the samples the shape;
  // the counter's timing error is divided by the span's energy instead of landing on the edges.
  Integrated calibrated_samples(int64_t a_ns, int64_t b_ns, int64_t span_ns, bool* covered) const;
  std::optional<double> peak_power_w(int64_t a_ns, int64_t b_ns) const;
  // Mean of a telemetry reading over [a, b]; first and last values inside.
  struct Series {
    std::size_t n = 0;
    double mean = 0, first = 0, last = 0;
    int64_t t_first_ns = 0, t_last_ns = 0;
    uint64_t bit_or = 0;
    std::size_t n_masked = 0;  // readings with any bit of the mask set (bitmask readings)
  };
  Series series(ReadingKind kind, int64_t a_ns, int64_t b_ns, uint64_t mask = 0) const;
  // Readings of `kind` that failed in [a, b], and counter steps bridged in [a, b].
  std::size_t failures(ReadingKind kind, int64_t a_ns, int64_t b_ns) const;
  std::vector<CounterBridge> resets(int64_t a_ns, int64_t b_ns) const;
  // Sum of the variances (J^2) of the bridged steps that overlap (a, b): the energy of those
  // steps comes from power, not from the counter, and carries the power's uncertainty.
  double bridged_u2(int64_t a_ns, int64_t b_ns) const;
  int64_t newest_counter_ns() const;
  std::optional<CounterPoint> newest_counter() const;
  // End of the newest power reading (sample or instant); INT64_MIN when there is none.
  int64_t newest_power_ns() const;
  // End of the newest sample (power_sample_w); INT64_MIN when there is none.
  int64_t newest_sample_ns() const;
  // For domains without a counter: add the energy of the power readings that end after `to_ns`
  // (held values, the best source the domain has) and move `to_ns` to the newest one's end; time
  // between readings that none covers goes to `unmeasured_ns`. INT64_MIN starts at the first reading.
  void accumulate_power(int64_t& to_ns, double& energy_j, int64_t& unmeasured_ns) const;
  bool has_counter() const { return has_counter_; }
  bool has_samples() const { return has_samples_; }
  // A reading integrate_power() can use (sample buffer or instant power).
  bool has_power_shape() const { return has_samples_ || has_instant_; }
  // The trailing-average power reading (power_average_w), where the domain has one.
  const ReadingModel* average_model() const { return average_model_ ? &*average_model_ : nullptr; }
  const RingBuffer<Reading>& average_readings() const {
    return other_[static_cast<std::size_t>(ReadingKind::power_average_w)];
  }
  int64_t counter_update_ns() const { return counter_update_ns_; }
  double counter_resolution_j() const { return counter_res_j_; }

 private:
  const PieceSource* shape_source(int64_t a_ns, int64_t b_ns) const;
  double noise_sigma_w(const PieceSource& src, int64_t a_ns, int64_t b_ns) const;
  struct PendingBridge {
    int64_t t0_ns, t1_ns;
    double provisional_j;  // the energy the step holds for now
    bool check_only;       // an ordinary step: bridged only if the power shows a hidden reset
    double timing_s;       // both points' timing sigmas, s
  };
  // Bridges (and steps to check for a hidden reset) waiting for the sample buffer to cover their
  // step, oldest first.
  std::vector<PendingBridge> pending_bridges_;
  void resolve_pending_bridges();
  // A step out of a point bridged for holding too little: when it holds the missing energy more
  // than the power, the point's value was stale, and the points from t1 on take the counter's own
  // values again. Returns the energy taken back from them (0: not stale).
  double settle_stale(int64_t t0_ns, int64_t t1_ns, double delta_j, const Integrated& power);
  // 1 sigma (J) that the sample buffer's fills inside [a, b] put on an estimate: a fill's error
  // counts w_before times when the fill ends by t, w_after times when it starts at t or later, and
  // whole when it holds t. The energy before t between two counter points moves by (1 - f) of an
  // error before t and f of one after; an integral over [a, b] by each error whole.
  double fill_u_j(int64_t a_ns, int64_t b_ns, int64_t t_ns, double w_before, double w_after) const;
  // The power a counter point's timing error moves: the highest sample within two spacings of
  // it, not the one sample at it (under a load that switches within a sample, that one may hold
  // the low level). 0 without samples there.
  double near_peak_w(int64_t t_ns) const;
  // The sample after the repeat checks: the gap fill, the piece, the noise and grid estimates.
  void push_sample(const Reading& r);
  // How many equal samples in a row make a stuck buffer, from how often samples agree by chance.
  int stuck_run_samples() const;
  double samples_noise_w_ = 0, instant_noise_w_ = 0;
  double last_sample_w_ = -1;  // the newest sample taken (a long run of it is a stuck buffer)
  std::vector<Reading> held_repeats_;  // repeats of it not yet judged
  bool stuck_run_ = false;             // the current run of repeats was judged stuck
  // The chance that two samples agree to the last bit, over the newest ones (stuck_run_samples).
  double sample_repeat_chance_ = 0;
  int samples_since_noise_ = 0, instant_since_noise_ = 0, samples_since_repeat_chance_ = 0;

  bool has_counter_ = false, has_samples_ = false, has_instant_ = false;
  int64_t counter_update_ns_ = 0;
  double counter_res_j_ = 0;
  double wrap_range_j_ = 0;
  int64_t sample_window_ns_ = 0;
  RingBuffer<CounterPoint> counter_;
  std::optional<double> last_raw_;
  PieceSource samples_;
  // The sample buffer's short gaps, each filled in samples_ by one piece at the middle of the
  // samples either side: its span, and power_w the range (W) between those samples.
  RingBuffer<PowerPiece> sample_fills_;
  PieceSource instant_;
  std::optional<Reading> last_instant_;
  int64_t instant_lag_ns_ = 0;
  std::optional<ReadingModel> average_model_;  // mean age of an instant power value when read (add_instant)
  std::vector<RingBuffer<Reading>> other_;  // indexed by ReadingKind
  RingBuffer<std::pair<int64_t, ReadingKind>> failures_;
  RingBuffer<CounterBridge> resets_;
};

}  // namespace wattlab
