// The SIMULATED executor: GEMM points on the simulated GPU (docs/sim.md) and a virtual clock, with
// a power that grows with the operands' bit statistics, which each point also reports. For tests
// and demos; every output it produces is labelled SIMULATED.
#pragma once
#include <memory>
#include <vector>

#include "lab/executor.h"

namespace wattlab::lab {

struct SimExecutorOptions {
  double slot_s = 80;    // virtual time reserved per point (>= warm-up max + window + 3 s)
  uint64_t sim_seed = 1;
  // Bit statistics of a recipe's operand from a generated sample of at most this many elements;
  // an operand from a file: all of it.
  int64_t max_stats_elements = 1 << 16;
};

// Switching activity 0..1 of the sim's "gemm" segment from the bit statistics of A and B.
double sim_activity(double hamming_frac, double popcount_frac);

// `planned` are the points in the order prepare() will be called with them.
Result<std::unique_ptr<GemmExecutor>> make_sim_executor(std::vector<GemmSpec> planned, SimExecutorOptions opt = {});

}  // namespace wattlab::lab
