// The HTTP side of `wattlab serve`: GET /metrics on cpp-httplib with a bounded, lazily grown
// thread pool, optional bearer token, and a cache so that many scrapers never queue on the
// meter's lock (at most one snapshot per min_age). Hostile clients are bounded: no request body
// is read (refused before routing, with the token checked first), a request head must arrive
// within `timeout_ms` and fit in max_head_bytes, and slow or idle clients give their threads up
// (src/export/guarded_server.h, docs/export.md).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "wattlab/core/clock.h"
#include "wattlab/core/error.h"

namespace wattlab {

struct MetricsServerOptions {
  std::string address = "127.0.0.1";
  int port = 9464;               // 0: any free port (see MetricsServer::port())
  // Set: requests need "Authorization: Bearer <token>" (401 otherwise). Set but empty is refused
  // by start(): it would let anyone in.
  std::optional<std::string> token;
  std::size_t max_threads = 256;  // connection threads, started as needed; a keep-alive client holds one
  std::size_t keep_alive_max_requests = 10000;
  // A connection must deliver its next request head within this of connecting or of its previous
  // answer, and take each answer within it; else it is closed. Also the keep-alive idle time.
  int64_t timeout_ms = 5000;
  std::size_t max_head_bytes = 16 * 1024;  // request line and headers; a longer head is refused
  int64_t min_age_ns = 10'000'000;  // a cached exposition younger than this is served as is
};

// Counts of what the server has answered, for its own metrics.
struct ServerCounters {
  uint64_t scrapes = 0;        // 200 answers on /metrics
  uint64_t unauthorized = 0;   // 401 answers
  uint64_t renders = 0;        // expositions built
  uint64_t refused = 0;        // 413 (a body), 405 (not GET or HEAD), request heads over the limit
  uint64_t timed_out = 0;      // connections closed at the timeout with their request unfinished
  uint64_t connections = 0;    // connections holding a thread now
};

class MetricsServer {
 public:
  using Render = std::function<std::string(const ServerCounters&)>;
  // `render` builds the exposition; it is called from one connection thread at a time.
  MetricsServer(MetricsServerOptions options, Render render, Clock& clock);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds and starts listening on a background thread. An error names the address and why.
  Status start();
  int port() const;  // the bound port
  void stop();       // stops accepting, closes connections, joins
  ServerCounters counters() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// True for 127.0.0.0/8, ::1 and "localhost": addresses only this machine can reach.
bool is_loopback_address(const std::string& address);

}  // namespace wattlab
