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
// named kProvisionalRunWindow over the span every domain's stored readings cover, final = false.
// Where a domain has an energy counter the span starts at its first read and ends at the later of
// the counter's last placed value and the sample buffer's last sample; when that span leaves a
// domain without an estimate, the span between the counter's first and last reads is taken, then
// the one between its placed values. A complete run, or one without readings, is left as it is.
// Errors: the store's, when reading fails; a parse error when the readings cannot be estimated.
Status add_provisional_run_window(const Store& store, RunRecord& record);

}  // namespace wattlab
