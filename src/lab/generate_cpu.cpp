// The CPU reference generator: element-wise parts from elementwise.h (shared with the GPU), sorts
// by (value key, position) so that ties break identically to the GPU's stable radix sorts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "elementwise.h"
#include "lab/generate.h"

namespace wattlab::lab {
namespace {

using detail::orderable;
using detail::seq_to_storage;

int64_t count_of(double fraction, int64_t total) {
  return static_cast<int64_t>(std::floor(fraction * static_cast<double>(total) + 0.5));
}

void sort_cpu(std::vector<double>& v, const Stage& s, int64_t outer_n, int64_t K) {
  const int64_t n = static_cast<int64_t>(v.size());
  const bool along_k = s.along == Along::K;
  const int64_t line = along_k ? K : outer_n;
  const int64_t seg_len = s.scope == SortScope::matrix ? n : line;
  const int64_t kk = count_of(s.fraction, seg_len);
  if (kk == 0) return;
  std::vector<double> out(v);
  std::vector<std::pair<uint64_t, uint32_t>> keyed(static_cast<std::size_t>(seg_len));
  std::vector<char> chosen(static_cast<std::size_t>(seg_len));
  for (int64_t seg = 0; seg < n / seg_len; ++seg) {
    const int64_t base = seg * seg_len;
    for (int64_t j = 0; j < seg_len; ++j)
      keyed[j] = {orderable(v[seq_to_storage(base + j, along_k, outer_n, K)]), static_cast<uint32_t>(j)};
    std::partial_sort(keyed.begin(), keyed.begin() + kk, keyed.end());
    std::fill(chosen.begin(), chosen.end(), 0);
    int64_t p = 0;
    for (; p < kk; ++p) {
      chosen[keyed[p].second] = 1;
      out[seq_to_storage(base + p, along_k, outer_n, K)] = v[seq_to_storage(base + keyed[p].second, along_k, outer_n, K)];
    }
    for (int64_t j = 0; j < seg_len; ++j)  // the rest keeps its order
      if (!chosen[j]) out[seq_to_storage(base + p++, along_k, outer_n, K)] = v[seq_to_storage(base + j, along_k, outer_n, K)];
  }
  v.swap(out);
}

void zero_cpu(std::vector<double>& v, const Stage& s, uint64_t seed, uint32_t op, uint32_t step) {
  const int64_t n = static_cast<int64_t>(v.size());
  const int64_t kk = count_of(s.fraction, n);
  if (kk == 0) return;
  std::vector<std::pair<uint64_t, uint32_t>> pri(static_cast<std::size_t>(n));
  const uint32_t stream = rng::stream_id(op, step, 0);
  for (int64_t i = 0; i < n; ++i) pri[i] = {rng::word64(seed, stream, static_cast<uint64_t>(i)), static_cast<uint32_t>(i)};
  if (kk < n) std::nth_element(pri.begin(), pri.begin() + kk, pri.end());
  for (int64_t r = 0; r < kk; ++r) v[pri[r].second] = 0.0;
}

void sparse24_cpu(std::vector<double>& v, const Stage& s, uint64_t seed, uint32_t op, uint32_t step) {
  for (std::size_t g = 0; g < v.size() / 4; ++g) {
    const uint32_t zm = detail::sparse24_zero_mask(s, &v[4 * g], seed, op, step, g);
    for (int q = 0; q < 4; ++q)
      if (zm & (1u << q)) v[4 * g + q] = 0.0;
  }
}

}  // namespace

std::vector<std::byte> generate_cpu(const Recipe& recipe, const OperandShape& shape, uint64_t seed) {
  if (Status st = validate(recipe, shape); !st) throw UsageError(st.error().message());
  const uint32_t op = shape.which == Operand::A ? 0u : 1u;
  const int64_t n = elements(shape), outer_n = outer(shape), K = shape.K;
  const std::vector<Stage>& st = recipe.stages;
  const Stage* distinct = st.size() > 1 && st[1].kind == StageKind::distinct ? &st[1] : nullptr;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = detail::initial_value(st[0], distinct, seed, op, static_cast<uint64_t>(i));
  std::size_t step = distinct ? 2 : 1;
  for (; step < st.size() && !is_bit_stage(st[step].kind); ++step) {
    const auto s32 = static_cast<uint32_t>(step);
    switch (st[step].kind) {
      case StageKind::sort: sort_cpu(v, st[step], outer_n, K); break;
      case StageKind::zero: zero_cpu(v, st[step], seed, op, s32); break;
      case StageKind::sparse24: sparse24_cpu(v, st[step], seed, op, s32); break;
      default: break;
    }
  }
  const std::size_t first_bit = step;
  const int w = bits(shape.dtype);
  const std::size_t bytes = size_bytes(shape.dtype);
  std::vector<std::byte> out(static_cast<std::size_t>(n) * bytes);
  for (int64_t i = 0; i < n; ++i) {
    uint32_t x = convert::encode(v[i], shape.dtype);
    for (std::size_t b = first_bit; b < st.size(); ++b)
      x = detail::apply_bits(st[b], x, w, seed, op, static_cast<uint32_t>(b), static_cast<uint64_t>(i));
    for (std::size_t q = 0; q < bytes; ++q) out[static_cast<std::size_t>(i) * bytes + q] = static_cast<std::byte>(x >> (8 * q));
  }
  return out;
}

}  // namespace wattlab::lab
