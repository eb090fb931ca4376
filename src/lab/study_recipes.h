// Every input of the study (docs/input-dependent-power.md: E1-E15, X1-X3 and the H200 grid), as
// recipe text per swept value, for one dtype. `wattlab gemm study` runs these.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lab/dtype.h"

namespace wattlab::lab {

// What a sweep runs: GEMMs on A and B, a buffer at rest (X1), a toggle kernel over a buffer (X2),
// or nothing (X3, idle).
enum class SweepKind { gemm, buffer_at_rest, toggle_kernel, idle };

struct StudyPoint {
  std::string value_text;  // the swept value as the doc writes it: "2^-5", "0.3", "12", "0xFF"
  double value = 0;        // the same as a number (idle: 0 without a context, 1 with one)
  std::string recipe_a;    // empty where the sweep needs no operand
  std::string recipe_b;    // empty for X1/X2 (one buffer) and X3
};

struct StudySweep {
  std::string id;         // "E1".."E15", "X1".."X3", and "TF32" (f32 only: TF32 ignores 13 LSBs)
  std::string title;      // one line: what varies
  std::string parameter;  // the swept parameter's name: "std", "mean", "n", "fraction", ...
  SweepKind kind = SweepKind::gemm;
  std::vector<StudyPoint> points;  // in ascending parameter order (the protocol randomizes it)
  std::string note;       // deviations from the paper's recipe for this dtype, or empty
};

// The baseline recipe of a dtype: normal(mean=0, std=1024) for f32/f16/bf16, std=32 for i8,
// std=64 for FP8 (so that +-7 sigma stays within e4m3's +-448).
std::string baseline_recipe(DType dtype);

// All sweeps for a dtype, in the order E1..E15, X1..X3 (then TF32 for f32).
std::vector<StudySweep> study_sweeps(DType dtype);
std::optional<StudySweep> find_sweep(DType dtype, std::string_view id);

}  // namespace wattlab::lab
