// Storage data types of GEMM operands in the input-power lab (docs/gemm-inputs.md).
#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace wattlab::lab {

// f8_e4m3 is the OCP "E4M3FN" format (no infinities, max 448); f8_e5m2 is IEEE-like (max 57344).
enum class DType { f32, f16, bf16, f8_e4m3, f8_e5m2, i8 };

inline constexpr std::array<DType, 6> all_dtypes = {DType::f32,     DType::f16,     DType::bf16,
                                                    DType::f8_e4m3, DType::f8_e5m2, DType::i8};

std::size_t size_bytes(DType dtype);
int bits(DType dtype);
bool is_float(DType dtype);  // every type but i8
// Canonical names: "f32", "f16", "bf16", "f8_e4m3", "f8_e5m2", "i8".
std::string_view to_string(DType dtype);
// Accepts the canonical names and the aliases fp32 float32 float fp16 half float16 bfloat16 fp8_e4m3
// e4m3 fp8_e5m2 e5m2 int8 (case-insensitive).
std::optional<DType> parse_dtype(std::string_view text);

}  // namespace wattlab::lab
