#include "export/metrics_server.h"

#include <arpa/inet.h>
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "guarded_server.h"
#include "export/prometheus.h"

namespace wattlab {

class MetricsServer::Impl {
 public:
  Impl(MetricsServerOptions o, Render r, Clock& c)
      : opt(std::move(o)), render(std::move(r)), clock(c), server(limits(opt)) {}

  static http::Limits limits(const MetricsServerOptions& o) {
    http::Limits l;
    l.max_threads = o.max_threads;
    l.timeout = std::chrono::milliseconds(std::max<int64_t>(o.timeout_ms, 1));
    l.max_head_bytes = o.max_head_bytes;
    l.keep_alive_max_requests = std::max<std::size_t>(o.keep_alive_max_requests, 1);
    l.token = o.token;
    return l;
  }

  // The newest exposition, rebuilt by one thread at a time when older than min_age; the others
  // serve the one there is rather than queue behind it.
  std::shared_ptr<const std::string> exposition() {
    const int64_t now = clock.now_ns();
    {
      std::lock_guard lk(cache_mu);
      if (cached && now - cached_at_ns < opt.min_age_ns) return cached;
    }
    std::unique_lock build(build_mu, std::defer_lock);
    if (!build.try_lock()) {
      std::shared_ptr<const std::string> c;
      {
        std::lock_guard lk(cache_mu);
        c = cached;
      }
      if (c) return c;
      build.lock();  // nothing built yet: wait for the first one
      std::lock_guard lk(cache_mu);
      if (cached) return cached;
    }
    ServerCounters snap = counters();
    ++snap.renders;
    auto text = std::make_shared<const std::string>(render(snap));
    renders.fetch_add(1);
    std::lock_guard lk(cache_mu);
    cached = text;
    cached_at_ns = clock.now_ns();
    return text;
  }

  ServerCounters counters() const {
    const http::GuardCounters& g = server.guard_counters();
    return {scrapes.load(), g.unauthorized.load(), renders.load(),
            g.refused.load(), g.timed_out.load(), g.connections.load()};
  }

  MetricsServerOptions opt;
  Render render;
  Clock& clock;
  http::GuardedServer server;
  std::thread thread;
  int bound_port = 0;
  std::atomic<uint64_t> scrapes{0}, renders{0};
  std::mutex cache_mu, build_mu;
  std::shared_ptr<const std::string> cached;
  int64_t cached_at_ns = 0;
};

MetricsServer::MetricsServer(MetricsServerOptions options, Render render, Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(render), clock)) {}

MetricsServer::~MetricsServer() { stop(); }

Status MetricsServer::start() {
  Impl& m = *impl_;
  if (m.opt.token && m.opt.token->empty())
    return Error{ErrorKind::invalid_argument, "the bearer token is empty, which would let anyone in",
                 "give a non-empty token, or none to serve without one", 0};
  m.server.set_tcp_nodelay(true);
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which lets a second exporter bind
  // the same port silently and share its scrapes.
  m.server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof yes);
  });
  // The token, the method and the absence of a body are checked before routing (GuardedServer).
  m.server.Get("/metrics", [&m](const httplib::Request&, httplib::Response& res) {
    m.scrapes.fetch_add(1);
    const auto text = m.exposition();
    res.set_content(*text, kPrometheusContentType);
  });
  m.server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("wattlab exporter: metrics at /metrics\n", "text/plain; charset=utf-8");
  });
  const std::string where = m.opt.address + ":" + std::to_string(m.opt.port);
  if (m.opt.port == 0) {
    m.bound_port = m.server.bind_to_any_port(m.opt.address);
    if (m.bound_port <= 0)
      return Error{ErrorKind::unavailable, "cannot listen on " + m.opt.address + " (any port)", "check the address", 0};
  } else {
    if (!m.server.bind_to_port(m.opt.address, m.opt.port))
      return Error{ErrorKind::unavailable, "cannot listen on " + where,
                   "the port may be in use, or the address not on this machine; pick another with --listen ADDR:PORT", 0};
    m.bound_port = m.opt.port;
  }
  m.thread = std::thread([&m] { m.server.listen_after_bind(); });
  // stop() must not race the listener's start (it would miss it and listen forever).
  for (int i = 0; i < 2000 && !m.server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return {};
}

int MetricsServer::port() const { return impl_->bound_port; }

void MetricsServer::stop() {
  if (!impl_->thread.joinable()) return;
  impl_->server.stop();
  impl_->thread.join();
}

ServerCounters MetricsServer::counters() const { return impl_->counters(); }

bool is_loopback_address(const std::string& address) {
  if (address == "localhost") return true;
  in_addr a4{};
  if (inet_pton(AF_INET, address.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  if (inet_pton(AF_INET6, address.c_str(), &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
  return false;
}

}  // namespace wattlab
