#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "lab/convert.h"
#include "lab/rng.h"

using namespace wattlab::lab;
using convert::decode;
using convert::encode;

TEST(Convert, KnownPatterns) {
  EXPECT_EQ(encode(1.0, DType::bf16), 0x3F80u);
  EXPECT_EQ(encode(-2.0, DType::bf16), 0xC000u);
  EXPECT_EQ(encode(1.0, DType::f16), 0x3C00u);
  EXPECT_EQ(encode(65504.0, DType::f16), 0x7BFFu);
  EXPECT_EQ(encode(65520.0, DType::f16), 0x7C00u);  // halfway to 2^16 rounds to even: inf
  EXPECT_EQ(encode(1.0, DType::f32), 0x3F800000u);
  EXPECT_EQ(encode(0.1, DType::f32), 0x3DCCCCCDu);
  EXPECT_EQ(encode(-0.0, DType::f16), 0x8000u);
  EXPECT_EQ(encode(1.0, DType::f8_e4m3), 0x38u);
  EXPECT_EQ(encode(448.0, DType::f8_e4m3), 0x7Eu);
  EXPECT_EQ(encode(1e6, DType::f8_e4m3), 0x7Eu);     // saturates
  EXPECT_EQ(encode(-1e6, DType::f8_e4m3), 0xFEu);
  EXPECT_EQ(encode(464.0, DType::f8_e4m3), 0x7Eu);   // tie between 448 and 480 -> even (448)
  EXPECT_EQ(encode(1.0, DType::f8_e5m2), 0x3Cu);
  EXPECT_EQ(encode(57344.0, DType::f8_e5m2), 0x7Bu);
  EXPECT_EQ(encode(1e9, DType::f8_e5m2), 0x7Bu);     // saturates, no inf
  EXPECT_EQ(encode(std::ldexp(1.0, -9), DType::f8_e4m3), 0x01u);  // smallest subnormal
  EXPECT_EQ(encode(std::ldexp(1.0, -10), DType::f8_e4m3), 0x00u); // tie to even: 0
  EXPECT_EQ(encode(std::ldexp(3.0, -10), DType::f8_e4m3), 0x02u); // 1.5 ulp -> 2 (even)
  EXPECT_EQ(encode(std::ldexp(1.0, -24), DType::f16), 0x0001u);
  EXPECT_EQ(encode(1.0 + std::ldexp(1.0, -8), DType::bf16), 0x3F80u);  // tie -> even
  EXPECT_EQ(encode(1.0 + 3 * std::ldexp(1.0, -8), DType::bf16), 0x3F82u);
  EXPECT_EQ(encode(2.5, DType::i8), 2u);
  EXPECT_EQ(encode(3.5, DType::i8), 4u);
  EXPECT_EQ(encode(-2.5, DType::i8), 0xFEu);
  EXPECT_EQ(encode(-0.4, DType::i8), 0u);
  EXPECT_EQ(encode(300.0, DType::i8), 127u);
  EXPECT_EQ(encode(-300.0, DType::i8), 0x80u);
}

TEST(Convert, MatchesHardwareFloatCastAndRoundTrips) {
  uint64_t seed = 7;
  for (int i = 0; i < 20000; ++i) {
    const double u = rng::uniform_open01(rng::word64(seed, 0, static_cast<uint64_t>(i)));
    const double d = std::ldexp(u - 0.5, (i % 200) - 140);
    const float f = static_cast<float>(d);
    uint32_t fb;
    std::memcpy(&fb, &f, 4);
    ASSERT_EQ(encode(d, DType::f32), fb) << d;
    for (DType t : {DType::f16, DType::bf16, DType::f8_e4m3, DType::f8_e5m2, DType::i8}) {
      const uint32_t c = encode(d, t);
      ASSERT_EQ(encode(decode(c, t), t), c);  // every code's value encodes back to itself
    }
  }
  EXPECT_EQ(decode(0x7Eu, DType::f8_e4m3), 448.0);
  EXPECT_TRUE(std::isnan(decode(0x7Fu, DType::f8_e4m3)));
  EXPECT_TRUE(std::isinf(decode(0x7Cu, DType::f8_e5m2)));
  EXPECT_EQ(decode(0x3F80u, DType::bf16), 1.0);
  EXPECT_EQ(decode(0x80u, DType::i8), -128.0);
}

TEST(Rng, PhiloxKnownAnswers) {
  // Random123 kat_vectors: philox4x32_10, counter 0 / key 0, and counter ~0 / key ~0.
  auto z = rng::philox4x32_10(0, 0, 0, 0, 0);
  EXPECT_EQ(z.w[0], 0x6627e8d5u);
  EXPECT_EQ(z.w[1], 0xe169c58du);
  EXPECT_EQ(z.w[2], 0xbc57ac4cu);
  EXPECT_EQ(z.w[3], 0x9b00dbd8u);
  auto f = rng::philox4x32_10(~0ull, ~0u, ~0u, ~0u, ~0u);
  EXPECT_EQ(f.w[0], 0x408f276du);
  EXPECT_EQ(f.w[1], 0x41c83b0eu);
  EXPECT_EQ(f.w[2], 0xa20bc7c6u);
  EXPECT_EQ(f.w[3], 0x6d5451fdu);
}
