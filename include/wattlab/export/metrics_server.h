// The HTTP side of `wattlab serve`: GET /metrics on cpp-httplib with a bounded, lazily grown
// thread pool, optional bearer token, and a cache so that many scrapers never queue on the
// meter's lock (at most one snapshot per min_age).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "wattlab/core/clock.h"
#include "wattlab/core/error.h"

namespace wattlab {

struct MetricsServerOptions {
  std::string address = "127.0.0.1";
  int port = 9464;               // 0: any free port (see MetricsServer::port())
  std::string token;             // non-empty: requests need "Authorization: Bearer <token>" (401 otherwise)
  std::size_t max_threads = 256;  // connection threads, started as needed; a keep-alive client holds one
  std::size_t keep_alive_max_requests = 10000;
  int keep_alive_timeout_s = 5;
  int64_t min_age_ns = 10'000'000;  // a cached exposition younger than this is served as is
};

// Counts of what the server has answered, for its own metrics.
struct ServerCounters {
  uint64_t scrapes = 0;        // 200 answers on /metrics
  uint64_t unauthorized = 0;   // 401 answers
  uint64_t renders = 0;        // expositions built
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
