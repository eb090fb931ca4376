// The exporter's HTTP server: cpp-httplib with each connection's time and each request's size
// bounded, and with what it must never read refused before routing. httplib 0.11 reads a request
// line or header of any length, gives every read its own timeout (so a client trickling a byte
// every few seconds is never dropped) and reads a body before a GET handler can refuse it; here
// each connection runs this server's own loop (process_and_close_socket) over a RequestStream
// (http_connection.h), and the admission (http_admission.h) runs before httplib reads any body.
//
// Per connection: the next request's head must be complete within `timeout` of the connection's
// start or of its previous answer, and each answer taken within `timeout`, else it is closed; a
// request head over max_head_bytes is refused (400) and the connection closed; between requests,
// a connection gives its thread up at once when another connection waits for one. So with every
// thread held by clients that are slow, idle or refused, a new connection is served within about
// `timeout`.
#pragma once
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace wattlab::http {

class GrowingPool;

struct Limits {
  std::size_t max_threads = 256;
  std::chrono::milliseconds timeout{5000};
  std::size_t max_head_bytes = 16 * 1024;
  std::size_t keep_alive_max_requests = 10000;
  std::optional<std::string> token;  // set: requests need "Authorization: Bearer <token>"
};

struct GuardCounters {
  std::atomic<uint64_t> unauthorized{0};  // 401 answers
  std::atomic<uint64_t> refused{0};       // 413, 405, and request heads over the limit
  std::atomic<uint64_t> timed_out{0};     // connections closed at the timeout with a request unfinished
  std::atomic<uint64_t> connections{0};   // connections holding a thread now
};

class GuardedServer final : public httplib::Server {
 public:
  explicit GuardedServer(Limits limits);
  const GuardCounters& guard_counters() const { return counters_; }

 private:
  bool process_and_close_socket(socket_t sock) override;
  bool stopping() const { return svr_sock_ == INVALID_SOCKET; }
  bool others_wait() const;

  Limits limits_;
  GuardCounters counters_;
  std::atomic<GrowingPool*> pool_{nullptr};  // made by httplib's listen, alive while it runs
};

}  // namespace wattlab::http
