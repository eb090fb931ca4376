// Operands of a GemmSpec from .npy files: the SIMULATED executor reports the file's bit statistics,
// and a file that changed after the point was planned is refused (invalid_argument).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lab/npy.h"
#include "lab/operand_file.h"
#include "lab/sim_executor.h"

using namespace wattlab::lab;

namespace {

class OperandFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-operand-file-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // A bf16 GEMM 32x16x64 whose A comes from a file of `fill` bits, planned with the file's hash.
  GemmSpec spec_with_file(uint16_t fill) {
    const std::string a = (dir_ / "a.npy").string();
    const std::vector<uint16_t> bits(32 * 64, fill);
    write_npy(a, "<u2", {32, 64}, bits.data(), bits.size() * 2);
    GemmSpec s;
    s.engine = Engine::bf16;
    s.m = 32;
    s.n = 16;
    s.k = 64;
    s.file_a = a;
    s.file_sha256_a = load_npy_operand(a, {Operand::A, 32, 16, 64, DType::bf16}).file_sha256;
    s.recipe_a = npy_operand_label(a, s.file_sha256_a);
    s.recipe_b = "normal(std=1)";
    return s;
  }
  std::filesystem::path dir_;
};

}  // namespace

TEST_F(OperandFile, TheSimulatedExecutorReportsTheFilesStatistics) {
  const GemmSpec s = spec_with_file(0x8000);  // -0.0 everywhere: zeros with one bit set
  auto exec = make_sim_executor({s});
  ASSERT_TRUE(exec) << exec.error().message();
  auto p = (*exec)->prepare(s, 0.075);
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_DOUBLE_EQ(p->input_stats.at("a_zero_fraction"), 1.0);
  EXPECT_DOUBLE_EQ(p->input_stats.at("a_popcount_bits"), 1.0);
  EXPECT_DOUBLE_EQ(p->input_stats.at("a_distinct_values"), 1.0);
  EXPECT_DOUBLE_EQ(p->input_stats.at("a_width_bits"), 16.0);
  EXPECT_LT(p->input_stats.at("b_zero_fraction"), 0.01);  // B from its recipe
  EXPECT_GT(p->input_stats.at("b_distinct_values"), 100.0);
}

TEST_F(OperandFile, AFileThatChangedAfterPlanningIsRefused) {
  const GemmSpec s = spec_with_file(0x3F80);
  auto ok = load_operand_file(s, {Operand::A, s.m, s.n, s.k, DType::bf16});
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(ok->size(), 32u * 64 * 2);
  const std::vector<uint16_t> other(32 * 64, 0x4000);
  write_npy(s.file_a, "<u2", {32, 64}, other.data(), other.size() * 2);
  auto changed = load_operand_file(s, {Operand::A, s.m, s.n, s.k, DType::bf16});
  ASSERT_FALSE(changed);
  EXPECT_EQ(changed.error().kind, wattlab::ErrorKind::invalid_argument);
  EXPECT_NE(changed.error().what.find("the file changed after the point was planned"), std::string::npos)
      << changed.error().what;
  auto exec = make_sim_executor({s});
  ASSERT_FALSE(exec);
  EXPECT_EQ(exec.error().kind, wattlab::ErrorKind::invalid_argument);
}
