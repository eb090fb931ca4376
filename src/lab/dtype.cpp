#include "lab/dtype.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace wattlab::lab {

std::size_t size_bytes(DType dtype) { return static_cast<std::size_t>(bits(dtype) / 8); }

int bits(DType dtype) {
  switch (dtype) {
    case DType::f32: return 32;
    case DType::f16:
    case DType::bf16: return 16;
    case DType::f8_e4m3:
    case DType::f8_e5m2:
    case DType::i8: return 8;
  }
  return 0;
}

bool is_float(DType dtype) { return dtype != DType::i8; }

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f8_e4m3: return "f8_e4m3";
    case DType::f8_e5m2: return "f8_e5m2";
    case DType::i8: return "i8";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view text) {
  std::string t(text);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  struct Alias {
    const char* name;
    DType dtype;
  };
  static constexpr Alias aliases[] = {
      {"f32", DType::f32},         {"fp32", DType::f32},         {"float32", DType::f32},
      {"float", DType::f32},       {"f16", DType::f16},          {"fp16", DType::f16},
      {"half", DType::f16},        {"float16", DType::f16},      {"bf16", DType::bf16},
      {"bfloat16", DType::bf16},   {"f8_e4m3", DType::f8_e4m3},  {"fp8_e4m3", DType::f8_e4m3},
      {"e4m3", DType::f8_e4m3},    {"f8_e5m2", DType::f8_e5m2},  {"fp8_e5m2", DType::f8_e5m2},
      {"e5m2", DType::f8_e5m2},    {"i8", DType::i8},            {"int8", DType::i8},
  };
  for (const Alias& a : aliases)
    if (t == a.name) return a.dtype;
  return std::nullopt;
}

}  // namespace wattlab::lab
