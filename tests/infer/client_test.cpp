// The streaming client and load generator against the fake server: timing, batching, faults.
#include <gtest/gtest.h>

#include "infer/fake_openai_server.h"
#include "infer/client.h"
#include "infer/metrics_scrape.h"

namespace wattlab::infer {
namespace {

BenchRequest completion(std::string prompt, int max_tokens) {
  BenchRequest r;
  r.api = Api::completions;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  r.id = r.prompt;
  return r;
}

TEST(Client, StreamsTokensAndEveryFaultIsARecordedFailure) {
  testing::FakeOpenAiServer srv({.tokens = 0, .token_delay_ms = 2, .max_concurrent = 3});
  ServerOptions o;
  o.base_url = srv.base_url();
  o.model = "fake";
  o.timeout_s = 10;
  std::vector<BenchRequest> rs{completion("ok", 6), completion("FAULT:500", 6), completion("FAULT:disconnect", 6),
                               completion("FAULT:malformed", 6), completion("FAULT:usage", 6)};
  BenchRequest chat;
  chat.api = Api::chat;
  chat.messages_json = R"([{"role":"user","content":"hello"}])";
  chat.max_tokens = 4;
  chat.id = "chat";
  rs.push_back(chat);
  const auto t = run_load(rs, o, {}, MonotonicClock::instance());
  ASSERT_EQ(t.size(), rs.size());
  EXPECT_TRUE(t[0].ok) << t[0].error;
  EXPECT_EQ(t[0].output_tokens(), 6u);
  EXPECT_EQ(t[0].usage_completion_tokens, 6);
  EXPECT_GT(t[0].t_first_token_ns, t[0].t_send_ns);
  EXPECT_GE(t[0].t_finish_ns, t[0].token_t_ns.back());
  EXPECT_FALSE(t[1].ok);
  EXPECT_EQ(t[1].http_status, 500);
  EXPECT_NE(t[1].error.find("HTTP 500"), std::string::npos);
  EXPECT_FALSE(t[2].ok);
  EXPECT_LT(t[2].output_tokens(), 6u);
  EXPECT_FALSE(t[2].error.empty());
  EXPECT_FALSE(t[3].ok);
  EXPECT_NE(t[3].error.find("malformed"), std::string::npos) << t[3].error;
  EXPECT_TRUE(t[4].ok);  // a wrong usage count is reported, not a failure
  EXPECT_EQ(t[4].usage_completion_tokens, 7);
  EXPECT_TRUE(t[5].ok) << t[5].error;
  EXPECT_EQ(t[5].output_tokens(), 4u);
  EXPECT_LE(srv.max_running_seen(), 3);
}

TEST(Client, UnreachableServerAndTimeoutFailWithoutThrowing) {
  ServerOptions o;
  o.base_url = "http://127.0.0.1:1/v1";  // nothing listens on port 1
  o.model = "x";
  o.timeout_s = 2;
  auto t = run_request(completion("a", 2), 0, o, MonotonicClock::instance());
  EXPECT_FALSE(t.ok);
  EXPECT_FALSE(t.error.empty());
  testing::FakeOpenAiServer slow({.tokens = 50, .token_delay_ms = 20, .max_concurrent = 1});
  o.base_url = slow.base_url();
  o.timeout_s = 0.2;
  t = run_request(completion("a", 50), 0, o, MonotonicClock::instance());
  EXPECT_FALSE(t.ok);
  EXPECT_NE(t.error.find("timed out"), std::string::npos) << t.error;
}

TEST(Client, ScraperReadsTheServersGauges) {
  testing::FakeOpenAiServer srv({.tokens = 20, .token_delay_ms = 10, .max_concurrent = 2});
  MetricsScraper scraper("http://127.0.0.1:" + std::to_string(srv.port()) + "/metrics", MonotonicClock::instance(),
                         50'000'000);
  scraper.start();
  ServerOptions o;
  o.base_url = srv.base_url();
  o.model = "fake";
  std::vector<BenchRequest> rs(4, completion("x", 20));
  const auto t = run_load(rs, o, {}, MonotonicClock::instance());
  scraper.stop();
  const auto s = scraper.samples();
  ASSERT_GE(s.size(), 3u);
  EXPECT_EQ(scraper.failures(), 0);
  double max_running = 0;
  for (const auto& x : s) max_running = std::max(max_running, x.running.value_or(0));
  EXPECT_DOUBLE_EQ(max_running, 2.0);  // the cap: 2 run, 2 wait
}

}  // namespace
}  // namespace wattlab::infer
