// A stored run's power and energy readings as the meter handed them out (TimedReading): what
// wattlab::reestimate_windows and the hold-out check read (docs/holdout.md).
#pragma once
#include <vector>

#include "wattlab/core/error.h"
#include "wattlab/meter/meter.h"
#include "wattlab/store/store.h"

namespace wattlab {

// Every power and energy reading of every domain of `record` (loaded with Store::load_run), per
// domain and kind in time order. Telemetry is left out: no estimate reads it.
Result<std::vector<TimedReading>> load_run_readings(const Store& store, const RunRecord& record);

}  // namespace wattlab
