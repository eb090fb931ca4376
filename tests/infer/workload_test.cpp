// Synthetic workloads: lengths reproducible from a seed, with the asked mean (a statistical check
// on fixed seeds, so it is deterministic), caps, and the prompts' word counts.
#include "infer/workload.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "wattlab/core/error.h"

namespace wattlab::infer {
namespace {

struct Moments {
  double mean = 0, sd = 0;
  int64_t max = 0, min = 0;
};

Moments draw(const LengthDistribution& d, uint64_t seed, int n) {
  LengthSampler s(d, seed);
  double sum = 0, sq = 0;
  Moments m;
  m.min = d.cap;
  for (int i = 0; i < n; ++i) {
    const auto x = s.next();
    sum += static_cast<double>(x);
    sq += static_cast<double>(x) * static_cast<double>(x);
    m.max = std::max(m.max, x);
    m.min = std::min(m.min, x);
  }
  m.mean = sum / n;
  m.sd = std::sqrt(sq / n - m.mean * m.mean);
  return m;
}

// The sample mean of n draws lies within 4 standard errors of the law's mean (a 1-in-15,000 miss
// for a correct sampler; the seeds are fixed, so the outcome never changes between runs).
void expect_mean(const LengthDistribution& d, uint64_t seed) {
  const int n = 40000;
  const Moments m = draw(d, seed, n);
  const double se = m.sd / std::sqrt(static_cast<double>(n));
  EXPECT_NEAR(m.mean, d.mean, 4 * se + 0.5 / std::sqrt(n)) << to_string(d.kind) << " mean " << d.mean << " seed " << seed;
  EXPECT_GE(m.min, 1);
  EXPECT_LE(m.max, d.cap);
}

TEST(Workload, GeometricLengthsHaveTheMeanOfTheLeaderboardsChat) {
  // 396.6: Llama-3.1-8B's mean avg_output_len on lm-arena-chat; 4096: the leaderboard's cap.
  const LengthDistribution d{LengthKind::geometric, 396.6, 1.0, 4096};
  EXPECT_NEAR(capped_mean(d), 396.6, 1e-6);
  for (uint64_t seed : {1, 2, 3}) expect_mean(d, seed);
  // Geometric: sd ~ mean (coefficient of variation sqrt(1 - p)).
  const Moments m = draw(d, 7, 40000);
  EXPECT_NEAR(m.sd / m.mean, 1.0, 0.05);
}

TEST(Workload, TheCapIsInTheMean) {
  // GPQA's mean of 5808 under the leaderboard's 32768 cap: 0.35 % of draws would exceed it, so the
  // law's parameter is solved for the capped mean, and the capped draws still average 5808.
  const LengthDistribution d{LengthKind::geometric, 5808, 1.0, 32768};
  EXPECT_NEAR(capped_mean(d), 5808, 1e-6);
  const double q_naive = 1 - 1.0 / 5808;
  EXPECT_LT((1 - std::pow(q_naive, 32768.0)) / (1 - q_naive), 5808 - 10);  // ignoring the cap would undershoot
  expect_mean(d, 11);
  const LengthDistribution tight{LengthKind::geometric, 50, 1.0, 60};  // a cap near the mean
  expect_mean(tight, 12);
}

TEST(Workload, LognormalAndFixedLengths) {
  const LengthDistribution ln{LengthKind::lognormal, 256, 0.8, 8192};
  EXPECT_NEAR(capped_mean(ln), 256, 1e-6);
  expect_mean(ln, 21);
  const LengthDistribution fx{LengthKind::fixed, 99.6, 1.0, 4096};
  const Moments m = draw(fx, 5, 100);
  EXPECT_EQ(m.min, 100);
  EXPECT_EQ(m.max, 100);
}

TEST(Workload, TheSameSeedGivesTheSameRequestsAndAnotherSeedOthers) {
  WorkloadSpec w;
  w.api = Api::chat;
  w.input = {LengthKind::geometric, 20, 1.0, 8192};
  w.output = {LengthKind::geometric, 40, 1.0, 4096};
  const auto a = synthetic_requests(w, 50, 7), b = synthetic_requests(w, 50, 7), c = synthetic_requests(w, 50, 8);
  ASSERT_EQ(a.size(), 50u);
  int differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].max_tokens, b[i].max_tokens);
    EXPECT_EQ(a[i].messages_json, b[i].messages_json);
    differ += a[i].max_tokens != c[i].max_tokens;
  }
  EXPECT_GT(differ, 40);
  EXPECT_EQ(a[3].id, "s7-3");
  // The prompt has as many words as its drawn input length.
  for (const auto& r : a) {
    const auto msgs = nlohmann::json::parse(r.messages_json);
    ASSERT_EQ(msgs.size(), 1u);
    EXPECT_EQ(msgs[0]["role"], "user");
    std::istringstream words(msgs[0]["content"].get<std::string>());
    int n = 0;
    for (std::string word; words >> word;) ++n;
    EXPECT_EQ(n, r.input_tokens);
    EXPECT_GE(r.max_tokens, 1);
  }
  w.api = Api::completions;
  const auto p = synthetic_requests(w, 3, 7);
  EXPECT_EQ(p[0].api, Api::completions);
  EXPECT_TRUE(p[0].messages_json.empty());
  EXPECT_EQ(p[0].max_tokens, a[0].max_tokens);  // lengths do not depend on the API
}

TEST(Workload, BadLengthsAreUsageErrorsNamingTheProblem) {
  auto msg = [](const LengthDistribution& d) {
    try {
      validate(d, "output lengths");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(msg({LengthKind::geometric, 0.5, 1, 100}).find("at least 1 token"), std::string::npos);
  EXPECT_NE(msg({LengthKind::geometric, 5000, 1, 4096}).find("below the cap 4096"), std::string::npos);
  EXPECT_NE(msg({LengthKind::lognormal, 10, 0, 4096}).find("sigma"), std::string::npos);
  EXPECT_EQ(msg({LengthKind::fixed, 4096, 1, 4096}), "");
  EXPECT_THROW(parse_length_kind("uniform"), UsageError);
  EXPECT_EQ(parse_length_kind("lognormal"), LengthKind::lognormal);
}

}  // namespace
}  // namespace wattlab::infer
