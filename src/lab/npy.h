// GEMM operands from NumPy `.npy` files (docs/gemm-inputs.md, "Your own operands"): format
// versions 1.0, 2.0 and 3.0, little-endian, C or Fortran order, 2-D. The file's element type must
// be the operand's storage type (float32 '<f4', float16 '<f2', int8 '|i1'); bfloat16 and FP8, which
// NumPy lacks, come as their raw bits: '<u2', '<i2' or ml_dtypes' '<V2' ('|V2') for bfloat16;
// '|u1', '|i1' or ml_dtypes' '|V1' for FP8 (taken as the engine's FP8 format). Every problem with
// a file throws UsageError naming the file and the problem, so the CLI exits 2.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "lab/operand.h"

namespace wattlab::lab {

// What a .npy file's header says.
struct NpyHeader {
  int major_version = 1, minor_version = 0;
  std::string descr;           // NumPy's dtype string: "<f4", "|i1", "<V2"
  bool fortran_order = false;  // true: the first index varies fastest
  std::vector<int64_t> shape;
  std::size_t data_offset = 0;  // bytes from the start of the file to the first element
};

// Parses the header at the start of `bytes` (a whole file or at least its header). `name` is the
// file's name in error messages.
NpyHeader parse_npy_header(const std::byte* bytes, std::size_t size, const std::string& name);

// The header of a .npy file, read without its data: the shape a caller needs to infer M, N, K.
NpyHeader read_npy_header(const std::filesystem::path& path);

// The operand `shape.which` of dtype `shape.dtype` from a .npy file, in the lab's storage layout
// (operand.h: A row-major M x K, B column-major K x N), and the SHA-256 of the whole file.
struct NpyOperand {
  std::vector<std::byte> bytes;
  std::string file_sha256;  // 64 hex digits, as `sha256sum FILE` prints
};
NpyOperand load_npy_operand(const std::filesystem::path& path, const OperandShape& shape);
// The same from the bytes of a whole .npy file; `name` names it in error messages.
NpyOperand decode_npy_operand(std::vector<std::byte> file, const std::string& name, const OperandShape& shape);
// The operand without the hash.
std::vector<std::byte> read_npy_operand(const std::filesystem::path& path, const OperandShape& shape);

// Whether a .npy dtype string holds elements of `dtype` (the rules at the top of this file).
bool npy_descr_holds(std::string_view descr, DType dtype);
// What the reader accepts for `dtype`, for messages and docs: "'<u2' or '<i2' (raw bfloat16 bits) ...".
std::string npy_accepted_descrs(DType dtype);
// The dtype string write_npy uses for `dtype`'s storage: "<f4", "<f2", "<u2", "|u1", "|i1".
std::string_view npy_descr(DType dtype);

// Writes a .npy file of format version `major_version` (1, 2 or 3): `data` holds the elements in
// the order `fortran_order` says. Throws UsageError for a bad version or a size that does not match
// the shape, WattlabError (io) when the file cannot be written.
void write_npy(const std::filesystem::path& path, std::string_view descr, const std::vector<int64_t>& shape,
               const void* data, std::size_t bytes, bool fortran_order = false, int major_version = 1);

// The text that names a file operand in a point's labels: "file:<path> sha256:<first 16 hex digits>".
std::string npy_operand_label(const std::string& path, const std::string& file_sha256);

}  // namespace wattlab::lab
