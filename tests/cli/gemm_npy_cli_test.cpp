// End-to-end: `wattlab gemm run --a FILE --b FILE` on the SIMULATED executor, with .npy files the
// test writes: the point measures the files' data (its bit statistics and labels say so), a file
// holding what a recipe generates measures the same as the recipe, and every bad file exits 2
// naming the problem before anything is measured.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/shell.h"
#include "lab/generate.h"
#include "lab/npy.h"
#include "lab/recipe.h"
#include "core/sha256.h"

namespace {

using wattlab::testing::Ran;
namespace lab = wattlab::lab;

Ran sh(const std::string& args) { return wattlab::testing::shell(wattlab::testing::wattlab_bin() + " " + args); }

// Small, fast protocol on the virtual clock.
const std::string kFast = " --device sim --window-s 0.5 --warmup-min-s 1 --warmup-max-s 3";

std::string file_sha256(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return wattlab::sha256_hex(bytes.data(), bytes.size());
}

class GemmNpyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-gemm-npy-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The one window of run `id`.
  nlohmann::json window(int id) {
    const auto r = sh("report " + std::to_string(id) + " --json --db " + db_);
    EXPECT_EQ(r.rc, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["windows"].size(), 1u);
    return j["windows"][0];
  }
  // `gemm run` with `args` must exit 2 saying `problem`, and store nothing.
  void expect_usage(const std::string& args, const std::string& problem) {
    const auto r = sh("gemm run" + kFast + " " + args + " --db " + db_);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(problem), std::string::npos) << args << ": wanted '" << problem << "' in:\n" << r.out;
    EXPECT_FALSE(std::filesystem::exists(db_)) << args << ": a run was stored";
  }
  std::filesystem::path dir_;
  std::string db_;
};

TEST_F(GemmNpyCli, BothOperandsFromFilesSetTheShapeAndTheStatistics) {
  // A: 64 x 32 zeros (float16, C order); B: 32 x 48 ones (float16 0x3C00, Fortran order).
  const std::string a = path("a.npy"), b = path("b.npy");
  const std::vector<uint16_t> zeros(64 * 32, 0), ones(32 * 48, 0x3C00);
  lab::write_npy(a, "<f2", {64, 32}, zeros.data(), zeros.size() * 2);
  lab::write_npy(b, "<f2", {32, 48}, ones.data(), ones.size() * 2, true, 2);
  const auto r = sh("gemm run" + kFast + " --engine fp16 --a " + a + " --b " + b + " --db " + db_);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.rfind("SIMULATED", 0), 0u) << r.out;
  const std::string label_a = "file:" + a + " sha256:" + file_sha256(a).substr(0, 16);
  EXPECT_NE(r.out.find("A: " + label_a), std::string::npos) << r.out;

  const auto w = window(1);
  const auto& l = w["labels"];
  EXPECT_EQ(l["M"], "64");
  EXPECT_EQ(l["N"], "48");
  EXPECT_EQ(l["K"], "32");
  EXPECT_EQ(l["recipe_a"], label_a);
  EXPECT_EQ(l["recipe_b"], "file:" + b + " sha256:" + file_sha256(b).substr(0, 16));
  EXPECT_EQ(l["reference"], "0");
  const auto& c = w["counts"];
  EXPECT_DOUBLE_EQ(c["input_a_zero_fraction"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(c["input_a_popcount_bits"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(c["input_a_distinct_values"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(c["input_b_zero_fraction"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(c["input_b_popcount_bits"].get<double>(), 4.0);  // 0x3C00: four bits set
  EXPECT_DOUBLE_EQ(c["input_b_hamming_k_bits"].get<double>(), 0.0);
  EXPECT_GT(c["energy_per_gemm_j"].get<double>(), 0);
}

TEST_F(GemmNpyCli, AFileHoldingARecipesBytesMeasuresLikeTheRecipe) {
  // Small enough that the SIMULATED executor's statistics of the recipe cover every element.
  const std::string recipe = "normal(std=1) | zero(fraction=0.25)";
  const lab::OperandShape shape{lab::Operand::A, 32, 40, 64, lab::DType::bf16};
  const auto bytes = lab::generate_cpu(*lab::parse_recipe(recipe), shape, 7);
  const std::string a = path("a.npy");
  lab::write_npy(a, "<u2", {32, 64}, bytes.data(), bytes.size());
  const std::string common = "gemm run" + kFast + " --engine bf16 --shape 32x40x64 --seed 7 --db " + db_;
  ASSERT_EQ(sh(common + " --recipe-a '" + recipe + "'").rc, 0);
  const auto r = sh(common + " --a " + a);
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto from_recipe = window(1)["counts"], from_file = window(2)["counts"];
  for (const char* k : {"input_a_zero_fraction", "input_a_popcount_bits", "input_a_distinct_values",
                        "input_a_hamming_k_bits", "input_a_hamming_mn_bits", "input_sim_activity"})
    EXPECT_DOUBLE_EQ(from_file[k].get<double>(), from_recipe[k].get<double>()) << k;
  EXPECT_NEAR(from_file["input_a_zero_fraction"].get<double>(), 0.25, 0.1);
  // B comes from the engine's reference recipe in both.
  EXPECT_EQ(window(2)["labels"]["recipe_b"], "normal(mean=0, std=1024)");
}

TEST_F(GemmNpyCli, OneFileGivesItsDimensionsAndTheOtherOuterOneFollows) {
  const std::string b = path("b.npy");
  const std::vector<int8_t> d(48 * 16, 3);
  lab::write_npy(b, "|i1", {48, 16}, d.data(), d.size());  // K x N = 48 x 16
  const auto r = sh("gemm run" + kFast + " --engine int8 --b " + b + " --db " + db_);
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto w = window(1);
  EXPECT_EQ(w["labels"]["M"], "16");
  EXPECT_EQ(w["labels"]["N"], "16");
  EXPECT_EQ(w["labels"]["K"], "48");
  EXPECT_EQ(w["labels"]["recipe_a"], "normal(mean=0, std=32)");
  EXPECT_DOUBLE_EQ(w["counts"]["input_b_distinct_values"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(w["counts"]["input_b_popcount_bits"].get<double>(), 2.0);
}

TEST_F(GemmNpyCli, BadFilesExitTwoNamingTheProblem) {
  const std::string a = path("a.npy"), b = path("b.npy");
  const std::vector<uint16_t> d(64 * 32, 0x3C00);
  lab::write_npy(a, "<f2", {64, 32}, d.data(), d.size() * 2);
  lab::write_npy(b, "<f2", {16, 32}, d.data(), 16 * 32 * 2);
  const std::string text = path("a.csv");
  std::ofstream(text) << "1,2,3\n";
  const std::string big = path("big.npy");
  lab::write_npy(big, ">f2", {64, 32}, d.data(), d.size() * 2);
  const std::string cube = path("cube.npy");
  lab::write_npy(cube, "<f2", {2, 32, 32}, d.data(), 2 * 32 * 32 * 2);
  const std::string cut = path("cut.npy");
  {
    std::ifstream in(a, std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut, std::ios::binary) << s.substr(0, s.size() - 10);
  }
  expect_usage("--engine bf16 --a " + a,
               "--a (engine bf16): " + a + ": dtype '<f2' (float16) is not the A operand's type bf16: it needs '<u2'");
  expect_usage("--engine fp8e4m3 --a " + a, "is not the A operand's type f8_e4m3: it needs '|u1' or '|i1'");
  expect_usage("--engine fp16 --a " + a + " --shape 64x48x16",
               "shape (64, 32) does not match the A operand's 64 x 16 (M x K = (64, 16)) for the GEMM 64x48x16");
  expect_usage("--engine fp16 --a " + a + " --b " + b, "--a " + a + " is M x K = 64 x 32 but --b " + b +
                                                           " is K x N = 16 x 32: their K differ");
  expect_usage("--engine fp16 --a " + text, "--a: " + text + ": not a .npy file");
  expect_usage("--engine fp16 --a " + cut, "truncated data: 4086 bytes after the header");
  expect_usage("--engine fp16 --b " + big, "--b: " + big + ": dtype '>f2' is big-endian");
  expect_usage("--engine fp16 --a " + cube, "holds a 3-D array; an operand is 2-D (M x K)");
  expect_usage("--engine fp16 --a " + path("missing.npy"), "cannot be opened");
  expect_usage("--engine fp16 --a " + a + " --recipe-a 'normal(std=1)'", "--a and --recipe-a both give A");
  // FP8 needs multiples of 16: a file's shape is checked like --shape.
  const std::vector<uint8_t> f8(24 * 32, 0x38);
  const std::string odd = path("odd.npy");
  lab::write_npy(odd, "|u1", {24, 32}, f8.data(), f8.size());
  expect_usage("--engine fp8e4m3 --a " + odd, "M = 24");
}

}  // namespace
