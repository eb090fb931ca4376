// The steady-state accounting on hand-built timelines with known answers.
#include "infer/steady_state.h"

#include <gtest/gtest.h>

#include "meter/sim_fixture.h"

namespace wattlab::infer {
namespace {

constexpr int64_t kS = 1'000'000'000;

// A request whose tokens arrive every `gap_s` from `first_s` to `finish_s` (inclusive).
RequestTimeline req(std::size_t i, double first_s, double finish_s, double gap_s = 1.0) {
  RequestTimeline r;
  r.index = i;
  r.id = "r" + std::to_string(i);
  r.ok = true;
  r.t_send_ns = 0;
  r.t_first_token_ns = static_cast<int64_t>(first_s * kS);
  r.t_finish_ns = static_cast<int64_t>(finish_s * kS);
  for (double t = first_s; t <= finish_s + 1e-9; t += gap_s) r.token_t_ns.push_back(static_cast<int64_t>(t * kS));
  return r;
}

WindowEnergy joules(double e) {
  WindowEnergy w;
  w.available = true;
  w.energy_j = e;
  w.uncertainty_j = e * 0.01;
  w.systematic_j = e * 0.03;
  return w;
}

TEST(SteadyWindow, BeginIsTheBthFirstTokenEndTheNMinusBMinus1thFinish) {
  // N = 6, B = 2. First tokens at 1,2,3,4,5,6 -> begin = 2nd = 2 s. Finishes at 30,31,...,35
  // -> end = (6-2-1) = 3rd smallest = 32 s.
  std::vector<RequestTimeline> rs;
  for (int i = 0; i < 6; ++i) rs.push_back(req(static_cast<std::size_t>(5 - i), 6.0 - i, 35.0 - i));
  const auto w = find_steady_window(rs, 2);
  ASSERT_TRUE(w.found) << w.reason;
  EXPECT_EQ(w.t_begin_ns, 2 * kS);
  EXPECT_EQ(w.t_end_ns, 32 * kS);
  EXPECT_EQ(w.n_requests, 6);
}

TEST(SteadyWindow, FailedRequestsAreNotCounted) {
  std::vector<RequestTimeline> rs;
  for (int i = 0; i < 6; ++i) rs.push_back(req(static_cast<std::size_t>(i), 1.0 + i, 30.0 + i));
  rs[0].ok = false;  // N becomes 5: begin = 2nd of {2..6} = 3 s, end = (5-2-1) = 2nd of {31..35} = 32 s
  const auto w = find_steady_window(rs, 2);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(w.n_requests, 5);
  EXPECT_EQ(w.t_begin_ns, 3 * kS);
  EXPECT_EQ(w.t_end_ns, 32 * kS);
}

TEST(SteadyWindow, TooFewRequestsOrNoOverlapHasNoWindow) {
  std::vector<RequestTimeline> rs{req(0, 1, 10), req(1, 1, 10), req(2, 1, 10)};
  auto w = find_steady_window(rs, 2);  // needs N >= 4
  EXPECT_FALSE(w.found);
  EXPECT_NE(w.reason.find("at least batch cap + 2 = 4"), std::string::npos) << w.reason;
  // Sequential requests: the 1st finishes before the 2nd has its first token.
  std::vector<RequestTimeline> seq{req(0, 1, 2), req(1, 3, 4), req(2, 5, 6), req(3, 7, 8)};
  w = find_steady_window(seq, 2);
  EXPECT_FALSE(w.found);
  EXPECT_NE(w.reason.find("never held the batch cap"), std::string::npos) << w.reason;
}

// Two batches of B = 2 requests: a,b run [0,40]; c,d run [0,40] after queueing; known window.
TEST(SteadyAccount, EnergyPerTokenAndBothPerRequestSplits) {
  // N = 4, B = 1 -> begin = first first-token, end = (4-1-1) = 2nd finish.
  std::vector<RequestTimeline> rs{req(0, 0, 30), req(1, 0, 40), req(2, 10, 40, 2.0), req(3, 20, 50)};
  const auto w = find_steady_window(rs, 1);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(w.t_begin_ns, 0);
  EXPECT_EQ(w.t_end_ns, 40 * kS);
  const auto a = account_steady_state(rs, w, joules(400.0));
  // Tokens in [0,40]: r0 31, r1 41, r2 16 (10,12,..,40), r3 21 (20..40) = 109.
  EXPECT_EQ(a.tokens, 31 + 41 + 16 + 21);
  EXPECT_DOUBLE_EQ(a.energy_per_token_j, 400.0 / 109);
  EXPECT_DOUBLE_EQ(a.energy_per_token_uncertainty_j, 4.0 / 109);
  EXPECT_DOUBLE_EQ(a.energy_per_token_systematic_j, 12.0 / 109);
  EXPECT_DOUBLE_EQ(a.avg_power_w, 10.0);
  // Active time in the window: 30 + 40 + 30 + 20 = 120 s over 40 s -> mean running 3.
  EXPECT_DOUBLE_EQ(a.avg_running_client, 3.0);
  ASSERT_EQ(a.per_request.size(), 4u);
  EXPECT_DOUBLE_EQ(a.per_request[0].apportioned_j, 400.0 * 30 / 120);
  EXPECT_DOUBLE_EQ(a.per_request[3].apportioned_j, 400.0 * 20 / 120);
  EXPECT_DOUBLE_EQ(a.per_request[2].token_share_j, 400.0 * 16 / 109);
  double sum_app = 0, sum_tok = 0;
  for (const auto& p : a.per_request) sum_app += p.apportioned_j, sum_tok += p.token_share_j;
  EXPECT_NEAR(sum_app, 400.0, 1e-9);
  EXPECT_NEAR(sum_tok, 400.0, 1e-9);
  EXPECT_EQ(a.requests_finished, 3);  // r0 at 30, r1 and r2 at 40
  // 40 s >= 20 s; 3/1 >= 0.85; J/token > 0: stable.
  EXPECT_TRUE(a.stability.stable()) << (a.stability.flags.empty() ? "" : a.stability.flags[0]);
}

TEST(SteadyAccount, StabilityRulesAreFlaggedNotPassed) {
  // B = 4 but only ~1 request running at a time, over 10 s.
  std::vector<RequestTimeline> rs;
  for (int i = 0; i < 8; ++i) rs.push_back(req(static_cast<std::size_t>(i), i * 1.0, i * 1.0 + 9.5));
  const auto w = find_steady_window(rs, 4);
  ASSERT_TRUE(w.found);  // begin = 3 s, end = (8-4-1) = 3rd finish = 11.5 s
  EXPECT_EQ(w.t_begin_ns, 3 * kS);
  EXPECT_EQ(w.t_end_ns, static_cast<int64_t>(11.5 * kS));
  const auto a = account_steady_state(rs, w, joules(85.0));
  EXPECT_FALSE(a.stability.window_long_enough);
  EXPECT_TRUE(a.stability.energy_positive);
  ASSERT_EQ(a.stability.flags.size(), a.stability.batch_held ? 1u : 2u);
  EXPECT_NE(a.stability.flags[0].find("shorter than 20 s"), std::string::npos);
  EXPECT_FALSE(a.stability.stable());
  // The server's mean running requests, when scraped, decides the batch rule.
  const auto low = account_steady_state(rs, w, joules(85.0), 3.0);  // 3/4 = 0.75 < 0.85
  EXPECT_FALSE(low.stability.batch_held);
  EXPECT_DOUBLE_EQ(low.stability.batch_fraction, 0.75);
  EXPECT_NE(low.stability.flags.back().find("server metrics"), std::string::npos);
  const auto held = account_steady_state(rs, w, joules(85.0), 3.5);
  EXPECT_TRUE(held.stability.batch_held);
  // No energy: flagged, not a silent 0 J/token.
  WindowEnergy none;
  none.issue = "gpu:0: read errors";
  const auto ne = account_steady_state(rs, w, none, 4.0);
  EXPECT_FALSE(ne.stability.energy_positive);
  EXPECT_NE(ne.stability.flags.back().find("gpu:0: read errors"), std::string::npos);
}

// Energy over a past span read off the timeline of a constant-power simulated board: the
// meter's window with explicit edges, opened after the fact, as serve-bench does.
TEST(SteadyAccount, EnergyPerTokenOnAConstantPowerSim) {
  testing::SimMeter m(testing::exact_board("step 300W 100s"));
  const int64_t t0 = m.t0();
  std::vector<RequestTimeline> rs;
  for (int i = 0; i < 6; ++i) {
    auto r = req(static_cast<std::size_t>(i), 2.0 + i, 40.0 + i, 0.5);
    r.t_first_token_ns += t0, r.t_finish_ns += t0;
    for (auto& t : r.token_t_ns) t += t0;
    rs.push_back(r);
  }
  m.meter->advance_to(t0 + 60 * kS);  // the benchmark is over; the window is known only now
  const auto w = find_steady_window(rs, 2);  // begin 3 s, end (6-2-1) = 3rd finish = 42 s
  ASSERT_TRUE(w.found);
  const WindowId id = m.meter->add_window("steady", w.t_begin_ns, w.t_end_ns);
  const WindowResult r = m.meter->wait_result(id);
  ASSERT_TRUE(r.final);
  ASSERT_TRUE(r.domains.at(0).available);
  WindowEnergy e;
  e.available = true;
  e.energy_j = r.domains[0].energy_j;
  e.uncertainty_j = r.domains[0].uncertainty_j;
  const auto a = account_steady_state(rs, w, e);
  // 300 W x 39 s = 11700 J; tokens every 0.5 s of each request inside [3, 42].
  EXPECT_NEAR(e.energy_j, 11700.0, 11700.0 * 0.01);
  int64_t tokens = 0;
  for (const auto& q : rs)
    for (auto t : q.token_t_ns) tokens += (t >= w.t_begin_ns && t <= w.t_end_ns) ? 1 : 0;
  EXPECT_EQ(a.tokens, tokens);
  EXPECT_NEAR(a.energy_per_token_j, 11700.0 / static_cast<double>(tokens), 11700.0 * 0.01 / static_cast<double>(tokens));
  EXPECT_NEAR(a.avg_power_w, 300.0, 3.0);
  EXPECT_TRUE(a.stability.window_long_enough);
}

}  // namespace
}  // namespace wattlab::infer
