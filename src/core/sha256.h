// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: names the exact data a
// result was computed from (the GEMM model's training CSV, an operand read from a .npy file).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace wattlab {

std::string sha256_hex(std::string_view data);
inline std::string sha256_hex(const void* data, std::size_t bytes) {
  return sha256_hex(std::string_view(static_cast<const char*>(data), bytes));
}

}  // namespace wattlab
