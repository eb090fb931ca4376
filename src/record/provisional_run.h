// The energy of a run that never ended (its writer was killed, or still runs): one window over the
// span its stored readings cover, estimated from them with the current estimators and marked
// provisional, so `wattlab report` gives an incomplete run's energy (docs/record.md).
#pragma once
#include "wattlab/core/error.h"
#include "wattlab/store/store.h"

namespace wattlab {

// The name of the window add_provisional_run_window adds.
inline constexpr const char* kProvisionalRunWindow = "run so far";

// For an incomplete `record` (loaded from `store`) with power or energy readings: appends a window
// named kProvisionalRunWindow over the span every domain's stored readings cover (between the
// first and the last reading of its energy counter, where it has one), final = false. A complete
// run, or one without readings, is left as it is. Errors: the store's, when reading fails.
Status add_provisional_run_window(const Store& store, RunRecord& record);

}  // namespace wattlab
