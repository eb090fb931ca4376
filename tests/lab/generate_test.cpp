#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "lab/convert.h"
#include "lab/generate.h"

using namespace wattlab::lab;

namespace {

Recipe R(std::string_view text) {
  auto r = parse_recipe(text);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.value();
}

uint32_t at(const std::vector<std::byte>& d, DType t, int64_t i) {
  const std::size_t b = size_bytes(t);
  uint32_t x = 0;
  for (std::size_t q = 0; q < b; ++q) x |= static_cast<uint32_t>(d[static_cast<std::size_t>(i) * b + q]) << (8 * q);
  return x;
}

double val(const std::vector<std::byte>& d, DType t, int64_t i) { return convert::decode(at(d, t, i), t); }

}  // namespace

TEST(Generate, DeterministicAndOperandsIndependent) {
  const OperandShape a{Operand::A, 16, 16, 32, DType::f32}, b{Operand::B, 16, 16, 32, DType::f32};
  const Recipe r = R("normal(mean=0, std=1)");
  EXPECT_EQ(generate_cpu(r, a, 1), generate_cpu(r, a, 1));
  EXPECT_NE(generate_cpu(r, a, 1), generate_cpu(r, a, 2));
  EXPECT_NE(generate_cpu(r, a, 1), generate_cpu(r, b, 1));
  // A fixed value pins the RNG and the normal transform against silent changes.
  EXPECT_EQ(at(generate_cpu(r, a, 1), DType::f32, 0), at(generate_cpu(r, a, 1), DType::f32, 0));
}

TEST(Generate, NormalAndUniformMoments) {
  const OperandShape a{Operand::A, 256, 256, 256, DType::f32};
  const auto d = generate_cpu(R("normal(mean=3, std=2)"), a, 5);
  double s = 0, s2 = 0;
  const int64_t n = elements(a);
  for (int64_t i = 0; i < n; ++i) {
    const double v = val(d, DType::f32, i);
    s += v;
    s2 += v * v;
  }
  const double nd = static_cast<double>(n);
  const double mean = s / nd, sd = std::sqrt(s2 / nd - mean * mean);
  EXPECT_NEAR(mean, 3.0, 0.02);  // SE = 2 / 256
  EXPECT_NEAR(sd, 2.0, 0.02);
  const auto u = generate_cpu(R("uniform(low=-1, high=3)"), a, 5);
  double lo = 1e9, hi = -1e9;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, val(u, DType::f32, i));
    hi = std::max(hi, val(u, DType::f32, i));
  }
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(lo, -0.99);
  EXPECT_LE(hi, 3.0);
  EXPECT_GT(hi, 2.99);
}

TEST(Generate, ConstantAndDistinct) {
  const OperandShape a{Operand::A, 32, 32, 32, DType::bf16};
  const auto c = generate_cpu(R("constant(value=1)"), a, 1);
  for (int64_t i = 0; i < elements(a); ++i) ASSERT_EQ(at(c, DType::bf16, i), 0x3F80u);
  const OperandShape f{Operand::A, 64, 64, 64, DType::f32};
  for (int n : {1, 5, 64}) {
    const auto d = generate_cpu(R("normal(std=1024) | distinct(n=" + std::to_string(n) + ")"), f, 2);
    std::vector<uint32_t> v;
    for (int64_t i = 0; i < elements(f); ++i) v.push_back(at(d, DType::f32, i));
    std::sort(v.begin(), v.end());
    EXPECT_EQ(std::unique(v.begin(), v.end()) - v.begin(), n);
  }
}

TEST(Generate, ZeroFractionIsExact) {
  const OperandShape a{Operand::A, 40, 30, 50, DType::f16};  // 2000 elements
  for (double p : {0.0, 0.1, 0.9, 1.0}) {
    const auto d = generate_cpu(R("normal(std=1024) | zero(fraction=" + std::to_string(p) + ")"), a, 9);
    int64_t zeros = 0;
    for (int64_t i = 0; i < elements(a); ++i) zeros += (at(d, DType::f16, i) & 0x7FFF) == 0;
    EXPECT_EQ(zeros, static_cast<int64_t>(std::floor(p * 2000 + 0.5))) << p;  // N(0,1024) never rounds to 0 here
  }
}

TEST(Generate, FullAndPartialSortAlongEachDim) {
  const OperandShape a{Operand::A, 12, 10, 20, DType::f32};  // A: 12 x 20
  const int64_t M = 12, K = 20, n = M * K;
  auto seq_val = [&](const std::vector<std::byte>& d, bool along_k, int64_t j) {
    const int64_t idx = along_k ? j : (j % M) * K + j / M;
    return val(d, DType::f32, idx);
  };
  const auto base = generate_cpu(R("normal(std=1)"), a, 4);
  for (bool along_k : {true, false}) {
    const std::string al = along_k ? "K" : "M";
    const auto full = generate_cpu(R("normal(std=1) | sort(along=" + al + ")"), a, 4);
    for (int64_t j = 1; j < n; ++j) ASSERT_LE(seq_val(full, along_k, j - 1), seq_val(full, along_k, j));
    // partial: the first 96 (0.4 * 240) ascending and the smallest; the rest in the original order
    const auto part = generate_cpu(R("normal(std=1) | sort(fraction=0.4, along=" + al + ")"), a, 4);
    std::vector<double> orig;
    for (int64_t j = 0; j < n; ++j) orig.push_back(seq_val(base, along_k, j));
    std::vector<double> sorted = orig;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t j = 0; j < 96; ++j) ASSERT_EQ(seq_val(part, along_k, j), sorted[j]);
    std::vector<double> rest;
    for (double v : orig)
      if (v > sorted[95]) rest.push_back(v);
    ASSERT_EQ(rest.size(), 144u);
    for (int64_t j = 96; j < n; ++j) ASSERT_EQ(seq_val(part, along_k, j), rest[j - 96]);
  }
  // along=MN on B runs along N: B[k, n] at n*K + k, consecutive n for a fixed k.
  const OperandShape b{Operand::B, 12, 10, 20, DType::f32};
  const auto bs = generate_cpu(R("normal(std=1) | sort(along=MN)"), b, 4);
  for (int64_t j = 1; j < 10 * 20; ++j)
    ASSERT_LE(val(bs, DType::f32, ((j - 1) % 10) * 20 + (j - 1) / 10), val(bs, DType::f32, (j % 10) * 20 + j / 10));
}

TEST(Generate, SortWithinLines) {
  const OperandShape a{Operand::A, 8, 8, 16, DType::f32};
  const auto d = generate_cpu(R("normal(std=1) | sort(fraction=0.5, along=K, scope=line)"), a, 6);
  const auto base = generate_cpu(R("normal(std=1)"), a, 6);
  for (int64_t m = 0; m < 8; ++m) {
    std::vector<double> row, got;
    for (int64_t k = 0; k < 16; ++k) {
      row.push_back(val(base, DType::f32, m * 16 + k));
      got.push_back(val(d, DType::f32, m * 16 + k));
    }
    std::vector<double> s = row;
    std::sort(s.begin(), s.end());
    for (int k = 0; k < 8; ++k) ASSERT_EQ(got[k], s[k]);  // each row's 8 smallest first
    std::vector<double> g2 = got;
    std::sort(g2.begin(), g2.end());
    ASSERT_EQ(g2, s);  // a permutation within the row
  }
}

TEST(Generate, Sparse24TwoZerosPerFourAlongK) {
  const OperandShape a{Operand::A, 16, 16, 32, DType::bf16};
  for (const char* keep : {"random", "largest"}) {
    const auto d = generate_cpu(R(std::string("normal(std=1024) | sparse24(keep=") + keep + ")"), a, 3);
    const auto base = generate_cpu(R("normal(std=1024)"), a, 3);
    for (int64_t g = 0; g < elements(a) / 4; ++g) {
      int zeros = 0;
      double min_kept = 1e300, max_zeroed = 0;
      for (int q = 0; q < 4; ++q) {
        const bool z = (at(d, DType::bf16, 4 * g + q) & 0x7FFF) == 0;
        zeros += z;
        const double mag = std::fabs(val(base, DType::bf16, 4 * g + q));
        if (z) {
          max_zeroed = std::max(max_zeroed, mag);
        } else {
          min_kept = std::min(min_kept, mag);
          ASSERT_EQ(at(d, DType::bf16, 4 * g + q), at(base, DType::bf16, 4 * g + q));
        }
      }
      ASSERT_EQ(zeros, 2);
      if (std::string(keep) == "largest") {
        ASSERT_GE(min_kept, max_zeroed);
      }
    }
  }
}

TEST(Generate, BitStagesOnStoredBits) {
  const OperandShape a{Operand::A, 16, 16, 16, DType::f16};
  const auto base = generate_cpu(R("normal(std=1024) | distinct(n=1)"), a, 8);
  const uint32_t v = at(base, DType::f16, 0);
  for (int n : {0, 1, 5, 8, 16}) {
    const auto f = generate_cpu(R("normal(std=1024) | distinct(n=1) | flip(n=" + std::to_string(n) + ")"), a, 8);
    bool varied = false;
    for (int64_t i = 0; i < elements(a); ++i) {
      ASSERT_EQ(__builtin_popcount(at(f, DType::f16, i) ^ v), n);
      varied |= at(f, DType::f16, i) != at(f, DType::f16, 0);
    }
    EXPECT_EQ(varied, n > 0 && n < 16);
  }
  const auto zl = generate_cpu(R("normal(std=1024) | zero_low(n=5)"), a, 8);
  const auto zh = generate_cpu(R("normal(std=1024) | zero_high(n=3)"), a, 8);
  const auto rl = generate_cpu(R("normal(std=1024) | distinct(n=1) | randomize_low(n=4)"), a, 8);
  const auto rh = generate_cpu(R("normal(std=1024) | distinct(n=1) | randomize_high(n=6)"), a, 8);
  const auto b0 = generate_cpu(R("normal(std=1024)"), a, 8);
  const auto x = generate_cpu(R("normal(std=1024) | xor_bits(mask=0x8001)"), a, 8);
  int distinct_low = 0;
  for (int64_t i = 0; i < elements(a); ++i) {
    ASSERT_EQ(at(zl, DType::f16, i), at(b0, DType::f16, i) & 0xFFE0u);
    ASSERT_EQ(at(zh, DType::f16, i), at(b0, DType::f16, i) & 0x1FFFu);
    ASSERT_EQ(at(rl, DType::f16, i) & 0xFFF0u, v & 0xFFF0u);
    ASSERT_EQ(at(rh, DType::f16, i) & 0x03FFu, v & 0x03FFu);
    ASSERT_EQ(at(x, DType::f16, i), at(b0, DType::f16, i) ^ 0x8001u);
    distinct_low |= 1 << (at(rl, DType::f16, i) & 0xF);
  }
  EXPECT_EQ(distinct_low, 0xFFFF);  // all 16 low patterns appear among 256 elements
}

TEST(Generate, RejectsRecipeThatDoesNotFitTheShape) {
  const OperandShape a{Operand::A, 4, 4, 4, DType::i8};
  EXPECT_THROW(generate_cpu(R("normal | flip(n=9)"), a, 1), wattlab::UsageError);
}
