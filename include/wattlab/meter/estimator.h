// Which estimator produced an energy number (docs/estimators.md). The code decides by the enum;
// its one spelling (to_string) is what the store's estimator column, JSON and text outputs carry.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace wattlab {

enum class Estimator : uint8_t {
  none,                        // "": no estimate
  counter,                     // "counter": linear between counter points (no power shape)
  counter_samples,             // "counter+samples": counter points shaped by the sample buffer
  counter_instant,             // "counter+instant": counter points shaped by the instant power
  counter_integrated_samples,  // "counter+integrated(samples)": a counter point extended by integrated samples
  counter_integrated_instant,  // "counter+integrated(instant)": a counter point extended by integrated instant power
  samples_counter,             // "samples*counter": the samples scaled by the counter over ~20 s
  integrated_samples,          // "integrated(samples)": the sample buffer integrated
  integrated_instant,          // "integrated(instant)": the instant power integrated
  integrated_power_instant_w,  // "integrated(power_instant_w)": wattlab sensors --characterize's cross-check
  integrated_average,          // "integrated(average)": a trailing-average power integrated, shifted by its lag
};

std::string_view to_string(Estimator e);
// Power integrated without a counter: it carries the board's gain error.
bool integrates_power_only(Estimator e);
// A counter point extended by the given integration (integrated_samples or integrated_instant).
Estimator counter_plus(Estimator integrated);

// The estimator behind one number. A counter estimate whose two edges came from different
// estimators names both, the begin edge's first ("counter+integrated(instant)|counter+samples").
struct EstimatorUsed {
  Estimator kind = Estimator::none;      // the estimator; the begin edge's when the edges differ
  Estimator end_kind = Estimator::none;  // the end edge's, only when it differs from the begin edge's

  EstimatorUsed() = default;
  EstimatorUsed(Estimator k) : kind(k) {}  // NOLINT(google-explicit-constructor): one estimator
  static EstimatorUsed edges(Estimator begin, Estimator end) {
    EstimatorUsed e(begin);
    if (end != begin) e.end_kind = end;
    return e;
  }
  bool operator==(const EstimatorUsed&) const = default;
};

std::string to_string(const EstimatorUsed& e);
// The one way back from a stored or printed spelling; nullopt for a spelling wattlab never wrote.
std::optional<EstimatorUsed> parse_estimator(std::string_view text);
std::ostream& operator<<(std::ostream& os, Estimator e);
std::ostream& operator<<(std::ostream& os, const EstimatorUsed& e);

}  // namespace wattlab
