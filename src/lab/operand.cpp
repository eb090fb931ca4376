#include "lab/operand.h"

namespace wattlab::lab {

std::string_view to_string(Operand which) { return which == Operand::A ? "A" : "B"; }

int64_t rows(const OperandShape& s) { return s.which == Operand::A ? s.M : s.K; }
int64_t cols(const OperandShape& s) { return s.which == Operand::A ? s.K : s.N; }
int64_t elements(const OperandShape& s) { return outer(s) * s.K; }
int64_t outer(const OperandShape& s) { return s.which == Operand::A ? s.M : s.N; }
std::size_t storage_bytes(const OperandShape& s) {
  return static_cast<std::size_t>(elements(s)) * size_bytes(s.dtype);
}

int64_t storage_index(const OperandShape& s, int64_t r, int64_t c) {
  // A[m,k] at m*K + k; B[k,n] at n*K + k.
  return s.which == Operand::A ? r * s.K + c : c * s.K + r;
}

}  // namespace wattlab::lab
