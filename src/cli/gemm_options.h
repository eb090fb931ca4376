// Options every `wattlab gemm` subcommand shares (executor, store, protocol, fidelity mode) and
// the parsing of the lists they take (engines, shapes, seeds, experiments). Bad input throws
// UsageError naming the bad part (exit 2).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wattlab/core/error.h"
#include "lab/engine.h"
#include "lab/plan.h"
#include "lab/protocol.h"

namespace CLI {
class App;
}

namespace wattlab::cli {

struct GemmDeviceOptions {
  std::string device = "auto";    // auto | sim | nvml
  int cuda_device = 0;            // CUDA ordinal the GEMMs run on
  std::vector<std::string> gpus;  // NVML GPUs the meter reads (default: CUDA_VISIBLE_DEVICES, else all)
  uint64_t sim_seed = 1;          // the SIMULATED board's seed
};

struct GemmProtocolFlags {
  double window_s = 10;
  double warmup_min_s = 2;         // later points of a run
  double first_warmup_min_s = 10;  // the first point of a run (a cold GPU)
  double warmup_max_s = 60;
  double max_drift_c = 1;
  bool fidelity = false;           // the original paper's setup (docs/gemm-cli.md)
};

void add_gemm_device_options(CLI::App& sub, GemmDeviceOptions& o);
// --window-s, --warmup-max-s, --max-drift-c, --fidelity and the warm-up minimum: --warmup-min-s
// for one point, --warmup-s and --first-warmup-s for a sweep.
void add_gemm_protocol_options(CLI::App& sub, GemmProtocolFlags& o, bool sweep);

// The measurement protocol the flags ask for (fidelity: no warm-up).
lab::ProtocolOptions protocol_options(const GemmProtocolFlags& f);
// The time model for estimates and the budget, from the same flags.
lab::TimeModel time_model(const GemmProtocolFlags& f);

// Throws UsageError for an invalid_argument error (with its hint), WattlabError otherwise.
[[noreturn]] void throw_error(const Error& e, const std::string& context);
template <class T>
T usage_or_value(Result<T> r, const std::string& context) {
  if (!r) throw_error(r.error(), context);
  return std::move(*r);
}

std::vector<lab::Engine> parse_engines(const std::string& list);  // "bf16,fp16" or "all"
std::vector<lab::Shape> parse_shapes(const std::string& list);
std::vector<uint64_t> parse_seeds(const std::string& list);       // "1,2,3"
std::vector<std::string> parse_experiments(const std::string& list);  // "E3,E5" or "all"

// Checks a recipe's text and its fit to the shape of operand `a_operand ? A : B` of `engine`.
void check_recipe(const std::string& text, bool a_operand, lab::Engine engine, const lab::Shape& shape);
// Checks that `engine` can run `shape` (FP8/INT8 need multiples of 16).
void check_shape(lab::Engine engine, const lab::Shape& shape);

// --a / --b: operands from .npy files instead of recipes (docs/gemm-inputs.md, "Your own operands").
// The GEMM shape the files give when --shape is not: M and K from --a (M x K), K and N from --b
// (K x N); with one file, the dimension it lacks equals its other outer one (N = M, or M = N).
// Throws UsageError for a file that is not a 2-D .npy, or files whose K differ.
lab::Shape shape_from_operand_files(const std::string& file_a, const std::string& file_b);
// Reads each given file as its operand of `spec` (its engine's dtype, its shape), and sets the
// spec's file, its SHA-256 and the label in place of the recipe. Throws UsageError naming the flag,
// the engine, the file and the problem.
void attach_operand_files(lab::GemmSpec& spec, const std::string& file_a, const std::string& file_b);

// The canonical fidelity shape: 2048^3 (docs/gemm-cli.md).
inline constexpr int64_t kFidelityDim = 2048;

}  // namespace wattlab::cli
