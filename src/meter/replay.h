// Re-estimating windows from recorded readings: the meter's timelines rebuilt from the readings a
// store keeps (TimedReading: what Meter::drain_readings hands out), without sensors or a sampler
// thread, and windows estimated from them with the current estimators (docs/holdout.md).
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "wattlab/meter/meter.h"
#include "wattlab/meter/window.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

// A value of an energy counter placed in time the way the meter places it: the recorded counter
// reads of a domain, in time order, through the meter's own counter tracker (the update grid
// found from reads that bracket an update).
struct PlacedCounterPoint {
  uint32_t domain_index = 0;
  int64_t t_read_ns = 0;  // the read that gave the value (its midpoint)
  int64_t t_ns = 0;       // the instant the value belongs to
  int64_t sigma_ns = 0;   // how far t_ns may be off
  double raw_j = 0;       // the counter's value as read
};

// Every counter domain's points, each domain's in time order, domains in index order.
std::vector<PlacedCounterPoint> place_counter_points(const std::vector<Domain>& domains,
                                                     std::span<const TimedReading> readings);

// A window to estimate: its edges (on the readings' clock) and what to call it.
struct WindowSpan {
  WindowId id = 0;
  std::string name;
  int64_t t_begin_ns = 0;
  int64_t t_end_ns = 0;
};

struct ReplayOptions {
  // Counter points left out of the timelines (a hold-out check hides the updates at a window's
  // edges); the others keep the placement they got with every read present.
  std::function<bool(const PlacedCounterPoint&)> hide_counter_point;
  // The counter points, when the caller placed them already (place_counter_points over the whole
  // run: a subset of the readings would lose the update grid the full run found); empty: placed
  // here from `readings`.
  std::span<const PlacedCounterPoint> points;
  std::size_t timeline_capacity = 1u << 20;
};

// The windows' results from the readings alone; `final` says whether the readings cover each
// window's end as the meter needs it. Readings of domains not in `domains` are an error
// (std::invalid_argument); readings may come in any order.
std::vector<WindowResult> reestimate_windows(const std::vector<Domain>& domains, std::span<const TimedReading> readings,
                                             std::span<const WindowSpan> windows, const ReplayOptions& options = {});

}  // namespace wattlab
