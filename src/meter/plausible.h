// Whether a reading can be real: finite, and inside what the quantity can be. A driver that
// answers with nonsense (NaN, an all-ones register, a negative or zero energy) must not reach a
// timeline.
#pragma once
#include <cmath>

#include "wattlab/sensors/reading.h"

namespace wattlab {

// The most power one domain can draw (a whole board or package); above it a power reading, or a
// counter's rise, is garbage. Ten times today's largest boards, so that no real reading nears it.
inline constexpr double kMaxPlausiblePowerW = 10'000.0;

inline bool plausible(const Reading& r) {
  if (!std::isfinite(r.value)) return false;
  switch (r.kind) {
    case ReadingKind::power_instant_w:
    case ReadingKind::power_average_w:
    case ReadingKind::power_sample_w: return r.value >= 0 && r.value <= kMaxPlausiblePowerW;
    // Exactly 0: a register read as zero. A counter that really restarted holds the energy since
    // the restart by the time it is read (1 mJ resolution: microseconds at any load).
    case ReadingKind::energy_counter_j: return r.value > 0;
    default: return true;
  }
}

}  // namespace wattlab
