#include <gtest/gtest.h>

#include <cmath>

#include "wattlab/core/error.h"
#include "lab/bit_stats.h"

using namespace wattlab::lab;

TEST(BitStats, HandComputedInt8) {
  // A is 2 x 3 (M=2, K=3), stored m*K + k:
  //   row 0: 0x00 0x01 0x03
  //   row 1: 0xFF 0x01 0x00
  const std::byte d[6] = {std::byte{0x00}, std::byte{0x01}, std::byte{0x03},
                          std::byte{0xFF}, std::byte{0x01}, std::byte{0x00}};
  const OperandShape a{Operand::A, 2, 5, 3, DType::i8};
  const BitStats s = bit_stats_cpu(d, a);
  EXPECT_EQ(s.elements, 6);
  EXPECT_EQ(s.popcount_sum, 0u + 1 + 2 + 8 + 1 + 0);
  EXPECT_DOUBLE_EQ(s.mean_popcount_bits, 12.0 / 6);
  EXPECT_EQ(s.zero_count, 2u);
  EXPECT_DOUBLE_EQ(s.zero_fraction, 2.0 / 6);
  EXPECT_EQ(s.distinct_values, 4);
  // along K: (00,01)=1 (01,03)=1 (FF,01)=7 (01,00)=1 -> 10 over 4 pairs
  EXPECT_EQ(s.hamming_k_pairs, 4u);
  EXPECT_DOUBLE_EQ(s.mean_hamming_along_k_bits, 10.0 / 4);
  // along M: (00,FF)=8 (01,01)=0 (03,00)=2 -> 10 over 3 pairs
  EXPECT_EQ(s.hamming_mn_pairs, 3u);
  EXPECT_DOUBLE_EQ(s.mean_hamming_along_mn_bits, 10.0 / 3);
}

TEST(BitStats, FloatZeroIncludesNegativeZeroAndNoPairsIsNaN) {
  const std::byte d[4] = {std::byte{0x00}, std::byte{0x80}, std::byte{0x00}, std::byte{0x00}};  // f16 -0, +0
  const OperandShape a{Operand::A, 2, 2, 1, DType::f16};
  const BitStats s = bit_stats_cpu(d, a);
  EXPECT_EQ(s.zero_count, 2u);
  EXPECT_EQ(s.distinct_values, 2);
  EXPECT_TRUE(std::isnan(s.mean_hamming_along_k_bits));  // K = 1
  EXPECT_DOUBLE_EQ(s.mean_hamming_along_mn_bits, 1.0);
}

TEST(BitStats, AbAgreementOverOverlap) {
  // A: M=2, K=2; B: N=3, K=2. Overlap: outer 0..1, all k -> 4 element pairs of 8 bits.
  const std::byte a[4] = {std::byte{0xFF}, std::byte{0x00}, std::byte{0x0F}, std::byte{0xAA}};
  const std::byte b[6] = {std::byte{0xFF}, std::byte{0xFF}, std::byte{0x00}, std::byte{0xAA},
                          std::byte{0x12}, std::byte{0x34}};
  const OperandShape sa{Operand::A, 2, 3, 2, DType::i8}, sb{Operand::B, 2, 3, 2, DType::i8};
  // equal bits: 8 + 0 + 4 + 8 = 20 of 32
  EXPECT_DOUBLE_EQ(ab_bit_agreement_cpu(a, sa, b, sb), 20.0 / 32);
  OperandShape other = sb;
  other.dtype = DType::f8_e4m3;
  EXPECT_THROW(ab_bit_agreement_cpu(a, sa, b, other), wattlab::UsageError);
}
