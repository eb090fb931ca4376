// Element-wise parts of generation shared by the CPU reference and the CUDA kernels: the same
// source text compiles on both, with only +, -, *, / and sqrt (correctly rounded on both, FMA
// contraction off), so both produce the same bits.
#pragma once
#include <cstdint>

#include "lab/convert.h"
#include "lab/recipe.h"
#include "lab/rng.h"

namespace wattlab::lab::detail {

#if defined(__CUDA_ARCH__)
WATTLAB_HD inline double det_sqrt(double x) { return __dsqrt_rn(x); }
WATTLAB_HD inline int popcount32(uint32_t x) { return __popc(x); }
#else
WATTLAB_HD inline double det_sqrt(double x) { return __builtin_sqrt(x); }
WATTLAB_HD inline int popcount32(uint32_t x) { return __builtin_popcount(x); }
#endif

// ln(x) for x > 0 normal: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s),
// s = (m-1)/(m+1), |s| < 0.172; 12 series terms reach < 1e-17 relative.
WATTLAB_HD inline double det_log(double x) {
  const uint64_t u = convert::double_bits(x);
  int e = static_cast<int>((u >> 52) & 0x7FF) - 1023;
  double m = convert::bits_double((u & 0xFFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    ++e;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double sum = 0.0;
  for (int k = 23; k >= 1; k -= 2) sum = sum * s2 + 1.0 / k;
  return 2.0 * s * sum + e * 0.6931471805599453;
}

// Inverse standard normal CDF, P. J. Acklam's rational approximation (relative error < 1.2e-9).
WATTLAB_HD inline double inv_normal(double p) {
  const double a0 = -3.969683028665376e+01, a1 = 2.209460984245205e+02, a2 = -2.759285104469687e+02,
               a3 = 1.383577518672690e+02, a4 = -3.066479806614716e+01, a5 = 2.506628277459239e+00;
  const double b0 = -5.447609879822406e+01, b1 = 1.615858368580409e+02, b2 = -1.556989798598866e+02,
               b3 = 6.680131188771972e+01, b4 = -1.328068155288572e+01;
  const double c0 = -7.784894002430293e-03, c1 = -3.223964580411365e-01, c2 = -2.400758277161838e+00,
               c3 = -2.549732539343734e+00, c4 = 4.374664141464968e+00, c5 = 2.938163982698783e+00;
  const double d0 = 7.784695709041462e-03, d1 = 3.224671290700398e-01, d2 = 2.445134137142996e+00,
               d3 = 3.754408661907416e+00;
  const double plow = 0.02425;
  if (p < plow || p > 1.0 - plow) {
    const double q = det_sqrt(-2.0 * det_log(p < plow ? p : 1.0 - p));
    const double x = (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) /
                     ((((d0 * q + d1) * q + d2) * q + d3) * q + 1.0);
    return p < plow ? x : -x;
  }
  const double q = p - 0.5, r = q * q;
  return (((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q /
         (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1.0);
}

// The source's value for RNG index `index` on `stream`.
WATTLAB_HD inline double source_value(const Stage& src, uint64_t seed, uint32_t stream, uint64_t index) {
  switch (src.kind) {
    case StageKind::normal:
      return src.mean + src.stddev * inv_normal(rng::uniform_open01(rng::word64(seed, stream, index)));
    case StageKind::uniform:
      return src.low + (src.high - src.low) * rng::uniform_open01(rng::word64(seed, stream, index));
    default: return src.value;
  }
}

// Value of element i: the source, or with distinct(n) one of n pool values (pool value j is the
// source at index j on sub-stream 1; the choice is word 0 on sub-stream 0).
WATTLAB_HD inline double initial_value(const Stage& src, const Stage* distinct, uint64_t seed, uint32_t op,
                                       uint64_t i) {
  if (distinct == nullptr) return source_value(src, seed, rng::stream_id(op, 0, 0), i);
  const uint32_t j = rng::below(rng::word(seed, rng::stream_id(op, 1, 0), i, 0), static_cast<uint32_t>(distinct->n));
  return source_value(src, seed, rng::stream_id(op, 1, 1), j);
}

WATTLAB_HD inline uint32_t width_mask(int w) { return w == 32 ? 0xFFFFFFFFu : ((1u << w) - 1u); }

// One bit stage on the stored bits of element i (stage index `step` in the recipe).
WATTLAB_HD inline uint32_t apply_bits(const Stage& s, uint32_t x, int w, uint64_t seed, uint32_t op, uint32_t step,
                                      uint64_t i) {
  const uint32_t all = width_mask(w);
  const int n = static_cast<int>(s.n);
  const uint32_t stream = rng::stream_id(op, step, 0);
  const uint32_t low = n >= 32 ? 0xFFFFFFFFu : ((1u << n) - 1u);
  const uint32_t high = n == 0 ? 0u : (low << (w - n)) & all;  // n <= w
  switch (s.kind) {
    case StageKind::flip: {
      // Partial Fisher-Yates over the w positions: the first n of the shuffle flip.
      unsigned char pos[32];
      for (int b = 0; b < w; ++b) pos[b] = static_cast<unsigned char>(b);
      for (int t = 0; t < n; ++t) {
        const int j = t + static_cast<int>(rng::below(rng::word(seed, stream, i, static_cast<uint32_t>(t)),
                                                      static_cast<uint32_t>(w - t)));
        const unsigned char tmp = pos[t];
        pos[t] = pos[j];
        pos[j] = tmp;
        x ^= 1u << pos[t];
      }
      return x;
    }
    case StageKind::randomize_low: return n == 0 ? x : (x & ~low) | (rng::word(seed, stream, i, 0) & low);
    case StageKind::randomize_high: return n == 0 ? x : (x & ~high) | (rng::word(seed, stream, i, 0) & high);
    case StageKind::zero_low: return n == 0 ? x : x & ~low & all;
    case StageKind::zero_high: return n == 0 ? x : x & ~high & all;
    case StageKind::xor_bits: return (x ^ s.mask) & all;
    default: return x;
  }
}

// A total order on float64 as unsigned integers (-0 before +0).
WATTLAB_HD inline uint64_t orderable(double v) {
  const uint64_t u = convert::double_bits(v);
  return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}

// Storage index of sequence position j when consecutive positions run along K (`along_k`) or along
// the outer dim (M for A, N for B).
WATTLAB_HD inline int64_t seq_to_storage(int64_t j, bool along_k, int64_t outer_n, int64_t K) {
  return along_k ? j : (j % outer_n) * K + j / outer_n;
}

// sparse24: which two of the four elements of group g to zero, as a 4-bit mask.
WATTLAB_HD inline uint32_t sparse24_zero_mask(const Stage& s, const double* v4, uint64_t seed, uint32_t op,
                                              uint32_t step, uint64_t g) {
  if (s.keep == Keep24::random) {
    const unsigned char pairs[6] = {0x3, 0x5, 0x6, 0x9, 0xA, 0xC};  // the 6 ways to pick 2 of 4
    return pairs[rng::below(rng::word(seed, rng::stream_id(op, step, 0), g, 0), 6u)];
  }
  // keep the two largest |v| (ties: the lower k is kept); zero the others.
  uint32_t keep = 0;
  for (int t = 0; t < 2; ++t) {
    int best = -1;
    double best_a = -1.0;
    for (int q = 0; q < 4; ++q) {
      if (keep & (1u << q)) continue;
      const double a = v4[q] < 0 ? -v4[q] : v4[q];
      if (a > best_a) {
        best_a = a;
        best = q;
      }
    }
    keep |= 1u << best;
  }
  return ~keep & 0xFu;
}

}  // namespace wattlab::lab::detail
