// End-to-end: `wattlab gemm fit` and `wattlab gemm predict` as a user runs them: the committed
// model is a fresh fit of the committed CSV; a fit on a CSV this test writes from a known law;
// predictions from recipes against the built-in model and from .npy files the test writes; bad
// input exits 2 naming the problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/shell.h"
#include "lab/npy.h"

namespace {

using wattlab::testing::Ran;

Ran sh(const std::string& args) { return wattlab::testing::shell(wattlab::testing::wattlab_bin() + " " + args); }

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Equal up to a relative 1e-9 in numbers (the last bits of a fit may differ between compilers) and
// the "date" field; `where` names the first difference.
bool same_model(const nlohmann::json& a, const nlohmann::json& b, const std::string& where, std::string& diff) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    if (std::abs(x - y) <= 1e-9 * std::max({1.0, std::abs(x), std::abs(y)})) return true;
    diff = where + ": " + a.dump() + " vs " + b.dump();
    return false;
  }
  if (a.type() != b.type() || a.size() != b.size()) {
    diff = where + ": " + a.dump().substr(0, 200) + " vs " + b.dump().substr(0, 200);
    return false;
  }
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (it.key() == "date") continue;
      if (!b.contains(it.key())) return diff = where + "." + it.key() + " missing", false;
      if (!same_model(it.value(), b.at(it.key()), where + "." + it.key(), diff)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same_model(a[i], b[i], where + "[" + std::to_string(i) + "]", diff)) return false;
    return true;
  }
  if (a != b) return diff = where + ": " + a.dump() + " vs " + b.dump(), false;
  return true;
}

// A points CSV row from a known law: energy = 0.5 + 0.8 x hamming_k_frac - 0.4 x zero_frac (the
// other features vary too and have no effect), power = 400 + 300 x hamming_k_frac, clock absent.
std::string law_csv(int experiments, int per_experiment, const std::string& engine = "bf16") {
  std::string s =
      "label.engine,label.M,label.N,label.K,label.experiment,label.param,label.param_value,label.recipe_a,"
      "label.recipe_b,label.simulated,count.energy_per_gemm_j,count.mean_power_w,count.mean_sm_clock_mhz,"
      "count.input_ab_bit_agreement,count.rel_error_nonfinite";
  for (const char* x : {"a", "b"})
    for (const char* c : {"width_bits", "popcount_bits", "zero_fraction", "distinct_values", "hamming_k_bits",
                          "hamming_mn_bits"})
      s += std::string(",count.input_") + x + "_" + c;
  s += "\n";
  for (int e = 0; e < experiments; ++e)
    for (int i = 0; i < per_experiment; ++i) {
      const int k = e * per_experiment + i;
      const double hk = 1 + (k * 37 % 11) * 0.6, zero = (k * 53 % 13) / 13.0, pop = 2 + (k * 29 % 7);
      const double hmn = 1 + (k * 17 % 5), distinct = 16 << (k % 9), agree = 0.5 + (k * 7 % 10) / 25.0;
      const double energy = 0.5 + 0.8 * hk / 16 - 0.4 * zero, power = 400 + 300 * hk / 16;
      s += engine + ",256,256,256,E" + std::to_string(e + 1) + ",n," + std::to_string(i) +
           ",\"normal(mean=0, std=1)\",\"normal(mean=0, std=1)\",0," + std::to_string(energy) + "," +
           std::to_string(power) + ",," + std::to_string(agree) + ",";
      for (int op = 0; op < 2; ++op)
        s += ",16," + std::to_string(pop) + "," + std::to_string(zero) + "," + std::to_string(distinct) + "," +
             std::to_string(hk) + "," + std::to_string(hmn);
      s += "\n";
    }
  return s;
}

class GemmModelCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-gemm-model-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

const std::string kModel = "data/gemm-model/h200-v1.json";
const std::string kPoints = "docs/results/gemm-h200-study/points.csv";
const std::string kRef = "\"normal(mean=0, std=1024)\"";
const std::string kZero08 = "\"normal(mean=0, std=1024) | zero(fraction=0.8)\"";

TEST_F(GemmModelCli, TheCommittedModelIsAFreshFitOfTheCommittedCsv) {
  const std::string out = (dir_ / "fresh.json").string();
  const auto r = wattlab::testing::shell(std::string("cd ") + WATTLAB_SOURCE_DIR + " && " +
                                         wattlab::testing::wattlab_bin() + " gemm fit --points " + kPoints +
                                         " --gpu H200 --out " + out);
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto fresh = nlohmann::json::parse(read(out));
  const auto committed = nlohmann::json::parse(read(std::filesystem::path(WATTLAB_SOURCE_DIR) / kModel));
  std::string diff;
  EXPECT_TRUE(same_model(committed, fresh, "model", diff))
      << "refit: wattlab gemm fit --points " << kPoints << " --gpu H200 --out " << kModel << "\n" << diff;
  for (const char* s : {"23 train the model, 3 left out", "held-out R²", "MdAPE", "worst held-out energy per GEMM",
                        "leave one experiment out", "with one feature more"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST_F(GemmModelCli, FitOnAKnownLawScoresItHeldOutAndPredictUsesTheFile) {
  const std::string csv = write("law.csv", law_csv(6, 5));
  const std::string model = (dir_ / "law.json").string();
  const auto r = sh("gemm fit --points " + csv + " --gpu TestGPU --out " + model + " --ridge 0");
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto m = nlohmann::json::parse(read(model));
  ASSERT_EQ(m["fits"].size(), 1u);
  const auto& t = m["fits"][0]["targets"];
  ASSERT_EQ(t.size(), 2u) << "energy and power; the clock has no measurement";
  EXPECT_GT(t[0]["held_out"]["r2"].get<double>(), 0.999);
  EXPECT_GT(t[1]["held_out"]["r2"].get<double>(), 0.999);
  EXPECT_NE(r.out.find("mean_sm_clock_mhz: not fitted"), std::string::npos) << r.out;
  // The 256^3 fit predicts its own law for a recipe's statistics.
  const auto p = sh("gemm predict --engine bf16 --shape 256 --model " + model + " --json");
  ASSERT_EQ(p.rc, 0) << p.out;
  const auto j = nlohmann::json::parse(p.out);
  EXPECT_EQ(j["gpu"], "TestGPU");
  const auto& a = j["operand_statistics"]["a"];
  const auto& b = j["operand_statistics"]["b"];
  const double hk = (a["hamming_k_bits"].get<double>() + b["hamming_k_bits"].get<double>()) / 32;
  const double zero = (a["zero_fraction"].get<double>() + b["zero_fraction"].get<double>()) / 2;
  const auto& e = j["predictions"]["energy_per_gemm_j"];
  EXPECT_NEAR(e["predicted"].get<double>(), 0.5 + 0.8 * hk - 0.4 * zero, 1e-4);
  EXPECT_LT(e["low95"].get<double>(), e["predicted"].get<double>());
  EXPECT_GT(e["high95"].get<double>(), e["predicted"].get<double>());
}

TEST_F(GemmModelCli, PredictReadsOperandsFromNpyFiles) {
  const std::string csv = write("law.csv", law_csv(6, 5));
  const std::string model = (dir_ / "law.json").string();
  ASSERT_EQ(sh("gemm fit --points " + csv + " --gpu TestGPU --out " + model + " --ridge 0").rc, 0);
  // A: 256 x 256 bf16 zeros; B: 256 x 256 bf16 bit patterns that change along K (C order, K x N).
  const std::string a = (dir_ / "a.npy").string(), b = (dir_ / "b.npy").string();
  const std::vector<uint16_t> zeros(256 * 256, 0);
  std::vector<uint16_t> pattern(256 * 256);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint16_t>(0x3C00 + (i * 7919) % 509);
  wattlab::lab::write_npy(a, "<u2", {256, 256}, zeros.data(), zeros.size() * 2);
  wattlab::lab::write_npy(b, "<u2", {256, 256}, pattern.data(), pattern.size() * 2);
  // No --shape: the files give 256^3.
  const auto p = sh("gemm predict --engine bf16 --model " + model + " --a " + a + " --b " + b + " --json");
  ASSERT_EQ(p.rc, 0) << p.out;
  const auto j = nlohmann::json::parse(p.out);
  EXPECT_EQ(j["shape"], "256x256x256");
  EXPECT_EQ(j["operand_a"], "file:" + a);
  const auto& sa = j["operand_statistics"]["a"];
  const auto& sb = j["operand_statistics"]["b"];
  EXPECT_EQ(sa["zero_fraction"].get<double>(), 1.0);
  EXPECT_EQ(sa["popcount_bits"].get<double>(), 0.0);
  EXPECT_GT(sb["hamming_k_bits"].get<double>(), 0.0);
  EXPECT_NE(j["operand_statistics"]["from"].get<std::string>().find("read from the files"), std::string::npos);
  const double hk = (sa["hamming_k_bits"].get<double>() + sb["hamming_k_bits"].get<double>()) / 32;
  const double zero = (sa["zero_fraction"].get<double>() + sb["zero_fraction"].get<double>()) / 2;
  EXPECT_NEAR(j["predictions"]["energy_per_gemm_j"]["predicted"].get<double>(), 0.5 + 0.8 * hk - 0.4 * zero, 1e-4);

  // One file and one recipe; a file and a recipe for the same operand; files whose K differ.
  EXPECT_EQ(sh("gemm predict --engine bf16 --model " + model + " --a " + a + " --json").rc, 0);
  const auto both = sh("gemm predict --engine bf16 --model " + model + " --a " + a + " --recipe-a " + kRef);
  EXPECT_EQ(both.rc, 2);
  EXPECT_NE(both.out.find("--a and --recipe-a both name A"), std::string::npos) << both.out;
  const std::string narrow = (dir_ / "narrow.npy").string();
  wattlab::lab::write_npy(narrow, "<u2", {128, 256}, zeros.data(), 128 * 256 * 2);
  const auto k = sh("gemm predict --engine bf16 --model " + model + " --a " + a + " --b " + narrow);
  EXPECT_EQ(k.rc, 2);
  EXPECT_NE(k.out.find("their K differ"), std::string::npos) << k.out;
  const auto dtype = sh("gemm predict --engine bf16 --model " + model + " --a " + csv);
  EXPECT_EQ(dtype.rc, 2);
  EXPECT_NE(dtype.out.find("--a"), std::string::npos) << dtype.out;
}

TEST_F(GemmModelCli, PredictFromRecipesWithTheBuiltInModel) {
  const auto ref = sh("gemm predict --engine bf16 --shape 8192 --sample-rows 256 --recipe-a " + kRef +
                      " --recipe-b " + kRef + " --json");
  const auto zero = sh("gemm predict --engine bf16 --shape 8192 --sample-rows 256 --recipe-a " + kZero08 +
                       " --recipe-b " + kZero08 + " --json");
  ASSERT_EQ(ref.rc, 0) << ref.out;
  ASSERT_EQ(zero.rc, 0) << zero.out;
  const auto jr = nlohmann::json::parse(ref.out), jz = nlohmann::json::parse(zero.out);
  EXPECT_EQ(jr["kind"], "gemm_model_prediction");
  EXPECT_EQ(jr["gpu"], "H200");
  // The H200 measured 0.883 J for 80 % zeros against 1.157 J for the reference: the model agrees.
  const double e_ref = jr["predictions"]["energy_per_gemm_j"]["predicted"].get<double>();
  const double e_zero = jz["predictions"]["energy_per_gemm_j"]["predicted"].get<double>();
  EXPECT_LT(e_zero, e_ref);
  EXPECT_NEAR(e_ref, 1.157, 0.1);
  for (const char* t : {"energy_per_gemm_j", "mean_power_w", "mean_sm_clock_mhz"}) {
    const auto& p = jr["predictions"][t];
    EXPECT_LT(p["low95"].get<double>(), p["predicted"].get<double>()) << t;
    EXPECT_GT(p["high95"].get<double>(), p["predicted"].get<double>()) << t;
    EXPECT_FALSE(p["drivers"].empty()) << t;
  }
  EXPECT_NE(jr["operand_statistics"]["from"].get<std::string>().find("estimated from 256 of 8192 rows"),
            std::string::npos);

  const auto text = sh("gemm predict --engine bf16 --shape 8192 --sample-rows 256 --recipe-a " + kZero08 +
                       " --recipe-b " + kZero08);
  ASSERT_EQ(text.rc, 0) << text.out;
  for (const char* s : {"MODEL PREDICTION from H200 measurements, not a measurement", "energy per GEMM (predicted):",
                        "mean power (predicted):", "SM clock (mean) (predicted):", "95 % prediction interval",
                        "held-out R²", "what drives the predicted energy per GEMM", "zero_frac"})
    EXPECT_NE(text.out.find(s), std::string::npos) << s << "\n" << text.out;
  EXPECT_EQ(text.out.find("SIMULATED"), std::string::npos) << text.out;
  // Outside the training range: a warning naming the feature.
  // (bf16 -1.99 sets 15 of 16 bits; the training points set at most half.)
  const std::string dense = "\"constant(value=-1.99)\"";
  const auto far = sh("gemm predict --shape 8192 --sample-rows 256 --recipe-a " + dense + " --recipe-b " + dense);
  ASSERT_EQ(far.rc, 0) << far.out;
  EXPECT_NE(far.out.find("warning: popcount_frac = 0.9375 outside the training range"), std::string::npos) << far.out;
}

TEST_F(GemmModelCli, BadInputExitsTwoNamingTheProblem) {
  struct Case {
    std::string args, says;
  };
  const std::string csv = write("law.csv", law_csv(4, 4));
  const std::string few = write("few.csv", law_csv(1, 3));
  const std::string nocol = write("nocol.csv", "label.engine,label.M\nbf16,256\n");
  const std::string badnum = write("badnum.csv", [&] {
    std::string s = law_csv(1, 1);
    const auto at = s.find("\"normal(mean=0, std=1)\",0,") + 26;
    return s.replace(at, s.find(',', at) - at, "lots");
  }());
  const std::string sim = write("sim.csv", [&] {
    std::string s = law_csv(4, 4);
    for (auto at = s.find("std=1)\",0,"); at != std::string::npos; at = s.find("std=1)\",0,", at))
      s.replace(at + 8, 1, "1");
    return s;
  }());
  const std::string badmodel = write("bad.json", "{\"format\": \"something else\"}");
  const Case cases[] = {
      {"gemm fit --points " + (dir_ / "none.csv").string() + " --gpu X", "cannot read"},
      {"gemm fit --points " + nocol + " --gpu X", "no column 'label.N'"},
      {"gemm fit --points " + badnum + " --gpu X", "column 'count.energy_per_gemm_j' is 'lots', not a number"},
      {"gemm fit --points " + few + " --gpu X", "nothing could be fitted"},
      {"gemm fit --points " + sim + " --gpu X", "SIMULATED, not a measurement"},
      {"gemm fit --points " + csv + " --gpu X --features zero_frac,watts", "unknown feature 'watts'"},
      {"gemm fit --points " + csv, "--gpu is required"},
      {"gemm predict --engine fp16 --shape 8192", "has no fit for engine fp16 at 8192x8192x8192; it has: bf16 8192x8192x8192"},
      {"gemm predict --engine bf16 --shape 4096", "has no fit for engine bf16 at 4096x4096x4096"},
      {"gemm predict --engine bf16 --recipe-a \"normal(mean=0\"", "--recipe-a"},
      {"gemm predict --engine nope", "unknown engine"},
      {"gemm predict --model " + badmodel, "not a GEMM model file"},
      {"gemm predict --model " + (dir_ / "none.json").string(), "cannot read the model file"},
      {"gemm predict --sample-rows -1", "--sample-rows -1"},
  };
  for (const auto& c : cases) {
    const auto r = sh(c.args);
    EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
}

TEST_F(GemmModelCli, AnEngineWithTooFewPointsIsSaidWhileTheOthersFit) {
  const std::string csv = write("two.csv", law_csv(5, 4) + [] {
    const std::string s = law_csv(1, 2, "int8");
    return s.substr(s.find('\n') + 1);
  }());
  const auto r = sh("gemm fit --points " + csv + " --gpu X");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("int8 256x256x256: 2 points"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("energy_per_gemm_j: not fitted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no model file written"), std::string::npos) << r.out;
}

}  // namespace
