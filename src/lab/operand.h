// Which operand and its shape. Layout is fixed ("TN", what cuBLASLt needs for FP8):
//   A is M x K, stored row-major: A[m,k] at m*K + k (K contiguous);
//   B is K x N, stored column-major: B[k,n] at n*K + k (K contiguous).
// So both operands are `outer` vectors of K contiguous elements, outer = M for A and N for B.
#pragma once
#include <cstdint>
#include <string_view>

#include "lab/dtype.h"

namespace wattlab::lab {

enum class Operand { A, B };

std::string_view to_string(Operand which);  // "A", "B"

struct OperandShape {
  Operand which = Operand::A;
  int64_t M = 0, N = 0, K = 0;  // the GEMM's shape: C (M x N) = A (M x K) * B (K x N)
  DType dtype = DType::f32;
};

// Mathematical rows and columns: A is M x K, B is K x N.
int64_t rows(const OperandShape& s);
int64_t cols(const OperandShape& s);
int64_t elements(const OperandShape& s);
// Storage view: `outer(s)` vectors (M for A, N for B) of K contiguous elements.
int64_t outer(const OperandShape& s);
std::size_t storage_bytes(const OperandShape& s);
// Storage index of element (row r, column c) in mathematical coordinates.
int64_t storage_index(const OperandShape& s, int64_t r, int64_t c);

}  // namespace wattlab::lab
