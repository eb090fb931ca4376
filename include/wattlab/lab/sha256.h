// SHA-256 (FIPS 180-4) of a byte buffer: what names an operand read from a file in the point's
// labels, so that a stored result says which data it measured (`sha256sum FILE` gives the same).
#pragma once
#include <cstddef>
#include <string>

namespace wattlab::lab {

// The digest as 64 lowercase hex digits.
std::string sha256_hex(const void* data, std::size_t bytes);

}  // namespace wattlab::lab
