// Fuzzes the .npy operand reader (src/lab/npy.cpp, docs/gemm-inputs.md "Your own operands"): a
// file's bytes either give a header whose data starts inside the file, or a UsageError that names
// the file; a header that parses, read as an operand of its own 2-D shape and each dtype, gives
// exactly the operand's storage bytes or a UsageError naming the file, and never anything else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "wattlab/core/error.h"
#include "lab/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace wattlab::lab;
  using wattlab::fuzz::check;
  const std::string name = "fuzz.npy";
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  NpyHeader h;
  try {
    h = parse_npy_header(bytes, size, name);
  } catch (const wattlab::UsageError& e) {
    check(std::string(e.what()).rfind(name + ": ", 0) == 0, std::string("the error must name the file: ") + e.what());
    return 0;
  }
  check(h.data_offset <= size, "the data must start inside the file");
  check(h.major_version >= 1 && h.major_version <= 3 && h.minor_version == 0, "only versions 1.0-3.0 parse");
  if (h.shape.size() != 2 || h.shape[0] < 1 || h.shape[1] < 1 || h.shape[0] > 256 || h.shape[1] > 256) return 0;
  for (Operand which : {Operand::A, Operand::B})
    for (DType dtype : all_dtypes) {
      // The operand whose mathematical shape is the file's: A is M x K, B is K x N.
      OperandShape shape{which, 0, 0, 0, dtype};
      if (which == Operand::A) {
        shape.M = h.shape[0];
        shape.K = h.shape[1];
        shape.N = 1;
      } else {
        shape.K = h.shape[0];
        shape.N = h.shape[1];
        shape.M = 1;
      }
      try {
        const NpyOperand op = decode_npy_operand(std::vector<std::byte>(bytes, bytes + size), name, shape);
        check(op.bytes.size() == storage_bytes(shape), "an operand has exactly its storage bytes");
        check(npy_descr_holds(h.descr, dtype), "only a dtype the descr holds is read: " + h.descr);
        check(op.file_sha256.size() == 64, "the hash has 64 hex digits");
      } catch (const wattlab::UsageError& e) {
        check(std::string(e.what()).rfind(name + ": ", 0) == 0, std::string("the error must name the file: ") + e.what());
      }
    }
  return 0;
}
