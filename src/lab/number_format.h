// Stored bits <-> double for the GEMM lab's element types: the float64 reference reads the exact
// values the engines read, and the accuracy check writes inputs with round-to-nearest-even.
#pragma once
#include <cstddef>
#include <cstdint>

#include "lab/dtype.h"

namespace wattlab::lab {

// Element types of a GEMM's output C (the inputs use DType).
enum class OutType { f32, f16, bf16, i32 };

const char* to_string(OutType t);
std::size_t size_bytes(OutType t);

// The value stored at `p` (little-endian element of type `t`), exactly.
double decode(DType t, const std::byte* p);
double decode(OutType t, const std::byte* p);

// Rounds `x` to the nearest value of `t` (ties to even) and stores it at `p`. Out of range:
// f16/bf16/f32/e5m2 give +-inf, e4m3 (which has no inf) saturates to +-448, i8 saturates to
// -128..127 after rounding. NaN stays NaN (i8: 0).
void encode(DType t, double x, std::byte* p);

}  // namespace wattlab::lab
