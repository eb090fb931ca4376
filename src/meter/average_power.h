// Energy from a trailing-average power reading alone (NVML's gpu:N/memory domain: field 185 at
// memory scope, a ~1 s running average refreshed every 100 ms, with no counter and no instant
// power beside it). The averaged power integrated over the window shifted by the average's mean
// lag; the uncertainty bounds what the average cannot see (docs/estimators.md, "integrated(average)").
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/ring_buffer.h"
#include "wattlab/meter/issue_code.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

// The averaging window's relative uncertainty: the window is taken as the sensor model's
// averaging_window_ns (1 s) known to +-25 % (uniform).
inline constexpr double kAverageWindowTolerance = 0.25;

struct AverageEstimate {
  bool ok = false;       // an estimate exists (it may still be too uncertain to be available)
  bool covered = false;  // the readings reach far enough past the window's end: the value is final
  double energy_j = 0;
  double u_j = 0;        // 1 sigma: shape near the edges, timing, averaging window, noise
  std::size_t points = 0;  // distinct averaged values used
  std::optional<IssueCode> issue;  // why there is no estimate, or why it is not available
  std::string why;
};

// `readings`: the domain's power_average_w readings in time order; `model`: that reading's model
// (update_period_ns, averaging_window_ns).
AverageEstimate integrate_average(const RingBuffer<Reading>& readings, const ReadingModel& model, int64_t a_ns,
                                  int64_t b_ns);
// Whether the readings reach past what integrate_average needs after `b_ns`.
bool average_covers_end(const RingBuffer<Reading>& readings, const ReadingModel& model, int64_t b_ns);

}  // namespace wattlab
