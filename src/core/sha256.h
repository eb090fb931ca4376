// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: names the exact data a
// result was computed from (the GEMM model's training CSV).
#pragma once
#include <string>
#include <string_view>

namespace wattlab {

std::string sha256_hex(std::string_view data);

}  // namespace wattlab
