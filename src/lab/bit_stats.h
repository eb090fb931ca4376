// Bit statistics of a stored operand (docs/gemm-inputs.md, "Bit statistics"). All averages are
// integer counts divided once at the end, so CPU and GPU results are identical.
#pragma once
#include <cstddef>
#include <cstdint>

#include "lab/operand.h"

namespace wattlab::lab {

struct BitStats {
  int64_t elements = 0;
  int width_bits = 0;              // bits per element of the dtype
  double mean_popcount_bits = 0;   // bits set per element
  double zero_fraction = 0;        // elements whose value is zero (+0 or -0 for float types)
  int64_t distinct_values = 0;     // distinct stored bit patterns, exact for every dtype
  // Mean Hamming distance (bits) between neighbours: along K, pairs (r,k),(r,k+1) over
  // outer*(K-1) pairs; along MN (M for A, N for B), pairs of the same k in consecutive outer
  // vectors over (outer-1)*K pairs. NaN when there is no pair.
  double mean_hamming_along_k_bits = 0;
  double mean_hamming_along_mn_bits = 0;
  // The integer sums behind the means.
  uint64_t popcount_sum = 0, zero_count = 0;
  uint64_t hamming_k_sum = 0, hamming_k_pairs = 0;
  uint64_t hamming_mn_sum = 0, hamming_mn_pairs = 0;
};

BitStats bit_stats_cpu(const std::byte* data, const OperandShape& shape);

// A-B agreement: the fraction of equal bits between A[i,k] and B[k,i] for i < min(M,N), k < K
// (n = m: the same storage index i*K + k in both, as the study's "same index"). Needs the same
// dtype and K in both shapes (throws UsageError otherwise); NaN when the overlap is empty.
double ab_bit_agreement_cpu(const std::byte* a, const OperandShape& a_shape, const std::byte* b,
                            const OperandShape& b_shape);

}  // namespace wattlab::lab
