// Turns a domain's timeline into the energy of one window: estimator, uncertainty, issues and
// telemetry summary (DESIGN.md rules 2-4).
#pragma once
#include <optional>

#include "timeline.h"
#include "wattlab/meter/window.h"

namespace wattlab {

struct DomainState {
  bool lost = false;
  int64_t lost_at_ns = 0;
};

// `begin` is the anchored estimate at the window's start, when one was taken while the timeline
// still held it (windows longer than the timeline keep working this way).
DomainEnergy estimate_window(const Domain& domain, const Timeline& tl, const DomainState& state, int64_t a_ns,
                             int64_t b_ns, const std::optional<EdgeEstimate>& begin);

// Whether the timeline has what it needs to make the window's end final.
bool end_is_covered(const Timeline& tl, int64_t b_ns);

}  // namespace wattlab
