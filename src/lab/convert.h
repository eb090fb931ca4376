// float64 -> stored bits of every lab dtype, one rounding rule on host and device: round to
// nearest, ties to even. f32/f16/bf16 overflow to +-inf (IEEE); f8_e4m3, f8_e5m2 and i8 saturate
// to their largest finite value. Written with integer arithmetic only, so both sides agree bit
// for bit. NaN maps to the type's canonical quiet NaN (i8: 0); recipes never produce NaN.
#pragma once
#include <cstdint>
#include <cstring>

#include "lab/dtype.h"
#include "lab/hd.h"

namespace wattlab::lab::convert {

WATTLAB_HD inline uint64_t double_bits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(d));
#else
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
#endif
}

WATTLAB_HD inline double bits_double(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
#endif
}

// A binary float format: exponent bits, mantissa bits, whether it saturates, and its codes.
struct FloatFormat {
  int exp_bits, man_bits;
  bool saturate;
  uint32_t max_finite;  // magnitude code of the largest finite value
  uint32_t inf_code;    // magnitude code of +inf (unused when saturating)
  uint32_t nan_code;    // magnitude code of the canonical NaN
};

WATTLAB_HD inline FloatFormat format_of(DType t) {
  switch (t) {
    case DType::f32: return {8, 23, false, 0x7F7FFFFFu, 0x7F800000u, 0x7FC00000u};
    case DType::f16: return {5, 10, false, 0x7BFFu, 0x7C00u, 0x7E00u};
    case DType::bf16: return {8, 7, false, 0x7F7Fu, 0x7F80u, 0x7FC0u};
    case DType::f8_e4m3: return {4, 3, true, 0x7Eu, 0x7Eu, 0x7Fu};
    case DType::f8_e5m2: return {5, 2, true, 0x7Bu, 0x7Cu, 0x7Eu};
    default: return {0, 0, true, 0, 0, 0};
  }
}

WATTLAB_HD inline int width_of(DType t) {
  switch (t) {
    case DType::f32: return 32;
    case DType::f16:
    case DType::bf16: return 16;
    default: return 8;
  }
}

WATTLAB_HD inline uint32_t encode_float(double d, const FloatFormat& f) {
  const int width = 1 + f.exp_bits + f.man_bits;
  const uint64_t u = double_bits(d);
  const uint32_t sign = static_cast<uint32_t>(u >> 63) << (width - 1);
  const int dexp = static_cast<int>((u >> 52) & 0x7FF);
  const uint64_t dman = u & 0xFFFFFFFFFFFFFull;
  if (dexp == 0x7FF) {
    if (dman != 0) return f.nan_code;
    return sign | (f.saturate ? f.max_finite : f.inf_code);
  }
  if (dexp == 0) return sign;  // zero or a float64 subnormal: far below every target's range
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const int e = dexp - 1023;  // value = 1.man * 2^e
  const int emin = 1 - bias;
  const uint64_t sig = (1ull << 52) | dman;
  int shift = 52 - f.man_bits;
  if (e < emin) shift += emin - e;
  if (e > bias + 1) return sign | (f.saturate ? f.max_finite : f.inf_code);  // far above the range
  uint64_t q;
  if (shift >= 64) {
    q = 0;
  } else {
    q = sig >> shift;
    const uint64_t rem = sig & ((1ull << shift) - 1);
    const uint64_t half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  // Normal: q holds the implicit bit, so the exponent field adds on top (a carry moves it up one
  // binade); subnormal: q is the code itself (q == 2^man_bits is the smallest normal).
  const uint64_t code = e < emin ? q : (static_cast<uint64_t>(e + bias - 1) << f.man_bits) + q;
  if (code > f.max_finite) return sign | (f.saturate ? f.max_finite : f.inf_code);
  return sign | static_cast<uint32_t>(code);
}

// Round half to even, then clamp to [-128, 127]; the two's complement byte.
WATTLAB_HD inline uint32_t encode_i8(double d) {
  if (d != d) return 0;
  if (d >= 127.0) return 127u;
  if (d <= -128.0) return 0x80u;
  double f = static_cast<double>(static_cast<int64_t>(d));  // truncation, |d| < 128: exact
  if (f > d) f -= 1.0;                                        // floor
  const double diff = d - f;  // exact: d and f are within one of each other
  int64_t r = static_cast<int64_t>(f);
  if (diff > 0.5 || (diff == 0.5 && (r & 1))) ++r;
  if (r > 127) r = 127;
  if (r < -128) r = -128;
  return static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(r)));
}

// Stored bits (in the low bits of the result) of d in dtype t.
WATTLAB_HD inline uint32_t encode(double d, DType t) {
  if (t == DType::i8) return encode_i8(d);
  return encode_float(d, format_of(t));
}

// The value of stored bits; NaN codes give NaN, +-inf give +-inf.
WATTLAB_HD inline double decode(uint32_t code, DType t) {
  if (t == DType::i8) return static_cast<double>(static_cast<int8_t>(static_cast<uint8_t>(code)));
  const FloatFormat f = format_of(t);
  const int width = 1 + f.exp_bits + f.man_bits;
  const bool neg = (code >> (width - 1)) & 1u;
  const uint32_t mag = code & ((width == 32 ? 0xFFFFFFFFu : ((1u << width) - 1)) >> 1);
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const uint32_t man_mask = (1u << f.man_bits) - 1;
  const int ef = static_cast<int>(mag >> f.man_bits);
  const uint32_t man = mag & man_mask;
  double v;
  if (f.saturate && mag > f.max_finite) {
    v = bits_double(0x7FF8000000000000ull);  // e4m3 0x7F, e5m2 0x7D..0x7F
    if (t == DType::f8_e5m2 && mag == f.inf_code) v = bits_double(0x7FF0000000000000ull);
  } else if (!f.saturate && mag >= f.inf_code) {
    v = mag == f.inf_code ? bits_double(0x7FF0000000000000ull) : bits_double(0x7FF8000000000000ull);
  } else {
    // value = (ef == 0 ? man : 2^man_bits + man) * 2^(max(ef,1) - bias - man_bits), exact in float64.
    const uint64_t sig = ef == 0 ? man : ((1ull << f.man_bits) | man);
    const int exp2 = (ef == 0 ? 1 : ef) - bias - f.man_bits;
    v = static_cast<double>(sig);
    const double two = exp2 >= 0 ? 2.0 : 0.5;
    for (int i = 0, n = exp2 >= 0 ? exp2 : -exp2; i < n; ++i) v *= two;
  }
  return neg ? -v : v;
}

}  // namespace wattlab::lab::convert
