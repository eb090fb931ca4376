#include "wattlab/export/metrics_server.h"

#include <arpa/inet.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "wattlab/export/prometheus.h"

namespace wattlab {
namespace {

// A bounded pool that starts threads only when every one is busy. httplib gives each connection
// one task for its whole keep-alive life, so 200 keep-alive scrapers need 200 threads; a fixed
// pool that small would leave the rest waiting in the queue until a connection closes.
class GrowingPool final : public httplib::TaskQueue {
 public:
  explicit GrowingPool(std::size_t max_threads) : max_(std::max<std::size_t>(max_threads, 1)) {}
  ~GrowingPool() override = default;

  void enqueue(std::function<void()> fn) override {
    std::unique_lock lk(mu_);
    jobs_.push_back(std::move(fn));
    if (jobs_.size() > idle_ && threads_.size() < max_) threads_.emplace_back([this] { work(); });
    cv_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lk(mu_);
        ++idle_;
        cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
        --idle_;
        if (jobs_.empty()) return;  // stopping, nothing left
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      try {
        fn();
      } catch (...) {
        // A connection's failure must not take the pool down.
      }
    }
  }

  const std::size_t max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stop_ = false;
};

// Constant-time comparison: the token must not leak through response timing.
bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size() || b.empty()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

class MetricsServer::Impl {
 public:
  Impl(MetricsServerOptions o, Render r, Clock& c) : opt(std::move(o)), render(std::move(r)), clock(c) {}

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
    return {scrapes.load(), unauthorized.load(), renders.load()};
  }

  bool authorized(const httplib::Request& req) const {
    if (opt.token.empty()) return true;
    const std::string h = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (h.size() <= prefix.size() || h.compare(0, prefix.size(), prefix) != 0) return false;
    return same_secret(h.substr(prefix.size()), opt.token);
  }

  MetricsServerOptions opt;
  Render render;
  Clock& clock;
  httplib::Server server;
  std::thread thread;
  int bound_port = 0;
  std::atomic<uint64_t> scrapes{0}, unauthorized{0}, renders{0};
  std::mutex cache_mu, build_mu;
  std::shared_ptr<const std::string> cached;
  int64_t cached_at_ns = 0;
};

MetricsServer::MetricsServer(MetricsServerOptions options, Render render, Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(render), clock)) {}

MetricsServer::~MetricsServer() { stop(); }

Status MetricsServer::start() {
  Impl& m = *impl_;
  const std::size_t max_threads = m.opt.max_threads;
  m.server.new_task_queue = [max_threads] { return new GrowingPool(max_threads); };
  m.server.set_keep_alive_max_count(m.opt.keep_alive_max_requests);
  m.server.set_keep_alive_timeout(m.opt.keep_alive_timeout_s);
  m.server.set_tcp_nodelay(true);
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which lets a second exporter bind
  // the same port silently and share its scrapes.
  m.server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof yes);
  });
  m.server.Get("/metrics", [&m](const httplib::Request& req, httplib::Response& res) {
    if (!m.authorized(req)) {
      m.unauthorized.fetch_add(1);
      res.status = 401;
      res.set_header("WWW-Authenticate", "Bearer realm=\"wattlab\"");
      res.set_content("401 unauthorized: send 'Authorization: Bearer <token>'\n", "text/plain; charset=utf-8");
      return;
    }
    m.scrapes.fetch_add(1);
    const auto text = m.exposition();
    res.set_content(*text, kPrometheusContentType);
  });
  m.server.Get("/", [&m](const httplib::Request& req, httplib::Response& res) {
    if (!m.authorized(req)) {
      m.unauthorized.fetch_add(1);
      res.status = 401;
      res.set_header("WWW-Authenticate", "Bearer realm=\"wattlab\"");
      return;
    }
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
