#include "report/gemm_nonfinite.h"

#include <fmt/format.h>

#include "lab/engine.h"
#include "lab/input_finiteness.h"
#include "lab/recipe.h"

namespace wattlab::report {
namespace {

// The share of Inf/NaN in one operand, or why it cannot be counted.
Result<lab::NonfiniteCount> count_operand(const GemmMeasurement& p, lab::Operand which, lab::DType dtype) {
  auto recipe = lab::parse_recipe(which == lab::Operand::A ? p.recipe_a : p.recipe_b);
  if (!recipe) return recipe.error();
  lab::OperandShape shape{which, p.m, p.n, p.k, dtype};
  return lab::count_nonfinite_inputs(*recipe, shape, p.seed_number, true);
}

void classify(GemmMeasurement& p) {
  auto unchecked = [&](const std::string& why) {
    p.nonfinite = GemmNonfinite::unchecked;
    p.nonfinite_label = "non-finite output, inputs not checked: " + why;
  };
  const auto engine = lab::parse_engine(p.engine);
  if (!engine) return unchecked("engine '" + p.engine + "' is not one of the lab's");
  const lab::EngineSpec& es = lab::spec(*engine);
  const auto a = count_operand(p, lab::Operand::A, es.a);
  if (!a) return unchecked("A: " + a.error().what);
  const auto b = count_operand(p, lab::Operand::B, es.b);
  if (!b) return unchecked("B: " + b.error().what);
  if (a->nonfinite + b->nonfinite > 0) {
    p.nonfinite = GemmNonfinite::inputs;
    p.nonfinite_label = a->nonfinite && b->nonfinite ? "non-finite inputs (A and B)"
                        : a->nonfinite              ? "non-finite inputs (A)"
                                                    : "non-finite inputs (B)";
    return;
  }
  p.nonfinite = GemmNonfinite::overflow;
  p.nonfinite_label = overflow_label(p.engine);
}

}  // namespace

std::string overflow_label(const std::string& engine) {
  const auto e = lab::parse_engine(engine);
  if (!e) return "overflow (finite inputs)";
  const lab::EngineSpec& es = lab::spec(*e);
  const lab::OutType t = es.out;
  const std::string out = t == lab::OutType::f32 ? "FP32" : t == lab::OutType::f16 ? "FP16" : t == lab::OutType::bf16 ? "BF16" : "INT32";
  // C with the accumulator's range (FP32, or BF16 with FP32's exponent range): the accumulator overflowed.
  const bool same_range = t == lab::OutType::f32 || t == lab::OutType::bf16 || (es.accumulate == "FP16" && t == lab::OutType::f16);
  if (same_range) return fmt::format("{} accumulator overflow (finite inputs)", es.accumulate);
  return fmt::format("overflow in the {} accumulator or the {} output (finite inputs)", es.accumulate, out);
}

void classify_nonfinite(std::vector<GemmMeasurement>& points) {
  for (auto& p : points)
    if (p.output_nonfinite) classify(p);
}

}  // namespace wattlab::report
