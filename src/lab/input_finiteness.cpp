#include "lab/input_finiteness.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "elementwise.h"
#include "lab/convert.h"
#include "lab/generate.h"

namespace wattlab::lab {
namespace {

bool finite_code(uint32_t code, DType t) { return std::isfinite(convert::decode(code, t)); }

}  // namespace

Result<NonfiniteCount> count_nonfinite_inputs(const Recipe& recipe, const OperandShape& shape, uint64_t seed,
                                              bool stop_at_first) {
  if (Status st = validate(recipe, shape); !st) return st.error();
  NonfiniteCount c;
  c.elements = elements(shape);
  const std::vector<Stage>& st = recipe.stages;
  const Stage* distinct = st.size() > 1 && st[1].kind == StageKind::distinct ? &st[1] : nullptr;
  std::size_t first_bit = distinct ? 2 : 1;
  bool elementwise = true;
  for (std::size_t s = first_bit; s < st.size(); ++s) elementwise = elementwise && is_bit_stage(st[s].kind);
  const int w = bits(shape.dtype);
  // Counts element i's code when it is not finite; true when the count stops there.
  auto stops_at = [&](uint32_t x, int64_t i) {
    if (finite_code(x, shape.dtype)) return false;
    ++c.nonfinite;
    if (!stop_at_first) return false;
    c.elements = i + 1;
    return true;
  };
  if (elementwise) {
    // The same steps as generate_cpu, one element at a time.
    const uint32_t op = shape.which == Operand::A ? 0u : 1u;
    for (int64_t i = 0; i < c.elements; ++i) {
      uint32_t x = convert::encode(detail::initial_value(st[0], distinct, seed, op, static_cast<uint64_t>(i)), shape.dtype);
      for (std::size_t b = first_bit; b < st.size(); ++b)
        x = detail::apply_bits(st[b], x, w, seed, op, static_cast<uint32_t>(b), static_cast<uint64_t>(i));
      if (stops_at(x, i)) return c;
    }
    return c;
  }
  const std::vector<std::byte> data = generate_cpu(recipe, shape, seed);
  const std::size_t bytes = size_bytes(shape.dtype);
  for (int64_t i = 0; i < c.elements; ++i) {
    uint32_t x = 0;
    for (std::size_t q = 0; q < bytes; ++q)
      x |= static_cast<uint32_t>(data[static_cast<std::size_t>(i) * bytes + q]) << (8 * q);
    if (stops_at(x, i)) return c;
  }
  return c;
}

}  // namespace wattlab::lab
