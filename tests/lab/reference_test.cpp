#include "lab/reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace wattlab::lab {
namespace {

std::vector<std::byte> encode_all(DType t, const std::vector<double>& v) {
  std::vector<std::byte> out(v.size() * size_bytes(t));
  for (std::size_t i = 0; i < v.size(); ++i) encode(t, v[i], out.data() + i * size_bytes(t));
  return out;
}

TEST(Reference, SmallGemmByHandInTnLayout) {
  // A (2x3, K contiguous) = [1 2 3; 4 5 6]; B (3x2, K contiguous per column) = [1 0; 0 1; 1 1].
  const auto a = encode_all(DType::f32, {1, 2, 3, 4, 5, 6});
  const auto b = encode_all(DType::f32, {1, 0, 1, 0, 1, 1});
  const auto c = reference_gemm(a, DType::f32, b, DType::f32, 2, 2, 3);
  // C column-major: C(0,0)=4, C(1,0)=10, C(0,1)=5, C(1,1)=11.
  EXPECT_EQ(c, (std::vector<double>{4, 10, 5, 11}));
  const std::vector<int64_t> rows{1}, cols{0, 1};
  EXPECT_EQ(reference_entries(a, DType::f32, b, DType::f32, 3, rows, cols), (std::vector<double>{10, 11}));
}

TEST(Reference, CompareBoundsAndNonFinite) {
  std::vector<double> ref{1, 2, 3, 4};
  auto ok = compare(std::vector<double>{1, 2, 3, 4.001}, ref, 1e-3);
  EXPECT_TRUE(ok.passed) << ok.verdict;
  EXPECT_NEAR(ok.rel_frobenius_error, 0.001 / std::sqrt(30.0), 1e-9);
  auto bad = compare(std::vector<double>{1, 2, 3, 4.1}, ref, 1e-3);
  EXPECT_FALSE(bad.passed);
  auto nan = compare(std::vector<double>{1, 2, NAN, 4}, ref, 1e9);
  EXPECT_FALSE(nan.passed);  // NaN never passes, whatever the bound
  EXPECT_DOUBLE_EQ(nan.nonfinite_fraction, 0.25);
  auto inf = compare(std::vector<double>{1, INFINITY, 3, 4}, ref, 1e9);
  EXPECT_FALSE(inf.passed);
  // Exact (INT8): one unit off fails, equality passes.
  EXPECT_FALSE(compare(std::vector<double>{1, 2, 3, 5}, ref, 0).passed);
  EXPECT_TRUE(compare(ref, ref, 0).passed);
}

// The documented bound of an engine holds for rounding its output type and fails for an error
// of the size a wrong layout or a missing scale would make.
TEST(Reference, OutputRoundingFitsTheBounds) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> nd(0, 1);
  const int64_t m = 48, n = 32, k = 256;
  for (const auto& s : all_engines()) {
    std::vector<double> av(static_cast<std::size_t>(m * k)), bv(static_cast<std::size_t>(k * n));
    for (auto& x : av) x = s.a == DType::i8 ? std::round(nd(rng) * 20) : nd(rng);
    for (auto& x : bv) x = s.b == DType::i8 ? std::round(nd(rng) * 20) : nd(rng);
    const auto a = encode_all(s.a, av), b = encode_all(s.b, bv);
    const auto ref = reference_gemm(a, s.a, b, s.b, m, n, k);
    std::vector<double> out(ref.size());
    std::vector<std::byte> buf(4);
    for (std::size_t i = 0; i < ref.size(); ++i) {
      if (s.out == OutType::i32) out[i] = ref[i];
      else {
        const DType t = s.out == OutType::f32 ? DType::f32 : s.out == OutType::f16 ? DType::f16 : DType::bf16;
        encode(t, ref[i], buf.data());
        out[i] = decode(t, buf.data());
      }
    }
    const auto acc = compare(out, ref, s.rel_error_bound);
    EXPECT_TRUE(acc.passed) << s.name << ": " << acc.verdict;
    std::vector<double> wrong(ref.rbegin(), ref.rend());  // a transposed/misread output
    EXPECT_FALSE(compare(wrong, ref, s.rel_error_bound).passed) << s.name;
  }
}

}  // namespace
}  // namespace wattlab::lab
