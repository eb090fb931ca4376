// Why a GEMM point's output held Inf or NaN (docs/report-gemm.md, "Non-finite results"). The
// accuracy check flags the point (count rel_error_nonfinite, or nonfinite_fraction > 0); its
// inputs are then regenerated on the CPU from the stored recipes, shape and seed
// (lab::count_nonfinite_inputs), bit-identical to what the GPU generator made:
//   - Inf/NaN in A or B: "non-finite inputs", kept out of every Δ, effect and curve;
//   - finite inputs: the accumulator (or C's type) overflowed, labelled with the engine's types;
//     the GEMM ran on finite data, so the point keeps its Δ, with the label beside it.
#pragma once
#include <vector>

#include "report/gemm_analysis.h"

namespace wattlab::report {

// Sets nonfinite and nonfinite_label on every point with output_nonfinite; others are left alone.
// A point whose engine, recipe or shape does not regenerate is `unchecked`, its label says why.
void classify_nonfinite(std::vector<GemmMeasurement>& points);

// The label of a point with finite inputs and a non-finite output on `engine`: "FP32 accumulator
// overflow (finite inputs)", naming C's type where it is narrower than the accumulator.
std::string overflow_label(const std::string& engine);

}  // namespace wattlab::report
