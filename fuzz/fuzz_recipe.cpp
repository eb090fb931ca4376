// Fuzzes the GEMM input recipe language (src/lab/recipe.cpp, docs/gemm-inputs.md): parse_recipe
// either gives a recipe whose canonical text parses back to the same stages, or an
// invalid_argument error that points at a column of the text; validate never throws.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "lab/dtype.h"
#include "lab/recipe.h"

namespace {

using namespace wattlab::lab;

bool same_stage(const Stage& a, const Stage& b) {
  return a.kind == b.kind && a.mean == b.mean && a.stddev == b.stddev && a.low == b.low && a.high == b.high &&
         a.value == b.value && a.fraction == b.fraction && a.n == b.n && a.mask == b.mask && a.along == b.along &&
         a.scope == b.scope && a.keep == b.keep;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using wattlab::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = parse_recipe(text);
  if (!r) {
    check(r.error().kind == wattlab::ErrorKind::invalid_argument, "a bad recipe must be invalid_argument");
    check(r.error().what.rfind("bad recipe at column ", 0) == 0, "the error must name a column: " + r.error().what);
    return 0;
  }
  check(!r->stages.empty(), "a parsed recipe has a source stage");
  const std::string canonical = to_string(*r);
  auto again = parse_recipe(canonical);
  check(again.ok(), "the canonical text must parse: " + canonical);
  check(again->stages.size() == r->stages.size(), "the canonical text keeps every stage: " + canonical);
  for (std::size_t i = 0; i < r->stages.size(); ++i)
    check(same_stage(r->stages[i], again->stages[i]), "the canonical text keeps stage " + std::to_string(i) + ": " + canonical);
  for (Operand which : {Operand::A, Operand::B})
    for (DType dtype : all_dtypes) {
      OperandShape shape;
      shape.which = which;
      shape.dtype = dtype;
      shape.M = 8;
      shape.N = 8;
      shape.K = 16;
      (void)validate(*r, shape);
    }
  return 0;
}
