// The /metrics server against hostile clients on loopback: bodies are refused unread (the token
// checked first), long or trickled request heads end their connection, and a scrape is answered
// while slow, idle or chatty clients hold every connection thread. Bounds on real time are
// generous (the expected times are well under a second) so a loaded CI machine does not fail them.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "raw_client.h"
#include "export/metrics_server.h"

namespace wattlab {
namespace {

using testing::RawClient;
using namespace std::chrono_literals;

struct Exporter {
  VirtualClock clock{0};
  std::unique_ptr<MetricsServer> server;
  explicit Exporter(MetricsServerOptions o) {
    o.port = 0;
    server = std::make_unique<MetricsServer>(o, [](const ServerCounters&) { return std::string("wattlab_up 1\n"); }, clock);
    const Status st = server->start();
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message());
  }
  int port() const { return server->port(); }
  ServerCounters counters() const { return server->counters(); }
  // Waits (bounded) until `n` connections hold a thread.
  bool wait_connections(uint64_t n) const {
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (counters().connections < n && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
    return counters().connections >= n;
  }
  // One GET /metrics on a fresh connection, waiting at most 15 s for the answer.
  int scrape(const std::string& token = "") const {
    httplib::Client c("127.0.0.1", port());
    c.set_connection_timeout(15, 0);
    c.set_read_timeout(15, 0);
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    auto r = c.Get("/metrics", h);
    return r ? r->status : -1;
  }
};

MetricsServerOptions with_token(std::string token) {
  MetricsServerOptions o;
  o.token = std::move(token);
  return o;
}

// The answer to `request` (sent whole), read until the server closes the connection.
std::string answer(int port, const std::string& request) {
  RawClient c(port);
  EXPECT_TRUE(c.connected());
  EXPECT_TRUE(c.send(request));
  const std::string out = c.read_to_close();
  EXPECT_TRUE(c.closed()) << "the connection stayed open after: " << out;
  return out;
}

TEST(HostileClients, BodiesAreRefusedUnreadAndTheTokenComesFirst) {
  Exporter s(with_token("s3cret"));
  const std::string body(1000, 'x');
  const std::string post = "POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 300000000\r\n";
  // No token: 401, and the connection ends without the body being read.
  std::string a = answer(s.port(), post + "\r\n" + body);
  EXPECT_EQ(a.rfind("HTTP/1.1 401 ", 0), 0u) << a;
  EXPECT_NE(a.find("WWW-Authenticate: Bearer realm=\"wattlab\""), std::string::npos) << a;
  EXPECT_NE(a.find("Connection: close"), std::string::npos) << a;
  // With the token: 413, whatever announces the body; "Expect: 100-continue" is not invited on.
  const std::string auth = "Authorization: Bearer s3cret\r\n";
  a = answer(s.port(), post + auth + "\r\n" + body);
  EXPECT_EQ(a.rfind("HTTP/1.1 413 ", 0), 0u) << a;
  a = answer(s.port(), "GET /metrics HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n" + auth + "\r\n5\r\nhello\r\n");
  EXPECT_EQ(a.rfind("HTTP/1.1 413 ", 0), 0u) << a;
  a = answer(s.port(), post + auth + "Expect: 100-continue\r\n\r\n");
  EXPECT_EQ(a.rfind("HTTP/1.1 413 ", 0), 0u) << a;
  // Other methods without a body: 405, naming the ones there are.
  a = answer(s.port(), "DELETE /metrics HTTP/1.1\r\nHost: a\r\n" + auth + "\r\n");
  EXPECT_EQ(a.rfind("HTTP/1.1 405 ", 0), 0u) << a;
  EXPECT_NE(a.find("Allow: GET, HEAD"), std::string::npos) << a;
  const ServerCounters c = s.counters();
  EXPECT_EQ(c.unauthorized, 1u);
  EXPECT_EQ(c.refused, 4u);
  EXPECT_EQ(c.scrapes, 0u);
  EXPECT_EQ(c.renders, 0u);
  EXPECT_EQ(s.scrape("s3cret"), 200);
}

TEST(HostileClients, AHugeBodyIsNeverRead) {
  Exporter s{MetricsServerOptions{}};
  RawClient c(s.port());
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send("POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 314572800\r\n\r\n"));
  const std::string chunk(64 * 1024, 'x');
  while (c.sent() < 314572800u && c.send(chunk)) {
  }
  // The server closed the connection: what got through is what the sockets' buffers hold, not
  // 300 MiB, and the send failed because of the close, not of the 20 s limit.
  EXPECT_LT(c.sent(), 64u << 20);
  EXPECT_TRUE(c.send_errno() == EPIPE || c.send_errno() == ECONNRESET) << "errno " << c.send_errno();
  EXPECT_EQ(s.counters().refused, 1u);
  EXPECT_EQ(s.scrape(), 200);
}

TEST(HostileClients, LongRequestHeadsAreRefused) {
  Exporter s{MetricsServerOptions{}};
  // A header longer than the 16 KiB head limit: 400, and the connection ends.
  const std::string a = answer(s.port(), "GET /metrics HTTP/1.1\r\nHost: a\r\nX-Long: " + std::string(20000, 'a') + "\r\n\r\n");
  EXPECT_EQ(a.rfind("HTTP/1.1 400 ", 0), 0u) << a;
  // A request line that never ends: closed once the limit is read, without an answer.
  RawClient c(s.port());
  ASSERT_TRUE(c.connected());
  c.send("GET /" + std::string(1 << 20, 'a'));
  c.read_to_close();
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(s.counters().refused, 2u);
}

TEST(HostileClients, TrickledHeadsAndIdleConnectionsTimeOut) {
  MetricsServerOptions o;
  o.timeout_ms = 300;
  Exporter s(o);
  RawClient idle(s.port());
  RawClient slow(s.port());
  ASSERT_TRUE(slow.send("GET /metrics HTTP/1.1\r\n"));
  // A header byte every 50 ms: each read is quick, the head never completes.
  const auto start = std::chrono::steady_clock::now();
  while (!slow.closed_now() && std::chrono::steady_clock::now() - start < 20s) {
    slow.send("X");
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(slow.closed()) << "a trickled request head was never timed out";
  idle.read_to_close();
  EXPECT_TRUE(idle.closed()) << "an idle connection was never timed out";
  EXPECT_EQ(s.counters().timed_out, 2u);
}

// Clients that hold a connection thread without finishing a request: even ones trickle header
// bytes, odd ones send nothing; each reconnects as soon as it is dropped.
void hold_threads(int port, int index, const std::atomic<bool>& stop) {
  while (!stop) {
    RawClient c(port);
    if (index % 2 == 0) c.send("GET /metrics HTTP/1.1\r\n");
    while (!stop && !c.closed_now()) {
      if (index % 2 == 0) c.send("X");
      std::this_thread::sleep_for(50ms);
    }
  }
}

TEST(HostileClients, ScrapesAreAnsweredWhileSlowClientsHoldEveryThread) {
  MetricsServerOptions o;
  o.max_threads = 4;
  o.timeout_ms = 1000;
  Exporter s(o);
  std::atomic<bool> stop{false};
  std::vector<std::thread> holders;
  for (int i = 0; i < 4; ++i) holders.emplace_back(hold_threads, s.port(), i, std::cref(stop));
  ASSERT_TRUE(s.wait_connections(4));
  // Queued behind the four, the scrape gets the first thread a slow client is dropped from (about
  // 1 s); a dropped client's new connection queues behind it.
  for (int k = 0; k < 3; ++k) EXPECT_EQ(s.scrape(), 200) << "scrape " << k;
  stop = true;
  for (auto& t : holders) t.join();
  EXPECT_GE(s.counters().timed_out, 1u);
}

TEST(HostileClients, KeepAliveClientsGiveTheirThreadsUpToWaitingOnes) {
  MetricsServerOptions o;
  o.max_threads = 2;
  o.keep_alive_max_requests = 1'000'000'000;
  Exporter s(o);
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::vector<std::thread> chatty;
  for (int i = 0; i < 2; ++i)
    chatty.emplace_back([&] {
      httplib::Client c("127.0.0.1", s.port());
      c.set_keep_alive(true);
      while (!stop)
        if (auto r = c.Get("/metrics"); r && r->status == 200) ++answered;
    });
  ASSERT_TRUE(s.wait_connections(2));
  EXPECT_EQ(s.scrape(), 200);
  stop = true;
  for (auto& t : chatty) t.join();
  EXPECT_GT(answered.load(), 0);
}

}  // namespace
}  // namespace wattlab
