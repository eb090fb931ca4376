#include "lab/npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>

#include "wattlab/core/error.h"
#include "core/sha256.h"

namespace wattlab::lab {
namespace {

constexpr std::array<unsigned char, 6> kMagic = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kAlign = 64;  // NumPy pads the header so that the data starts on 64 bytes

[[noreturn]] void fail(const std::string& name, const std::string& problem) {
  throw UsageError(fmt::format("{}: {}", name, problem));
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// The Python dict literal of the header: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : t_(text), name_(name) {}

  void parse(NpyHeader& h) {
    bool descr = false, order = false, shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() == '[') bad("a structured dtype (a list of fields in 'descr') is not a GEMM operand");
        h.descr = string_literal();
        descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        shape = true;
      } else {
        bad(fmt::format("unknown header key '{}'", key));
      }
      skip_space();
      if (peek() == ',') ++i_;
      else if (peek() != '}') bad("expected ',' or '}'");
    }
    if (!descr || !order || !shape)
      bad(fmt::format("the header lacks '{}'", !descr ? "descr" : !order ? "fortran_order" : "shape"));
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    fail(name_, fmt::format("malformed .npy header at byte {} of '{}': {}", i_, t_, what));
  }
  char peek() const { return i_ < t_.size() ? t_[i_] : '\0'; }
  void skip_space() {
    while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) bad(fmt::format("expected '{}'", c));
    ++i_;
  }
  std::string string_literal() {
    skip_space();
    const char q = peek();
    if (q != '\'' && q != '"') bad("expected a quoted string");
    const std::size_t end = t_.find(q, i_ + 1);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string s(t_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return s;
  }
  bool boolean() {
    for (auto [word, value] : {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}})
      if (t_.substr(i_, word.size()) == word) {
        i_ += word.size();
        return value;
      }
    bad("expected True or False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> dims;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) bad("expected a dimension");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) bad("a dimension too large");
        v = v * 10 + (t_[i_++] - '0');
      }
      if (peek() == 'L') ++i_;  // Python 2's long suffix
      dims.push_back(v);
      skip_space();
      if (peek() == ',') ++i_;
      else if (peek() != ')') bad("expected ',' or ')'");
    }
    ++i_;
    return dims;
  }

  std::string_view t_;
  const std::string& name_;
  std::size_t i_ = 0;
};

// "float32", "uint16", "void (raw 2 bytes)" for a dtype string's kind and size.
std::string describe_descr(std::string_view descr) {
  if (descr.size() < 3) return "unknown";
  const char kind = descr[1];
  const std::string_view size = descr.substr(2);
  int bytes = 0;
  for (char c : size) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || bytes > 100'000) return "unknown";
    bytes = bytes * 10 + (c - '0');
  }
  const std::string bits = std::to_string(bytes * 8);
  switch (kind) {
    case 'f': return "float" + bits;
    case 'i': return "int" + bits;
    case 'u': return "uint" + bits;
    case 'c': return "complex" + bits;
    case 'b': return "bool";
    case 'V': return fmt::format("raw {}-byte elements", bytes);
    default: return "unknown";
  }
}

// The element size of a dtype string ("<f4" -> 4), or nothing when it is not one of NumPy's
// simple "<kind><bytes>" strings.
std::optional<std::size_t> item_size(std::string_view descr) {
  if (descr.size() < 3 || std::string_view("<>|=").find(descr[0]) == std::string_view::npos) return std::nullopt;
  std::size_t n = 0;
  for (char c : descr.substr(2)) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || n > 1'000'000) return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n > 0 ? std::optional(n) : std::nullopt;
}

uint32_t little_u32(const std::byte* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | std::to_integer<uint32_t>(p[i]);
  return v;
}

// dst[c*R + r] = src[r*C + c]: a transpose in 32 x 32 tiles (both sides stay in cache).
template <class T>
void transpose_as(const std::byte* src, std::byte* dst, int64_t R, int64_t C) {
  constexpr int64_t kTile = 32;
  for (int64_t r0 = 0; r0 < R; r0 += kTile)
    for (int64_t c0 = 0; c0 < C; c0 += kTile)
      for (int64_t r = r0; r < std::min(R, r0 + kTile); ++r)
        for (int64_t c = c0; c < std::min(C, c0 + kTile); ++c) {
          T v;
          std::memcpy(&v, src + static_cast<std::size_t>(r * C + c) * sizeof(T), sizeof(T));
          std::memcpy(dst + static_cast<std::size_t>(c * R + r) * sizeof(T), &v, sizeof(T));
        }
}
void transpose(const std::byte* src, std::byte* dst, int64_t R, int64_t C, std::size_t element_bytes) {
  switch (element_bytes) {
    case 1: return transpose_as<uint8_t>(src, dst, R, C);
    case 2: return transpose_as<uint16_t>(src, dst, R, C);
    default: return transpose_as<uint32_t>(src, dst, R, C);
  }
}

std::vector<std::byte> read_file(const std::filesystem::path& path, std::optional<std::size_t> max_bytes = {}) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path.string(), "cannot be opened (does the file exist?)");
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(path.string(), "cannot be read: " + ec.message());
  const std::size_t n = max_bytes ? std::min<std::size_t>(*max_bytes, size) : static_cast<std::size_t>(size);
  std::vector<std::byte> out(n);
  if (n > 0 && !f.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(n)))
    fail(path.string(), "cannot be read");
  return out;
}

}  // namespace

NpyHeader parse_npy_header(const std::byte* bytes, std::size_t size, const std::string& name) {
  if (size < kMagic.size() || std::memcmp(bytes, kMagic.data(), kMagic.size()) != 0)
    fail(name, "not a .npy file (it does not start with \\x93NUMPY)");
  if (size < 8) fail(name, fmt::format("truncated header: the file has {} bytes, the version needs 8", size));
  NpyHeader h;
  h.major_version = std::to_integer<int>(bytes[6]);
  h.minor_version = std::to_integer<int>(bytes[7]);
  if (h.major_version < 1 || h.major_version > 3 || h.minor_version != 0)
    fail(name, fmt::format(".npy format version {}.{} is not supported (this reader takes 1.0, 2.0 and 3.0)",
                           h.major_version, h.minor_version));
  const int len_bytes = h.major_version == 1 ? 2 : 4;
  const std::size_t prefix = 8 + static_cast<std::size_t>(len_bytes);
  if (size < prefix)
    fail(name, fmt::format("truncated header: the file has {} bytes, the header length needs {}", size, prefix));
  const std::size_t header_len = little_u32(bytes + 8, len_bytes);
  h.data_offset = prefix + header_len;
  if (size < h.data_offset)
    fail(name, fmt::format("truncated header: it says {} bytes of header, the file has {} after the length", header_len,
                           size - prefix));
  const std::string_view text(reinterpret_cast<const char*>(bytes + prefix), header_len);
  HeaderParser(text, name).parse(h);
  if (h.descr.size() >= 2 && h.descr[0] == '>' && item_size(h.descr).value_or(0) > 1)
    fail(name, fmt::format("dtype '{}' is big-endian; write the file little-endian (numpy: a.astype(a.dtype.newbyteorder('<')))",
                           h.descr));
  return h;
}

NpyHeader read_npy_header(const std::filesystem::path& path) {
  // The header's length sits in the first 12 bytes; read those, then the header.
  auto prefix = read_file(path, 12);
  const std::size_t have = prefix.size();
  if (have >= 8 && std::memcmp(prefix.data(), kMagic.data(), kMagic.size()) == 0) {
    const int major = std::to_integer<int>(prefix[6]);
    const std::size_t len_at = major == 1 ? 10 : 12;
    if (have >= len_at) {
      const std::size_t header_len = little_u32(prefix.data() + 8, static_cast<int>(len_at - 8));
      prefix = read_file(path, len_at + header_len);
    }
  }
  return parse_npy_header(prefix.data(), prefix.size(), path.string());
}

bool npy_descr_holds(std::string_view descr, DType dtype) {
  if (descr.size() < 3) return false;
  const std::string_view kind_size = descr.substr(1);
  const bool one_byte = kind_size.size() == 2 && kind_size[1] == '1';
  // A one-byte type has no byte order: any prefix; wider ones must be little-endian, except raw
  // void elements, which NumPy writes as '|V2' and ml_dtypes as '<V2'.
  if (!one_byte && descr[0] != '<' && !(kind_size[0] == 'V' && descr[0] == '|')) return false;
  auto is = [&](std::initializer_list<std::string_view> kinds) {
    return std::find(kinds.begin(), kinds.end(), kind_size) != kinds.end();
  };
  switch (dtype) {
    case DType::f32: return is({"f4"});
    case DType::f16: return is({"f2"});
    case DType::bf16: return is({"u2", "i2", "V2"});
    case DType::f8_e4m3:
    case DType::f8_e5m2: return is({"u1", "i1", "V1"});
    case DType::i8: return is({"i1"});
  }
  return false;
}

std::string npy_accepted_descrs(DType dtype) {
  switch (dtype) {
    case DType::f32: return "'<f4' (float32)";
    case DType::f16: return "'<f2' (float16)";
    case DType::bf16: return "'<u2' or '<i2' (raw bfloat16 bits) or '<V2' or '|V2' (ml_dtypes.bfloat16)";
    case DType::f8_e4m3: return "'|u1' or '|i1' (raw E4M3 bytes) or '|V1' (ml_dtypes.float8_e4m3fn)";
    case DType::f8_e5m2: return "'|u1' or '|i1' (raw E5M2 bytes) or '|V1' (ml_dtypes.float8_e5m2)";
    case DType::i8: return "'|i1' (int8)";
  }
  return "none";
}

std::string_view npy_descr(DType dtype) {
  switch (dtype) {
    case DType::f32: return "<f4";
    case DType::f16: return "<f2";
    case DType::bf16: return "<u2";
    case DType::f8_e4m3:
    case DType::f8_e5m2: return "|u1";
    case DType::i8: return "|i1";
  }
  return "";
}

NpyOperand load_npy_operand(const std::filesystem::path& path, const OperandShape& shape) {
  return decode_npy_operand(read_file(path), path.string(), shape);
}

NpyOperand decode_npy_operand(std::vector<std::byte> file, const std::string& name, const OperandShape& shape) {
  NpyOperand out;
  const NpyHeader h = parse_npy_header(file.data(), file.size(), name);
  const char* op = shape.which == Operand::A ? "A" : "B";
  if (!npy_descr_holds(h.descr, shape.dtype))
    fail(name, fmt::format("dtype '{}' ({}) is not the {} operand's type {}: it needs {}", h.descr,
                           describe_descr(h.descr), op, to_string(shape.dtype), npy_accepted_descrs(shape.dtype)));
  const int64_t want_rows = rows(shape), want_cols = cols(shape);
  const std::string want = fmt::format("{} x {} ({} = {})", want_rows, want_cols,
                                       shape.which == Operand::A ? "M x K" : "K x N",
                                       shape_text({want_rows, want_cols}));
  if (h.shape.size() != 2)
    fail(name, fmt::format("holds a {}-D array of shape {}; the {} operand is 2-D, {}", h.shape.size(),
                           shape_text(h.shape), op, want));
  if (h.shape[0] != want_rows || h.shape[1] != want_cols)
    fail(name, fmt::format("shape {} does not match the {} operand's {} for the GEMM {}x{}x{} (MxNxK)",
                           shape_text(h.shape), op, want, shape.M, shape.N, shape.K));
  const std::size_t element_bytes = size_bytes(shape.dtype);
  const std::size_t need = storage_bytes(shape);
  const std::size_t have = file.size() - h.data_offset;
  if (have != need)
    fail(name, fmt::format("{} data: {} bytes after the header, the shape {} of '{}' needs {}",
                           have < need ? "truncated" : "extra bytes after the", have, shape_text(h.shape), h.descr, need));
  out.file_sha256 = sha256_hex(file.data(), file.size());
  const std::byte* data = file.data() + h.data_offset;
  // A is stored row-major (C order of M x K), B column-major (Fortran order of K x N); the other
  // order is a transpose.
  const bool same = shape.which == Operand::A ? !h.fortran_order : h.fortran_order;
  if (same) {
    // The data moves to the front of the file's buffer: no second copy of a large operand.
    file.erase(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(h.data_offset));
    out.bytes = std::move(file);
  } else {
    out.bytes.resize(need);
    // A in Fortran order: A[m,k] at k*M + m; B in C order: B[k,n] at k*N + n. Both are K rows.
    transpose(data, out.bytes.data(), shape.K, outer(shape), element_bytes);
  }
  return out;
}

std::vector<std::byte> read_npy_operand(const std::filesystem::path& path, const OperandShape& shape) {
  return load_npy_operand(path, shape).bytes;
}

void write_npy(const std::filesystem::path& path, std::string_view descr, const std::vector<int64_t>& shape,
               const void* data, std::size_t bytes, bool fortran_order, int major_version) {
  const std::string name = path.string();
  if (major_version < 1 || major_version > 3)
    fail(name, fmt::format("cannot write .npy format version {} (1, 2 or 3)", major_version));
  const auto item = item_size(descr);
  if (!item) fail(name, fmt::format("'{}' is not a simple NumPy dtype string", descr));
  std::size_t count = 1;
  for (int64_t d : shape) count *= static_cast<std::size_t>(std::max<int64_t>(d, 0));
  if (count * *item != bytes)
    fail(name, fmt::format("{} bytes of data for shape {} of '{}', which needs {}", bytes, shape_text(shape), descr,
                           count * *item));
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': {}, }}", descr,
                                   fortran_order ? "True" : "False", shape_text(shape));
  const std::size_t prefix = major_version == 1 ? 10 : 12;
  const std::size_t total = (prefix + header.size() + 1 + kAlign - 1) / kAlign * kAlign;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  if (major_version == 1 && header.size() > 0xFFFF) fail(name, "the header does not fit format version 1");
  std::string out(kMagic.begin(), kMagic.end());
  out.push_back(static_cast<char>(major_version));
  out.push_back('\0');
  const auto len = static_cast<uint32_t>(header.size());
  for (std::size_t i = 0; i < prefix - 8; ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xFF));
  out += header;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (bytes > 0) f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  f.close();
  if (!f) throw WattlabError(Error{ErrorKind::io, fmt::format("could not write {}", name), ""});
}

std::string npy_operand_label(const std::string& path, const std::string& file_sha256) {
  return fmt::format("file:{} sha256:{}", path, file_sha256.substr(0, 16));
}

}  // namespace wattlab::lab
