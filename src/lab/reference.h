// The float64 CPU reference GEMM and the accuracy verdict every engine is held to.
// Layout (TN, as the engines): A is M x K with K contiguous, B is K x N with K contiguous,
// C is M x N column-major (element (i, j) at i + j*M).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lab/engine.h"

namespace wattlab::lab {

// C_ref(i, j) = sum_k A(i, k) * B(k, j) in float64 over the stored values of A and B.
std::vector<double> reference_gemm(std::span<const std::byte> a, DType a_type, std::span<const std::byte> b,
                                   DType b_type, int64_t m, int64_t n, int64_t k);
// Only the entries (rows[r], cols[c]) of C_ref, row-major in r then c: a spot check of big shapes.
std::vector<double> reference_entries(std::span<const std::byte> a, DType a_type, std::span<const std::byte> b,
                                      DType b_type, int64_t k, std::span<const int64_t> rows,
                                      std::span<const int64_t> cols);

// An engine's output C (stored as `out`) decoded to double, column-major M x N.
std::vector<double> decode_output(std::span<const std::byte> c, OutType out, std::size_t count);

struct Accuracy {
  double rel_frobenius_error = 0;  // ||C - C_ref||_F / ||C_ref||_F; NaN when C holds NaN
  double max_abs_error = 0;
  double nonfinite_fraction = 0;   // share of C entries that are inf or NaN
  std::size_t entries = 0;
  double bound = 0;                // the engine's rel_error_bound
  bool exact_required = false;     // bound 0: every entry must equal the reference
  bool passed = false;
  std::string verdict;             // "pass", or why not: "12 of 4096 entries are not finite"
};

// Compares C against C_ref. NaN or inf never passes; bound 0 demands equality entry by entry.
Accuracy compare(std::span<const double> c, std::span<const double> c_ref, double bound);

}  // namespace wattlab::lab
