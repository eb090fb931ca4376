#include "report/gemm_original.h"

#include <array>

namespace wattlab::report {
namespace {

// input-dependent-power.md §3 (table "Experiments", "Controls") and §7 (table "Grid S-E1...").
constexpr std::array<OriginalEffect, 19> kOriginal{{
    {"E1", Curve::flat, "FP32 +1 %; FP16 step of -11 % at std >= 64 (overflow); TC at the cap; INT8 +5 %",
     "flat (±2 %) with wide accumulation; FP16acc steps at std >= 64"},
    {"E2", Curve::down, "FP32 -9 %, FP16 -25 %, TC -35 %, INT8 flat; H100 -28 %", "-20 to -30 % for 16-bit types"},
    {"E3", Curve::up, "rise to saturation by n ~ 16: FP32 +32 %, FP16 +17 %, TC +39 %, INT8 +18 %",
     "a constant matrix 20-30 % below >= 16 distinct values"},
    {"E4", Curve::peak, "inverted U, peak at ~half the width: FP16 215 -> 258 -> 219 W; TC at the cap for n = 3-12",
     "inverted U"},
    {"E5", Curve::up, "FP32 +20 %, FP16 +18 %, TC +41 %, INT8 +18 % (most of it at n = 1)", "monotonic +15 to +40 %"},
    {"E6", Curve::up, "FP16 +19 %, TC +41 %, INT8 +18 %; FP32 irregular; H100 +28 %",
     "+15 to +40 %; irregular for FP32 and FP8"},
    {"E7", Curve::down, "FP32 -16 %, TC -19 %, INT8 flat", "-20 to -30 % for 16-bit types"},
    {"E8", Curve::down, "FP32 -11 %, FP16 -12 %, TC -24 %, INT8 -8 %; H100 -20 %", "-15 to -25 %"},
    {"E9", Curve::down, "-6 % SIMT, -12 % TC, -7 % INT8", "about half of E8"},
    {"E10", Curve::down, "-2 to -7 %", "-2 to -7 %"},
    {"E11", Curve::down, "flat to ~20 %, then falling, big 90 -> 100 % step: FP32 -33 %, FP16 -23 %, TC -38 %, INT8 -32 %; H100 -30 %",
     "-25 to -40 %; capped engines: little change in watts until p ~ 0.5 (watch the clock)"},
    {"E12", Curve::peak, "non-monotonic: +7 to +15 % at p ~ 0.3-0.4, then -23 to -26 % at p = 1", "-25 to -40 %; the hump repeats"},
    {"E13", Curve::down, "SIMT about -5 % (TC data identical to E8)", "small"},
    {"E14", Curve::down, "FP32 -9 %, FP16 -23 %, TC -38 %, INT8 -34 %", "-30 to -40 %; range artefacts near the exponent bits"},
    {"E15", Curve::down, "FP32 -23 % (underflow step at n = 3); FP16 rises at n = 2-3, then -23 %; TC -39 %, INT8 -32 %",
     "-30 to -40 %; range artefacts near the exponent bits"},
    {"TF32", Curve::flat, "(not in the study)", "zeroing the 13 LSBs TF32 ignores changes nothing"},
    {"X1", Curve::flat, "no difference: H100 110.6 vs 110.7 W, A100 71.9 vs 72.4 W", "< 1 %"},
    {"X2", Curve::up, "small memory-bound rise: A100 +3 %, V100 +3.4 %, H100 330 -> 335-343 W", "+2 to 4 %"},
    {"X3", Curve::unknown, "idle: the floor (A100 48.6 W, ~72 W with a context)", "idle, with and without a context"},
}};

}  // namespace

std::optional<OriginalEffect> original_effect(std::string_view experiment) {
  for (const auto& o : kOriginal)
    if (o.experiment == experiment) return o;
  return std::nullopt;
}

std::string_view curve_agrees(Curve expected, Curve measured) {
  if (expected == Curve::unknown || measured == Curve::unknown) return "n/a";
  return expected == measured ? "yes" : "no";
}

}  // namespace wattlab::report
