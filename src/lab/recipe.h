// Input recipes: a small pipeline language that says how to fill a GEMM operand
// (docs/gemm-inputs.md has the grammar and every stage's semantics), e.g.
//   normal(mean=0, std=1024) | sort(fraction=0.5, along=K) | zero(fraction=0.9)
// Stages run left to right: one source, then value stages on float64 values, then the values are
// converted to the storage dtype (round to nearest even) and bit stages act on the stored bits.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/core/error.h"
#include "lab/operand.h"

namespace wattlab::lab {

enum class StageKind {
  // sources (exactly one, first)
  normal,    // mean, stddev
  uniform,   // low, high: values in [low, high)
  constant,  // value
  // value stages (float64, before conversion)
  distinct,  // n: a pool of n values from the source; each element picks one (directly after normal/uniform)
  sort,      // fraction, along, scope: partial sort, the rest keeps its order
  zero,      // fraction: exactly round(fraction * count) elements set to 0, chosen at random
  sparse24,  // keep: 2 zeros in every group of 4 along K
  // bit stages (stored bits of the dtype)
  flip,            // n: flip n distinct random bit positions per element
  randomize_low,   // n: the n least significant bits become random
  randomize_high,  // n: the n most significant bits (sign first) become random
  zero_low,        // n: clear the n least significant bits
  zero_high,       // n: clear the n most significant bits
  xor_bits,        // mask: stored bits ^= mask
};

// Where sort places consecutive sorted values: along K (the contiguous dim), along MN (M for A,
// N for B: same text for both operands), or along M / N (valid only for A / B respectively).
enum class Along { K, MN, M, N };
// sort over the whole operand, or separately within each line along `along`.
enum class SortScope { matrix, line };
// sparse24: which 2 of every 4 survive.
enum class Keep24 { random, largest };

// One stage. Only the fields of its kind are meaningful (see StageKind); the others keep their
// defaults. Trivially copyable so the GPU code can take it as a kernel argument.
struct Stage {
  StageKind kind = StageKind::constant;
  double mean = 0.0, stddev = 1.0;  // normal
  double low = 0.0, high = 1.0;     // uniform
  double value = 0.0;               // constant
  double fraction = 1.0;            // sort, zero
  int64_t n = 0;                    // distinct (>= 1), bit stages (0..bits of the dtype)
  uint32_t mask = 0;                // xor_bits
  Along along = Along::MN;          // sort
  SortScope scope = SortScope::matrix;  // sort
  Keep24 keep = Keep24::random;     // sparse24
  int column = 0;                   // 1-based column of the stage name in the parsed text (0: built)
};

struct Recipe {
  std::vector<Stage> stages;  // stages[0] is the source
};

// Parses a recipe. A bad recipe gives ErrorKind::invalid_argument whose `what` is
//   bad recipe at column C: <what was expected or wrong>
//     <the text>
//     <caret under column C>
// (the CLI turns it into exit status 2).
Result<Recipe> parse_recipe(std::string_view text);

// Canonical text: every parameter of every stage written out, in a fixed order, numbers in their
// shortest round-trip form; parse_recipe(to_string(r)) gives r back (columns aside).
std::string to_string(const Recipe& recipe);
std::string_view to_string(StageKind kind);
std::string_view to_string(Along along);

// Checks the recipe against a shape (dims > 0, elements < 2^31, bit counts <= bits(dtype),
// along=M only for A and along=N only for B, sparse24 needs K % 4 == 0).
Status validate(const Recipe& recipe, const OperandShape& shape);

bool is_bit_stage(StageKind kind);

}  // namespace wattlab::lab
