// The GEMM engines of the lab (cuBLASLt configurations) as plain data: operand and output types,
// accumulation, alignment, and the documented accuracy bound of each against a float64 reference.
// CPU code: the CLI, the planner, the simulated executor and the tests use it without CUDA.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/core/error.h"
#include "lab/dtype.h"
#include "lab/number_format.h"

namespace wattlab::lab {

enum class Engine {
  fp32,       // FP32 storage, CUBLAS_COMPUTE_32F (no TF32): the SIMT SGEMM path
  tf32,       // FP32 storage, CUBLAS_COMPUTE_32F_FAST_TF32: tensor cores
  fp16,       // FP16 in/out, FP32 accumulation (CUBLAS_COMPUTE_32F)
  fp16acc16,  // FP16 in/out, FP16 accumulation (CUBLAS_COMPUTE_16F): the original's setup
  bf16,       // BF16 in/out, FP32 accumulation
  fp8e4m3,    // A, B E4M3; FP32 accumulation; BF16 output
  fp8e4m3f32, // A, B E4M3; FP32 accumulation; FP32 output
  fp8e5m2,    // A E5M2, B E4M3 (E5M2 x E5M2 is not a cuBLASLt combination on Hopper); BF16 output
  int8,       // INT8 in, INT32 accumulation and output (IMMA)
};

struct EngineSpec {
  Engine engine;
  std::string_view name;        // CLI name: "bf16"
  DType a, b;                   // operand types
  OutType out;                  // type of C
  std::string_view compute;     // the cuBLASLt compute type
  std::string_view accumulate;  // "FP32", "FP16", "INT32"
  // Every one of M, N, K must be a multiple of this (cuBLASLt's 16-byte rules for FP8/INT8 on
  // the TN layout); 1: any shape.
  int64_t dim_multiple;
  // Largest relative Frobenius error ||C - C_ref||_F / ||C_ref||_F accepted against the float64
  // reference on N(0,1) inputs with K <= 4096 (docs/gemm-lab.md derives each). 0: bit-exact.
  double rel_error_bound;
  double sim_tflops;            // SIMULATED executor's throughput, not a measurement
  std::string_view note;
};

const std::vector<EngineSpec>& all_engines();
const EngineSpec& spec(Engine e);
std::string_view to_string(Engine e);
// "bf16" -> Engine; an unknown name is an invalid_argument error listing the accepted ones.
Result<Engine> parse_engine(std::string_view name);
// "bf16,fp16" -> engines, in order, without duplicates.
Result<std::vector<Engine>> parse_engine_list(std::string_view list);

// Why `e` cannot run M x N x K (a dimension off its multiple, or not positive); empty when it can.
std::optional<std::string> shape_problem(Engine e, int64_t m, int64_t n, int64_t k);

inline double gemm_flops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

}  // namespace wattlab::lab
