// What the original study found per experiment (docs/input-dependent-power.md §3: the A100
// results reduced from the authors' traces; §7: the rough H200 expectation), as data the GEMM
// report prints next to the measured effect.
#pragma once
#include <optional>
#include <string_view>

#include "report/gemm_analysis.h"

namespace wattlab::report {

struct OriginalEffect {
  std::string_view experiment;   // "E3"
  Curve expected;                // the curve of power over the sweep (start -> end) the study reports
  std::string_view a100;         // §3, A100 (and cross-GPU) result, sweep start -> end
  std::string_view h200;         // §7, expected on the H200
};

// nullopt for an experiment the study does not define.
std::optional<OriginalEffect> original_effect(std::string_view experiment);

// "yes", "no" or "n/a": does `measured` run the way the study's curve does?
std::string_view curve_agrees(Curve expected, Curve measured);

}  // namespace wattlab::report
