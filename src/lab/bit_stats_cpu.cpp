// Bit statistics on the host: integer sums, divided once (the GPU version gives the same doubles).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "elementwise.h"
#include "wattlab/core/error.h"
#include "lab/bit_stats.h"

namespace wattlab::lab {
namespace {

uint32_t load(const std::byte* d, std::size_t bytes, int64_t i) {
  uint32_t x = 0;
  for (std::size_t q = 0; q < bytes; ++q) x |= static_cast<uint32_t>(d[static_cast<std::size_t>(i) * bytes + q]) << (8 * q);
  return x;
}

double ratio(uint64_t num, uint64_t den) {
  return den == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(num) / static_cast<double>(den);
}

}  // namespace

BitStats bit_stats_cpu(const std::byte* data, const OperandShape& shape) {
  BitStats s;
  const int64_t n = elements(shape), outer_n = outer(shape), K = shape.K;
  const std::size_t bytes = size_bytes(shape.dtype);
  const int w = bits(shape.dtype);
  const uint32_t mag_mask = is_float(shape.dtype) ? detail::width_mask(w) >> 1 : detail::width_mask(w);
  s.elements = n;
  s.width_bits = w;
  // Distinct values: a flag per bit pattern up to 16 bits (as the GPU counts them), a sort of a
  // copy for 32 bits.
  const bool table = w <= 16;
  std::vector<uint8_t> seen(table ? std::size_t{1} << w : 0);
  std::vector<uint32_t> all(table ? 0 : static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t x = load(data, bytes, i);
    if (table) seen[x] = 1;
    else all[static_cast<std::size_t>(i)] = x;
    s.popcount_sum += static_cast<uint64_t>(detail::popcount32(x));
    if ((x & mag_mask) == 0) ++s.zero_count;
    if (i % K != K - 1) s.hamming_k_sum += static_cast<uint64_t>(detail::popcount32(x ^ load(data, bytes, i + 1)));
    if (i / K < outer_n - 1) s.hamming_mn_sum += static_cast<uint64_t>(detail::popcount32(x ^ load(data, bytes, i + K)));
  }
  s.hamming_k_pairs = static_cast<uint64_t>(outer_n * (K - 1));
  s.hamming_mn_pairs = static_cast<uint64_t>((outer_n - 1) * K);
  if (table) {
    s.distinct_values = std::count(seen.begin(), seen.end(), uint8_t{1});
  } else {
    std::sort(all.begin(), all.end());
    s.distinct_values = static_cast<int64_t>(std::unique(all.begin(), all.end()) - all.begin());
  }
  s.mean_popcount_bits = ratio(s.popcount_sum, static_cast<uint64_t>(n));
  s.zero_fraction = ratio(s.zero_count, static_cast<uint64_t>(n));
  s.mean_hamming_along_k_bits = ratio(s.hamming_k_sum, s.hamming_k_pairs);
  s.mean_hamming_along_mn_bits = ratio(s.hamming_mn_sum, s.hamming_mn_pairs);
  return s;
}

double ab_bit_agreement_cpu(const std::byte* a, const OperandShape& a_shape, const std::byte* b,
                            const OperandShape& b_shape) {
  if (a_shape.dtype != b_shape.dtype || a_shape.K != b_shape.K)
    throw UsageError("A-B bit agreement needs the same dtype and K in A and B");
  const int64_t count = std::min(outer(a_shape), outer(b_shape)) * a_shape.K;
  const std::size_t bytes = size_bytes(a_shape.dtype);
  const int w = bits(a_shape.dtype);
  uint64_t equal = 0;
  for (int64_t t = 0; t < count; ++t)
    equal += static_cast<uint64_t>(w - detail::popcount32(load(a, bytes, t) ^ load(b, bytes, t)));
  return ratio(equal, static_cast<uint64_t>(count) * static_cast<uint64_t>(w));
}

}  // namespace wattlab::lab
