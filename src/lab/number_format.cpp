#include "lab/number_format.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace wattlab::lab {
namespace {

// A binary float format narrower than double: sign, `e` exponent bits, `m` mantissa bits.
struct MiniFloat {
  int e;
  int m;
  bool has_inf;  // IEEE-style inf/NaN at the top exponent (f16, bf16, e5m2); e4m3fn has only NaN
  int bias() const { return (1 << (e - 1)) - 1; }
  int max_field() const { return (1 << e) - 1; }
};
constexpr MiniFloat kF16{5, 10, true};
constexpr MiniFloat kBF16{8, 7, true};
constexpr MiniFloat kE4M3{4, 3, false};
constexpr MiniFloat kE5M2{5, 2, true};

double decode_bits(const MiniFloat& f, uint32_t bits) {
  const uint32_t man = bits & ((1u << f.m) - 1);
  const uint32_t ex = (bits >> f.m) & static_cast<uint32_t>(f.max_field());
  const bool neg = ((bits >> (f.m + f.e)) & 1u) != 0;
  double v = 0;
  if (f.has_inf && ex == static_cast<uint32_t>(f.max_field())) {
    v = man == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.has_inf && ex == static_cast<uint32_t>(f.max_field()) && man == (1u << f.m) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (ex == 0) {
    v = std::ldexp(static_cast<double>(man), 1 - f.bias() - f.m);
  } else {
    v = std::ldexp(static_cast<double>(man | (1u << f.m)), static_cast<int>(ex) - f.bias() - f.m);
  }
  return neg ? -v : v;
}

uint32_t encode_bits(const MiniFloat& f, double x) {
  const uint32_t sign = std::signbit(x) ? (1u << (f.e + f.m)) : 0u;
  const uint32_t all_ones_man = (1u << f.m) - 1;
  if (std::isnan(x)) return sign | (static_cast<uint32_t>(f.max_field()) << f.m) | all_ones_man;
  const uint32_t inf_bits = static_cast<uint32_t>(f.max_field()) << f.m;
  // e4m3fn: the largest finite value has the top exponent and mantissa 110.
  const uint32_t max_finite = f.has_inf ? inf_bits - 1 : inf_bits | (all_ones_man - 1);
  const double a = std::fabs(x);
  if (std::isinf(a)) return sign | (f.has_inf ? inf_bits : max_finite);
  if (a == 0) return sign;
  int exp2 = 0;
  std::frexp(a, &exp2);  // a = frac * 2^exp2, frac in [0.5, 1)
  int u = exp2 - 1;      // a = 1.xxx * 2^u
  uint32_t bits = 0;
  if (u < 1 - f.bias()) {
    // Subnormal: a multiple of the smallest quantum; q == 2^m rounds up into the first normal.
    const double q = std::nearbyint(std::ldexp(a, f.bias() - 1 + f.m));
    bits = static_cast<uint32_t>(q);
  } else {
    double q = std::nearbyint(std::ldexp(a, f.m - u));  // in [2^m, 2^(m+1)]
    if (q >= std::ldexp(1.0, f.m + 1)) {
      q = std::ldexp(1.0, f.m);
      ++u;
    }
    const int field = u + f.bias();
    if (field > f.max_field()) return sign | (f.has_inf ? inf_bits : max_finite);
    bits = (static_cast<uint32_t>(field) << f.m) | (static_cast<uint32_t>(q) - (1u << f.m));
  }
  if (bits > max_finite) return sign | (f.has_inf ? inf_bits : max_finite);
  return sign | bits;
}

uint32_t load(const std::byte* p, std::size_t n) {
  uint32_t v = 0;
  std::memcpy(&v, p, n);  // little-endian host (x86-64, aarch64)
  return v;
}
void store(std::byte* p, uint32_t v, std::size_t n) { std::memcpy(p, &v, n); }

}  // namespace

const char* to_string(OutType t) {
  switch (t) {
    case OutType::f32: return "f32";
    case OutType::f16: return "f16";
    case OutType::bf16: return "bf16";
    case OutType::i32: return "i32";
  }
  return "?";
}

std::size_t size_bytes(OutType t) { return t == OutType::f16 || t == OutType::bf16 ? 2 : 4; }

double decode(DType t, const std::byte* p) {
  switch (t) {
    case DType::f32: return static_cast<double>(std::bit_cast<float>(load(p, 4)));
    case DType::f16: return decode_bits(kF16, load(p, 2));
    case DType::bf16: return decode_bits(kBF16, load(p, 2));
    case DType::f8_e4m3: return decode_bits(kE4M3, load(p, 1));
    case DType::f8_e5m2: return decode_bits(kE5M2, load(p, 1));
    case DType::i8: return static_cast<double>(static_cast<int8_t>(load(p, 1)));
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double decode(OutType t, const std::byte* p) {
  switch (t) {
    case OutType::f32: return decode(DType::f32, p);
    case OutType::f16: return decode(DType::f16, p);
    case OutType::bf16: return decode(DType::bf16, p);
    case OutType::i32: return static_cast<double>(static_cast<int32_t>(load(p, 4)));
  }
  return std::numeric_limits<double>::quiet_NaN();
}

void encode(DType t, double x, std::byte* p) {
  switch (t) {
    case DType::f32: store(p, std::bit_cast<uint32_t>(static_cast<float>(x)), 4); return;
    case DType::f16: store(p, encode_bits(kF16, x), 2); return;
    case DType::bf16: store(p, encode_bits(kBF16, x), 2); return;
    case DType::f8_e4m3: store(p, encode_bits(kE4M3, x), 1); return;
    case DType::f8_e5m2: store(p, encode_bits(kE5M2, x), 1); return;
    case DType::i8: {
      const double r = std::isnan(x) ? 0.0 : std::clamp(std::nearbyint(x), -128.0, 127.0);
      store(p, static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(r))), 1);
      return;
    }
  }
}

}  // namespace wattlab::lab
