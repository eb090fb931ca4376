// Turns a domain's timeline into the energy of one window: estimator, uncertainty, issues and
// telemetry summary (DESIGN.md rules 2-4).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "timeline.h"
#include "wattlab/meter/window.h"

namespace wattlab {

struct DomainState {
  bool lost = false;
  int64_t lost_at_ns = 0;
};

// Every domain's timeline and state, in the order of Meter::domains(): what estimates read.
struct DomainTimelines {
  std::vector<Domain> domains;
  std::vector<Timeline> timelines;
  std::vector<DomainState> states;
  bool any_counter = false;  // some domain has an energy counter
  std::size_t size() const { return domains.size(); }
};

// `begin` is the anchored estimate at the window's start, when one was taken while the timeline
// still held it (windows longer than the timeline keep working this way).
DomainEnergy estimate_window(const Domain& domain, const Timeline& tl, const DomainState& state, int64_t a_ns,
                             int64_t b_ns, const std::optional<EdgeEstimate>& begin);

// A window's result over every domain. `begin`: the anchored begin edge per domain, or empty.
// A result that is not final carries the issue "provisional" in every domain.
WindowResult build_window_result(const DomainTimelines& tl, WindowId id, const std::string& name, int64_t a_ns,
                                 int64_t b_ns, const std::vector<std::optional<EdgeEstimate>>& begin, bool final);

// Whether the timeline has what it needs to make the window's end final.
bool end_is_covered(const Timeline& tl, int64_t b_ns);

}  // namespace wattlab
