#include "lab/engine.h"

#include <fmt/format.h>

namespace wattlab::lab {

// Bounds (docs/gemm-lab.md): u is the unit roundoff of the type that limits accuracy. Output
// rounding alone gives ~u/sqrt(3) RMS; the bound is ~4-10x that, so a wrong layout, a wrong
// type or a missing scale (errors of order 1) can never pass. FP16 accumulation adds
// ~u*K/sqrt(2) / sqrt(K) growth over K; TF32 truncates inputs to 10 mantissa bits.
const std::vector<EngineSpec>& all_engines() {
  static const std::vector<EngineSpec> engines = {
      {Engine::fp32, "fp32", DType::f32, DType::f32, OutType::f32, "CUBLAS_COMPUTE_32F", "FP32", 1, 1e-5, 50,
       "FP32 SIMT (no TF32)"},
      {Engine::tf32, "tf32", DType::f32, DType::f32, OutType::f32, "CUBLAS_COMPUTE_32F_FAST_TF32", "FP32", 1, 5e-3,
       400, "FP32 storage, TF32 tensor cores"},
      {Engine::fp16, "fp16", DType::f16, DType::f16, OutType::f16, "CUBLAS_COMPUTE_32F", "FP32", 1, 2e-3, 700,
       "FP16 tensor cores, FP32 accumulation"},
      {Engine::fp16acc16, "fp16acc16", DType::f16, DType::f16, OutType::f16, "CUBLAS_COMPUTE_16F", "FP16", 1, 3e-2,
       700, "FP16 tensor cores, FP16 accumulation (the original's setup)"},
      {Engine::bf16, "bf16", DType::bf16, DType::bf16, OutType::bf16, "CUBLAS_COMPUTE_32F", "FP32", 1, 1e-2, 700,
       "BF16 tensor cores, FP32 accumulation"},
      {Engine::fp8e4m3, "fp8e4m3", DType::f8_e4m3, DType::f8_e4m3, OutType::bf16, "CUBLAS_COMPUTE_32F", "FP32", 16,
       1e-2, 1400, "FP8 E4M3 x E4M3, scale 1, BF16 output"},
      {Engine::fp8e4m3f32, "fp8e4m3f32", DType::f8_e4m3, DType::f8_e4m3, OutType::f32, "CUBLAS_COMPUTE_32F", "FP32",
       16, 5e-3, 1400, "FP8 E4M3 x E4M3, scale 1, FP32 output"},
      {Engine::fp8e5m2, "fp8e5m2", DType::f8_e5m2, DType::f8_e4m3, OutType::bf16, "CUBLAS_COMPUTE_32F", "FP32", 16,
       1e-2, 1400, "FP8 A E5M2 x B E4M3 (E5M2 x E5M2 is unsupported by cuBLASLt), BF16 output"},
      {Engine::int8, "int8", DType::i8, DType::i8, OutType::i32, "CUBLAS_COMPUTE_32I", "INT32", 16, 0, 1400,
       "INT8 IMMA, INT32 accumulation and output (exact)"},
  };
  return engines;
}

const EngineSpec& spec(Engine e) {
  for (const auto& s : all_engines())
    if (s.engine == e) return s;
  return all_engines().front();
}

std::string_view to_string(Engine e) { return spec(e).name; }

Result<Engine> parse_engine(std::string_view name) {
  std::string names;
  for (const auto& s : all_engines()) {
    if (s.name == name) return s.engine;
    names += (names.empty() ? "" : ", ") + std::string(s.name);
  }
  return Error{ErrorKind::invalid_argument, fmt::format("unknown engine '{}'", name), "use one of: " + names};
}

Result<std::vector<Engine>> parse_engine_list(std::string_view list) {
  std::vector<Engine> out;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = list.find(',', pos);
    const std::string_view item = list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (item.empty()) return Error{ErrorKind::invalid_argument, fmt::format("empty engine name in '{}'", list), ""};
    auto e = parse_engine(item);
    if (!e) return e.error();
    bool seen = false;
    for (Engine x : out) seen = seen || x == *e;
    if (!seen) out.push_back(*e);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::optional<std::string> shape_problem(Engine e, int64_t m, int64_t n, int64_t k) {
  const EngineSpec& s = spec(e);
  if (m <= 0 || n <= 0 || k <= 0) return fmt::format("shape {}x{}x{}: every dimension must be positive", m, n, k);
  const int64_t q = s.dim_multiple;
  for (auto [dim, v] : {std::pair{'M', m}, std::pair{'N', n}, std::pair{'K', k}})
    if (v % q != 0)
      return fmt::format("engine {} needs M, N and K to be multiples of {} (cuBLASLt alignment on the TN layout); "
                         "{} = {} is not",
                         s.name, q, dim, v);
  return std::nullopt;
}

}  // namespace wattlab::lab
