#include "lab/reference.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace wattlab::lab {
namespace {

std::vector<double> decode_all(std::span<const std::byte> bytes, DType t, std::size_t count) {
  std::vector<double> v(count);
  const std::size_t sz = size_bytes(t);
  if (bytes.size() < count * sz) throw std::invalid_argument("reference: operand buffer is smaller than its shape");
  for (std::size_t i = 0; i < count; ++i) v[i] = decode(t, bytes.data() + i * sz);
  return v;
}

}  // namespace

std::vector<double> reference_gemm(std::span<const std::byte> a, DType a_type, std::span<const std::byte> b,
                                   DType b_type, int64_t m, int64_t n, int64_t k) {
  const auto mm = static_cast<std::size_t>(m), nn = static_cast<std::size_t>(n), kk = static_cast<std::size_t>(k);
  const std::vector<double> av = decode_all(a, a_type, mm * kk);
  const std::vector<double> bv = decode_all(b, b_type, kk * nn);
  std::vector<double> c(mm * nn);
  for (std::size_t j = 0; j < nn; ++j) {
    const double* bj = bv.data() + j * kk;
    for (std::size_t i = 0; i < mm; ++i) {
      const double* ai = av.data() + i * kk;
      double s = 0;
      for (std::size_t q = 0; q < kk; ++q) s += ai[q] * bj[q];
      c[i + j * mm] = s;
    }
  }
  return c;
}

std::vector<double> reference_entries(std::span<const std::byte> a, DType a_type, std::span<const std::byte> b,
                                      DType b_type, int64_t k, std::span<const int64_t> rows,
                                      std::span<const int64_t> cols) {
  const auto kk = static_cast<std::size_t>(k);
  const std::size_t as = size_bytes(a_type), bs = size_bytes(b_type);
  std::vector<double> out;
  out.reserve(rows.size() * cols.size());
  std::vector<double> bcol(kk);
  std::vector<std::vector<double>> arows(rows.size(), std::vector<double>(kk));
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t q = 0; q < kk; ++q)
      arows[r][q] = decode(a_type, a.data() + (static_cast<std::size_t>(rows[r]) * kk + q) * as);
  std::vector<double> c(rows.size() * cols.size());
  for (std::size_t cj = 0; cj < cols.size(); ++cj) {
    for (std::size_t q = 0; q < kk; ++q)
      bcol[q] = decode(b_type, b.data() + (static_cast<std::size_t>(cols[cj]) * kk + q) * bs);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      double s = 0;
      for (std::size_t q = 0; q < kk; ++q) s += arows[r][q] * bcol[q];
      c[r * cols.size() + cj] = s;
    }
  }
  return c;
}

std::vector<double> decode_output(std::span<const std::byte> c, OutType out, std::size_t count) {
  const std::size_t sz = size_bytes(out);
  if (c.size() < count * sz) throw std::invalid_argument("decode_output: buffer is smaller than its shape");
  std::vector<double> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = decode(out, c.data() + i * sz);
  return v;
}

Accuracy compare(std::span<const double> c, std::span<const double> c_ref, double bound) {
  Accuracy r;
  r.bound = bound;
  r.exact_required = bound == 0;
  r.entries = c.size();
  if (c.size() != c_ref.size() || c.empty()) {
    r.rel_frobenius_error = std::numeric_limits<double>::quiet_NaN();
    r.verdict = fmt::format("C has {} entries, the reference {}", c.size(), c_ref.size());
    return r;
  }
  double diff2 = 0, ref2 = 0;
  std::size_t nonfinite = 0, unequal = 0;
  bool nan = false;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!std::isfinite(c[i])) {
      ++nonfinite;
      nan = nan || std::isnan(c[i]);
    }
    const double d = c[i] - c_ref[i];
    if (c[i] != c_ref[i]) ++unequal;
    diff2 += d * d;
    ref2 += c_ref[i] * c_ref[i];
    if (std::fabs(d) > r.max_abs_error || std::isnan(d)) r.max_abs_error = std::isnan(d) ? d : std::fabs(d);
  }
  r.nonfinite_fraction = static_cast<double>(nonfinite) / static_cast<double>(c.size());
  if (nan) r.rel_frobenius_error = std::numeric_limits<double>::quiet_NaN();
  else if (ref2 > 0) r.rel_frobenius_error = std::sqrt(diff2 / ref2);
  else r.rel_frobenius_error = diff2 == 0 ? 0 : std::numeric_limits<double>::infinity();
  if (nonfinite > 0) {
    r.verdict = fmt::format("{} of {} entries are not finite", nonfinite, c.size());
  } else if (r.exact_required) {
    r.passed = unequal == 0;
    r.verdict = r.passed ? "pass (bit-exact)" : fmt::format("{} of {} entries differ; exact required", unequal, c.size());
  } else {
    r.passed = r.rel_frobenius_error <= bound;  // false for NaN
    r.verdict = r.passed ? "pass" : fmt::format("relative error {:.3g} exceeds the bound {:.3g}", r.rel_frobenius_error, bound);
  }
  return r;
}

}  // namespace wattlab::lab
