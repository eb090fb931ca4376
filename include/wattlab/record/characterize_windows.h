// How `wattlab sensors --characterize` lands in a run (docs/sensors-characterize.md): one window
// per domain and phase (characterize:idle, characterize:reading, characterize:load), the numbers
// as the window's counts and labels.
#pragma once
#include <vector>

#include "wattlab/meter/window.h"
#include "wattlab/sensors/characterize.h"

namespace wattlab {

// Windows numbered 1, 2, ... in domain order, final.
std::vector<WindowResult> characterization_windows(const std::vector<DomainCharacter>& result);

}  // namespace wattlab
