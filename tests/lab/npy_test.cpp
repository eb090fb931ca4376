// The .npy operand reader on files the test writes: every accepted dtype string, order and format
// version gives the operand's storage layout; every malformed or mismatched file is a UsageError
// naming the file and the problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "wattlab/core/error.h"
#include "lab/npy.h"
#include "core/sha256.h"

using namespace wattlab::lab;

namespace {

class Npy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-npy-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A file with exactly this version, header text (padded to 64 bytes unless `pad` is false) and data.
  std::string raw(const std::string& name, int major, int minor, std::string header, const std::string& data,
                  bool pad = true) {
    const std::size_t prefix = major == 1 ? 10 : 12;
    if (pad) {
      header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
      header.push_back('\n');
    }
    std::string out = "\x93NUMPY";
    out.push_back(static_cast<char>(major));
    out.push_back(static_cast<char>(minor));
    for (std::size_t i = 0; i < prefix - 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
    out += header + data;
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << out;
    return p;
  }
  std::filesystem::path dir_;
};

// The error message of loading `file` as `shape`, or "" when it loads.
std::string load_error(const std::string& file, const OperandShape& shape) {
  try {
    (void)read_npy_operand(file, shape);
  } catch (const wattlab::UsageError& e) {
    return e.what();
  }
  return "";
}

// Storage bytes with a distinct pattern per element (byte b of element i: i*7 + b*31 + 1).
std::vector<std::byte> pattern(const OperandShape& s) {
  std::vector<std::byte> v(storage_bytes(s));
  const std::size_t w = size_bytes(s.dtype);
  for (std::size_t i = 0; i < v.size() / w; ++i)
    for (std::size_t b = 0; b < w; ++b) v[i * w + b] = static_cast<std::byte>((i * 7 + b * 31 + 1) & 0xFF);
  return v;
}

// The elements of `storage` in the file order of the operand's mathematical shape (rows x cols).
std::vector<std::byte> file_order(const std::vector<std::byte>& storage, const OperandShape& s, bool fortran) {
  const std::size_t w = size_bytes(s.dtype);
  const int64_t R = rows(s), C = cols(s);
  std::vector<std::byte> out(storage.size());
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t at = fortran ? c * R + r : r * C + c;
      std::memcpy(out.data() + static_cast<std::size_t>(at) * w,
                  storage.data() + static_cast<std::size_t>(storage_index(s, r, c)) * w, w);
    }
  return out;
}

std::vector<std::string> accepted(DType t) {
  switch (t) {
    case DType::f32: return {"<f4"};
    case DType::f16: return {"<f2"};
    case DType::bf16: return {"<u2", "<i2", "<V2", "|V2"};
    case DType::f8_e4m3:
    case DType::f8_e5m2: return {"|u1", "|i1", "|V1"};
    case DType::i8: return {"|i1"};
  }
  return {};
}

}  // namespace

TEST_F(Npy, EveryAcceptedDtypeOrderAndVersionGivesTheStorageLayout) {
  int files = 0;
  for (DType t : all_dtypes)
    for (Operand which : {Operand::A, Operand::B}) {
      const OperandShape s{which, 3, 4, 5, t};
      const auto storage = pattern(s);
      for (const auto& descr : accepted(t))
        for (bool fortran : {false, true})
          for (int version : {1, 2, 3}) {
            const std::string p = path("x.npy");
            const auto data = file_order(storage, s, fortran);
            write_npy(p, descr, {rows(s), cols(s)}, data.data(), data.size(), fortran, version);
            const std::string what = std::string(to_string(t)) + " " + std::string(to_string(which)) + " " + descr +
                                     (fortran ? " F" : " C") + " v" + std::to_string(version);
            std::vector<std::byte> got;
            ASSERT_NO_THROW(got = read_npy_operand(p, s)) << what << ": " << load_error(p, s);
            EXPECT_EQ(got, storage) << what;
            ++files;
          }
    }
  EXPECT_EQ(files, 2 * 3 * 2 * (1 + 1 + 4 + 3 + 3 + 1));
}

TEST_F(Npy, TransposesAHandWrittenFortranA) {
  // A = [[1, 2, 3], [4, 5, 6]] (M=2, K=3) as int8 in Fortran order: 1 4 2 5 3 6.
  const std::string p = path("a.npy");
  const int8_t f[6] = {1, 4, 2, 5, 3, 6};
  write_npy(p, "|i1", {2, 3}, f, 6, true);
  const auto got = read_npy_operand(p, {Operand::A, 2, 7, 3, DType::i8});
  const std::vector<std::byte> want = {std::byte{1}, std::byte{2}, std::byte{3},
                                       std::byte{4}, std::byte{5}, std::byte{6}};
  EXPECT_EQ(got, want);
}

TEST_F(Npy, HeaderVariantsNumPyAcceptsAreRead) {
  // Keys in another order, double quotes, Python 2's long suffix, no trailing comma, no padding.
  const std::string data(2 * 3 * 4, '\0');
  const auto p = raw("h.npy", 1, 0, "{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"<f4\"}\n", data, false);
  const NpyHeader h = read_npy_header(p);
  EXPECT_EQ(h.descr, "<f4");
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(read_npy_operand(p, {Operand::A, 2, 9, 3, DType::f32}).size(), 24u);
}

TEST_F(Npy, WrittenHeadersAlignTheDataAndReadBackWithoutTheData) {
  const std::string p = path("w.npy");
  const std::vector<uint16_t> d(6 * 2, 0x3F80);
  for (int v : {1, 2, 3}) {
    write_npy(p, "<u2", {6, 2}, d.data(), d.size() * 2, false, v);
    const NpyHeader h = read_npy_header(p);
    EXPECT_EQ(h.major_version, v);
    EXPECT_EQ(h.minor_version, 0);
    EXPECT_EQ(h.data_offset % 64, 0u);
    EXPECT_EQ(h.shape, (std::vector<int64_t>{6, 2}));
    EXPECT_EQ(std::filesystem::file_size(p), h.data_offset + 24);
  }
}

TEST_F(Npy, LoadGivesTheFilesSha256AndTheLabelNamesIt) {
  const std::string p = path("z.npy");
  const std::vector<float> zeros(4 * 2, 0.0f);
  write_npy(p, "<f4", {2, 4}, zeros.data(), zeros.size() * 4, true);
  const NpyOperand op = load_npy_operand(p, {Operand::B, 3, 4, 2, DType::f32});
  std::ifstream f(p, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(op.file_sha256, wattlab::sha256_hex(file.data(), file.size()));
  EXPECT_EQ(npy_operand_label("z.npy", op.file_sha256), "file:z.npy sha256:" + op.file_sha256.substr(0, 16));
}

TEST_F(Npy, MalformedFilesNameTheFileAndTheProblem) {
  const OperandShape a{Operand::A, 2, 5, 3, DType::f32};
  const std::string ok_data(2 * 3 * 4, '\0');
  const std::string ok_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  struct Case {
    std::string file, problem;
  };
  std::vector<Case> cases;
  {
    const std::string p = path("text.npy");
    std::ofstream(p) << "M,K\n1,2\n";
    cases.push_back({p, "not a .npy file"});
  }
  {
    const std::string p = path("short.npy");
    std::ofstream(p, std::ios::binary) << std::string("\x93NUMPY\x01\x00\x40", 9);
    cases.push_back({p, "truncated header"});
  }
  {
    // The length says 64 bytes of header; 20 follow.
    const std::string p = path("cut.npy");
    std::ofstream(p, std::ios::binary) << std::string("\x93NUMPY\x01\x00\x40\x00", 10) + ok_header.substr(0, 20);
    cases.push_back({p, "truncated header"});
  }
  cases.push_back({raw("v4.npy", 4, 0, ok_header, ok_data), "version 4.0 is not supported"});
  cases.push_back({raw("v11.npy", 1, 1, ok_header, ok_data), "version 1.1 is not supported"});
  cases.push_back({raw("be.npy", 1, 0, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", ok_data),
                   "dtype '>f4' is big-endian"});
  cases.push_back({raw("f8.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", ok_data + ok_data),
                   "dtype '<f8' (float64) is not the A operand's type f32: it needs '<f4' (float32)"});
  cases.push_back({raw("3d.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }", ok_data),
                   "holds a 3-D array of shape (1, 2, 3); the A operand is 2-D, 2 x 3 (M x K = (2, 3))"});
  cases.push_back({raw("1d.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", ok_data),
                   "holds a 1-D array of shape (6,)"});
  cases.push_back({raw("tr.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", ok_data),
                   "shape (3, 2) does not match the A operand's 2 x 3 (M x K = (2, 3)) for the GEMM 2x5x3 (MxNxK)"});
  cases.push_back({raw("td.npy", 1, 0, ok_header, ok_data.substr(0, 20)),
                   "truncated data: 20 bytes after the header, the shape (2, 3) of '<f4' needs 24"});
  cases.push_back({raw("xd.npy", 1, 0, ok_header, ok_data + "!"), "extra bytes after the data: 25 bytes"});
  cases.push_back({raw("st.npy", 1, 0, "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2, 3), }", ok_data),
                   "structured dtype"});
  cases.push_back({raw("nk.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, }", ok_data), "lacks 'shape'"});
  cases.push_back({raw("bo.npy", 1, 0, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3), }", ok_data),
                   "expected True or False"});
  cases.push_back({path("missing.npy"), "cannot be opened"});
  for (const auto& c : cases) {
    const std::string e = load_error(c.file, a);
    EXPECT_NE(e.find(c.file + ": "), std::string::npos) << "the message names the file: " << e;
    EXPECT_NE(e.find(c.problem), std::string::npos) << c.file << ": wanted '" << c.problem << "', got: " << e;
  }
}

TEST_F(Npy, DtypeMismatchesSayWhatTheOperandNeeds) {
  const std::vector<uint16_t> h(6, 0);
  const std::string f16 = path("f16.npy");
  write_npy(f16, "<f2", {2, 3}, h.data(), 12);
  // float16 data for a bfloat16 operand: the bits mean another number, so it is refused.
  EXPECT_NE(load_error(f16, {Operand::A, 2, 4, 3, DType::bf16})
                .find("dtype '<f2' (float16) is not the A operand's type bf16: it needs '<u2' or '<i2' (raw bfloat16 bits)"),
            std::string::npos);
  // ml_dtypes' bfloat16 ('<V2') for a float16 operand.
  const std::string v2 = path("v2.npy");
  write_npy(v2, "<V2", {3, 2}, h.data(), 12);
  EXPECT_NE(load_error(v2, {Operand::B, 4, 2, 3, DType::f16}).find("(raw 2-byte elements) is not the B operand's type f16"),
            std::string::npos);
  // uint8 for int8: values above 127 would change meaning.
  const std::vector<uint8_t> b(6, 200);
  const std::string u1 = path("u1.npy");
  write_npy(u1, "|u1", {2, 3}, b.data(), 6);
  EXPECT_NE(load_error(u1, {Operand::A, 2, 4, 3, DType::i8}).find("(uint8) is not the A operand's type i8: it needs '|i1'"),
            std::string::npos);
  // ...and as raw FP8 bytes it is fine.
  EXPECT_EQ(load_error(u1, {Operand::A, 2, 4, 3, DType::f8_e4m3}), "");
  // A B operand's shape is K x N.
  EXPECT_NE(load_error(u1, {Operand::B, 4, 2, 2, DType::f8_e5m2}).find("the B operand's 2 x 2 (K x N = (2, 2))"),
            std::string::npos);
}

TEST_F(Npy, WriteRefusesWhatItCannotWrite) {
  const std::vector<float> d(6, 1.0f);
  EXPECT_THROW(write_npy(path("a.npy"), "<f4", {2, 2}, d.data(), 24), wattlab::UsageError);
  EXPECT_THROW(write_npy(path("a.npy"), "<f4", {2, 3}, d.data(), 24, false, 4), wattlab::UsageError);
  EXPECT_THROW(write_npy(path("a.npy"), "float", {2, 3}, d.data(), 24), wattlab::UsageError);
  EXPECT_THROW(write_npy(dir_ / "no-such-dir" / "a.npy", "<f4", {2, 3}, d.data(), 24), wattlab::WattlabError);
}
