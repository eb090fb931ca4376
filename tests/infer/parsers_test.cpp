// Request files, SSE streams, Prometheus text, arrivals and quantiles: the pure parts of infer.
#include <gtest/gtest.h>

#include <sstream>

#include "wattlab/core/error.h"
#include "infer/bench_result.h"
#include "infer/client.h"
#include "infer/latency.h"
#include "infer/metrics_scrape.h"
#include "infer/request_set.h"
#include "infer/sse_stream.h"

namespace wattlab::infer {
namespace {

TEST(RequestSet, PromptsMessagesIdsAndErrorsNamingTheLine) {
  std::istringstream in(
      "{\"prompt\": \"hi\", \"max_tokens\": 4, \"id\": \"a\"}\n\n# comment\n"
      "{\"messages\": [{\"role\": \"user\", \"content\": \"yo\"}], \"max_tokens\": 2}\n");
  const auto rs = parse_request_set(in, "f.jsonl");
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].api, Api::completions);
  EXPECT_EQ(rs[0].id, "a");
  EXPECT_EQ(rs[1].api, Api::chat);
  EXPECT_EQ(rs[1].id, "line 4");
  EXPECT_EQ(rs[1].max_tokens, 2);
  for (const char* bad : {"{\"prompt\": \"x\"}", "{\"prompt\": \"x\", \"max_tokens\": 0}", "[1]", "nope",
                          "{\"prompt\": \"x\", \"messages\": [], \"max_tokens\": 1}"}) {
    std::istringstream b(std::string("{\"prompt\": \"ok\", \"max_tokens\": 1}\n") + bad + "\n");
    try {
      parse_request_set(b, "f.jsonl");
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("f.jsonl line 2"), std::string::npos) << e.what();
    }
  }
}

TEST(SseStream, CountsTextChunksAcrossSplitReadsAndReadsUsage) {
  SseStream s(Api::chat);
  const std::string body =
      ": keep-alive\n\ndata: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"He\"}}]}\r\n\r\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"llo\"},\"finish_reason\":\"stop\"}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n";
  int tokens = 0;
  for (std::size_t i = 0; i < body.size(); i += 7) tokens += s.feed(body.substr(i, 7));  // split anywhere
  EXPECT_EQ(tokens, 2);  // the role-only chunk carries no text
  EXPECT_TRUE(s.done());
  EXPECT_TRUE(s.error().empty()) << s.error();
  EXPECT_EQ(s.usage_completion_tokens(), 3);
  EXPECT_EQ(s.usage_prompt_tokens(), 5);
  SseStream c(Api::completions);
  EXPECT_EQ(c.feed("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"\"}]}\n\n"), 1);
}

TEST(SseStream, MalformedLinesEndTheStreamWithAReason) {
  SseStream a(Api::completions);
  a.feed("data: {\"choices\":[{\"text\":\"a\"}]}\n\ngarbage here\n\n");
  EXPECT_NE(a.error().find("malformed SSE line 3"), std::string::npos) << a.error();
  SseStream b(Api::completions);
  b.feed("data: {not json\n\n");
  EXPECT_NE(b.error().find("not JSON"), std::string::npos);
  SseStream c(Api::completions);
  c.feed("data: {\"object\":\"x\"}\n\n");
  EXPECT_NE(c.error().find("no \"choices\""), std::string::npos);
  SseStream d(Api::completions);
  d.feed("data: {\"error\":{\"message\":\"oom\"}}\n\n");
  EXPECT_NE(d.error().find("oom"), std::string::npos);
}

TEST(Prometheus, SumsLabelSetsAndSkipsOthers) {
  const std::string text =
      "# HELP vllm:num_requests_running x\nvllm:num_requests_running{engine=\"0\"} 3\n"
      "vllm:num_requests_running{engine=\"1\"} 4.5 1700000000\nvllm:num_requests_waiting 2\n"
      "vllm:num_requests_running_total 99\nvllm:gpu_cache_usage_perc{a=\"b\"} 0.25\nbroken{\n";
  const auto v = parse_prometheus_text(text, vllm_metric_names());
  EXPECT_DOUBLE_EQ(v.at("vllm:num_requests_running"), 7.5);
  EXPECT_DOUBLE_EQ(v.at("vllm:num_requests_waiting"), 2);
  const auto s = sample_from(v, 10);
  EXPECT_DOUBLE_EQ(*s.kv_cache_usage, 0.25);
  std::vector<MetricsSample> ss{s, sample_from(v, 20), sample_from({{"vllm:num_requests_running", 1.5}}, 30)};
  const auto m = mean_over(ss, 15, 30);
  EXPECT_EQ(m.samples, 2u);
  EXPECT_DOUBLE_EQ(*m.running, 4.5);
}

// Each sample is finite, but their sum need not be: such a metric is left out, never infinite
// (fuzz/fuzz_prometheus_scrape.cpp checks that every value is finite; the input is in its corpus
// as crash-sum-past-double-range).
TEST(Prometheus, SumPastDoubleRangeIsLeftOut) {
  const auto v = parse_prometheus_text(
      "vllm:num_requests_running{engine=\"0\"} 1.7e308\nvllm:num_requests_running{engine=\"1\"} 1.7e308\n"
      "vllm:num_requests_waiting -1e308\nvllm:num_requests_waiting 1e308\n",
      vllm_metric_names());
  EXPECT_EQ(v.count("vllm:num_requests_running"), 0u);
  EXPECT_DOUBLE_EQ(v.at("vllm:num_requests_waiting"), 0.0);
  EXPECT_FALSE(sample_from(v, 0).running.has_value());
}

TEST(Arrivals, AllAtOnceOrSeededPoisson) {
  for (auto t : arrival_offsets_ns(5, 0, 1)) EXPECT_EQ(t, 0);
  const auto a = arrival_offsets_ns(20000, 50.0, 7), b = arrival_offsets_ns(20000, 50.0, 7);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, arrival_offsets_ns(20000, 50.0, 8));
  const double mean_gap_s = static_cast<double>(a.back()) * 1e-9 / 19999;
  EXPECT_NEAR(mean_gap_s, 0.02, 0.02 * 0.05);  // 1/rate, 5% (about 7 standard errors)
}

TEST(Quantiles, NearestRankWithOrderStatisticInterval) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  const auto q = quantile(v, 0.5);
  EXPECT_EQ(q.value, 50);
  EXPECT_LT(q.lo, 50);
  EXPECT_GT(q.hi, 50);
  EXPECT_GE(q.lo, 38);
  EXPECT_LE(q.hi, 62);
  EXPECT_EQ(quantile({}, 0.5).n, 0u);
  EXPECT_EQ(quantile({3.0}, 0.99).value, 3.0);
}

TEST(Tokens, ReconcilesChunksWithUsage) {
  RequestTimeline a, b, c;
  a.ok = b.ok = c.ok = true;
  a.token_t_ns = {1, 2, 3};
  a.usage_completion_tokens = 3;
  b.token_t_ns = {1, 2};
  b.usage_completion_tokens = 4;
  b.index = 1;
  c.token_t_ns = {1};
  const auto t = reconcile_tokens(std::vector<RequestTimeline>{a, b, c});
  EXPECT_EQ(t.chunk_tokens, 6);
  EXPECT_EQ(t.usage_tokens, 7);
  EXPECT_EQ(t.requests_with_usage, 2);
  EXPECT_EQ(t.requests_without_usage, 1);
  ASSERT_EQ(t.differences.size(), 1u);
  EXPECT_EQ(t.differences[0].index, 1u);
}

TEST(Url, SplitsAndRejects) {
  EXPECT_EQ(split_url("http://h:8000/v1/").path, "/v1");
  EXPECT_EQ(split_url("http://h:8000").scheme_host_port, "http://h:8000");
  EXPECT_THROW(split_url("h:8000/v1"), UsageError);
  EXPECT_THROW(split_url("ftp://h/v1"), UsageError);
}

}  // namespace
}  // namespace wattlab::infer
