#include "lab/number_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace wattlab::lab {
namespace {

uint32_t bits_of(DType t, double x) {
  std::byte b[4] = {};
  encode(t, x, b);
  uint32_t v = 0;
  std::memcpy(&v, b, size_bytes(t));
  return v;
}
double round_trip(DType t, double x) {
  std::byte b[4] = {};
  encode(t, x, b);
  return decode(t, b);
}

TEST(NumberFormat, KnownBitPatterns) {
  EXPECT_EQ(bits_of(DType::f16, 1.0), 0x3C00u);
  EXPECT_EQ(bits_of(DType::f16, -2.0), 0xC000u);
  EXPECT_EQ(bits_of(DType::f16, 65504.0), 0x7BFFu);
  EXPECT_EQ(bits_of(DType::f16, 1e6), 0x7C00u);  // overflow: inf
  EXPECT_EQ(bits_of(DType::bf16, 1.0), 0x3F80u);
  EXPECT_EQ(bits_of(DType::f8_e4m3, 1.0), 0x38u);
  EXPECT_EQ(bits_of(DType::f8_e4m3, 448.0), 0x7Eu);
  EXPECT_EQ(bits_of(DType::f8_e4m3, 1e4), 0x7Eu);  // saturates: e4m3fn has no inf
  EXPECT_EQ(bits_of(DType::f8_e5m2, 1.0), 0x3Cu);
  EXPECT_EQ(bits_of(DType::f8_e5m2, 57344.0), 0x7Bu);
  EXPECT_EQ(bits_of(DType::i8, -3.4), 0xFDu);
  EXPECT_EQ(bits_of(DType::i8, 300), 0x7Fu);
}

TEST(NumberFormat, SubnormalsAndTiesToEven) {
  EXPECT_EQ(round_trip(DType::f16, std::ldexp(1.0, -24)), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(round_trip(DType::f16, std::ldexp(1.0, -26)), 0.0);                   // below half of it
  EXPECT_EQ(round_trip(DType::f8_e4m3, std::ldexp(1.0, -9)), std::ldexp(1.0, -9));
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10 in f16: ties go to the even mantissa (1).
  EXPECT_EQ(round_trip(DType::f16, 1.0 + std::ldexp(1.0, -11)), 1.0);
  EXPECT_EQ(round_trip(DType::f16, 1.0 + 3 * std::ldexp(1.0, -11)), 1.0 + std::ldexp(1.0, -9));
  EXPECT_TRUE(std::isnan(round_trip(DType::bf16, NAN)));
  EXPECT_TRUE(std::isnan(round_trip(DType::f8_e4m3, NAN)));
}

TEST(NumberFormat, EveryEightBitPatternRoundTrips) {
  for (DType t : {DType::f8_e4m3, DType::f8_e5m2, DType::i8})
    for (uint32_t v = 0; v < 256; ++v) {
      std::byte b{static_cast<unsigned char>(v)};
      const double x = decode(t, &b);
      if (std::isnan(x) || std::isinf(x)) continue;
      EXPECT_EQ(bits_of(t, x), v) << to_string(t) << " " << x;
    }
}

TEST(NumberFormat, OutputTypes) {
  std::byte b[4];
  const int32_t v = -123456;
  std::memcpy(b, &v, 4);
  EXPECT_EQ(decode(OutType::i32, b), -123456.0);
  encode(DType::bf16, 3.0, b);
  EXPECT_EQ(decode(OutType::bf16, b), 3.0);
}

}  // namespace
}  // namespace wattlab::lab
