#include "lab/operand_file.h"

#include <fmt/format.h>

#include "lab/npy.h"

namespace wattlab::lab {

const std::string& operand_file(const GemmSpec& spec, Operand which) {
  return which == Operand::A ? spec.file_a : spec.file_b;
}

Result<std::vector<std::byte>> load_operand_file(const GemmSpec& spec, const OperandShape& shape) {
  const std::string& path = operand_file(spec, shape.which);
  const std::string& planned = shape.which == Operand::A ? spec.file_sha256_a : spec.file_sha256_b;
  try {
    NpyOperand op = load_npy_operand(path, shape);
    if (!planned.empty() && op.file_sha256 != planned)
      return Error{ErrorKind::invalid_argument,
                   fmt::format("{}: the file changed after the point was planned (SHA-256 {}, planned {})", path,
                               op.file_sha256.substr(0, 16), planned.substr(0, 16)),
                   "leave the operand files alone while wattlab runs"};
    return std::move(op.bytes);
  } catch (const UsageError& e) {
    return Error{ErrorKind::invalid_argument, e.what(), ""};
  }
}

}  // namespace wattlab::lab
