// Plots of one stored run's timeline: power per domain with the run's windows shaded, and its
// telemetry (clocks, temperatures, utilization and activity). Plain functions from data to Plots;
// the HTML report loads the readings (Store::load_readings) and renders them.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "report/plot.h"
#include "wattlab/sensors/reading.h"
#include "wattlab/store/run_record.h"

namespace wattlab::report {

using ReadingsByKind = std::map<ReadingKind, std::vector<Reading>>;

// The run's windows as spans in seconds since the run's start. The whole-command window "run" is
// left out (it covers everything); labels only while there are at most `max_labels` windows.
std::vector<Span> window_spans(const RunRecord& run, std::size_t max_labels);

// Power of domain `domain_index`: the driver's samples or the instant power, the 1 s average where
// stored, and power derived from the energy counter where no power reading exists (RAPL). Series
// longer than `max_points` are averaged in equal time buckets. nullopt: no power or energy readings.
std::optional<Plot> power_timeline_plot(const RunRecord& run, std::size_t domain_index, const ReadingsByKind& readings,
                                        const std::vector<Span>& spans, std::size_t max_points);

// Telemetry groups of one domain, each one plot where the domain has such readings:
// clocks (MHz), temperatures (degC), utilization and activity (%).
std::vector<Plot> telemetry_plots(const RunRecord& run, std::size_t domain_index, const ReadingsByKind& readings,
                                  const std::vector<Span>& spans, std::size_t max_points);

// `points` reduced to at most `max_points` by averaging equal time buckets (kept as is when short).
std::vector<Point> bucket_means(const std::vector<Point>& points, std::size_t max_points);

}  // namespace wattlab::report
