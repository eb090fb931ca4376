// Test helpers: the ML.ENERGY leaderboard files in tests/data, and a scratch folder for malformed inputs.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "diagnose/population.h"
#include "diagnose/readers.h"
#include <set>

namespace wattlab::diagnose::testing {

// A leaderboard file under tests/data/mlenergy-leaderboard-v3 (CTest passes the folder).
inline std::string leaderboard_file(const std::string& name) {
  const char* dir = std::getenv("WATTLAB_TEST_DATA_DIR");
  if (!dir) ADD_FAILURE() << "WATTLAB_TEST_DATA_DIR is not set (CTest sets it)";
  return std::string(dir ? dir : "/nonexistent") + "/mlenergy-leaderboard-v3/" + name;
}

inline const Dataset& chat() {
  static const Dataset d = read_leaderboard_json(leaderboard_file("lm-arena-chat.json"));
  return d;
}
inline const Dataset& gpqa() {
  static const Dataset d = read_leaderboard_json(leaderboard_file("gpqa.json"));
  return d;
}
inline const Dataset& images() {
  static const Dataset d = read_leaderboard_json(leaderboard_file("text-to-image.json"));
  return d;
}

inline Rows rows_of(const Dataset& d) {
  Rows r;
  for (const auto& x : d.rows) r.push_back(&x);
  return r;
}

// A fresh folder under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/wattlab-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = (path_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// One valid LLM row (numbers consistent with the invariants).
inline std::string llm_row_json(const std::string& overrides = "") {
  std::string s = R"({"model_id":"org/m","nickname":"M","architecture":"Dense Transformer","total_params_billions":8,
  "activated_params_billions":8,"weight_precision":"bfloat16","gpu_model":"H100","num_gpus":1,"tensor_parallel":1,
  "expert_parallel":1,"data_parallel":1,"max_num_seqs":64,"avg_batch_size":63.5,"avg_output_len":500,
  "energy_per_token_joules":0.2,"energy_per_request_joules":100,"avg_power_watts":600,
  "output_throughput_tokens_per_sec":3000,"median_itl_ms":20)";
  return s + overrides + "}";
}

}  // namespace wattlab::diagnose::testing
