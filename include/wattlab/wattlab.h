// wattlab's public C++ API in one header: what `cmake --install` installs and find_package(wattlab)
// serves as the target wattlab::wattlab (docs/install.md). It is the closure of the headers below;
// every other header under include/wattlab/ is internal to the tool and is not installed.
//
//   core     the clock (steady or virtual) and the error types
//   sensors  sensor readings, the Sensor interface, the device selection that opens sensors
//   meter    the meter, its windows and their results, the estimators and issue codes
//   store    the SQLite run store and the run record loaded from it
//   record   Recording: a whole run (sensors, meter, store) in one object
//   marks    the header-only client a measured program uses to mark windows
#pragma once

#include "wattlab/core/clock.h"
#include "wattlab/core/error.h"
#include "wattlab/sensors/reading.h"
#include "wattlab/sensors/sensor.h"
#include "wattlab/sensors/registry.h"
#include "wattlab/meter/estimator.h"
#include "wattlab/meter/issue_code.h"
#include "wattlab/meter/window.h"
#include "wattlab/meter/meter.h"
#include "wattlab/store/run_record.h"
#include "wattlab/store/store.h"
#include "wattlab/record/recording.h"
#include "wattlab/marks.h"
