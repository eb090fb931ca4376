#include "guarded_server.h"

#include "growing_pool.h"
#include "http_admission.h"
#include "http_connection.h"

namespace wattlab::http {
namespace {

// A refusal counted and answered: 401 as unauthorized, the others as refused.
void refuse(GuardCounters& c, const Admission& a, httplib::Response& res) {
  (a.status == 401 ? c.unauthorized : c.refused).fetch_add(1);
  answer_refusal(a, res);
}

}  // namespace

GuardedServer::GuardedServer(Limits limits) : limits_(std::move(limits)) {
  new_task_queue = [this] {
    auto* pool = new GrowingPool(limits_.max_threads);
    pool_.store(pool);
    return pool;
  };
  const auto timeout_s = std::chrono::ceil<std::chrono::seconds>(limits_.timeout).count();
  // What the Keep-Alive header advertises; the loop below enforces it.
  set_keep_alive_max_count(limits_.keep_alive_max_requests);
  set_keep_alive_timeout(timeout_s);
  // Backstops on the accepted sockets (this server's own reads and writes never block).
  set_read_timeout(timeout_s);
  set_write_timeout(timeout_s);
  // No handler reads a body, and the admission refuses every request that announces one.
  set_payload_max_length(0);
  set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const Admission a = admit(req, limits_.token);
    if (a.status == 0) return HandlerResponse::Unhandled;
    refuse(counters_, a, res);
    return HandlerResponse::Handled;
  });
  // "Expect: 100-continue" would invite the body: a refused request is answered instead.
  set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
    const Admission a = admit(req, limits_.token);
    if (a.status == 0) return 100;
    refuse(counters_, a, res);
    return a.status;
  });
}

bool GuardedServer::others_wait() const {
  const GrowingPool* pool = pool_.load();
  return pool != nullptr && pool->has_waiting();
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  counters_.connections.fetch_add(1);
  bool ok = false;
  bool unread_input = false;  // a refused body or head left on the socket
  {
    Connection conn(sock, [this] { return stopping(); });
    const std::function<bool()> yield = [this] { return others_wait(); };
    for (std::size_t n = 0; n < limits_.keep_alive_max_requests; ++n) {
      const Deadline head_deadline = std::chrono::steady_clock::now() + limits_.timeout;
      // Between requests a connection gives its thread up to one that waits for it; before its
      // first request it has the whole timeout.
      const Connection::Wait w = conn.wait_readable(head_deadline, n == 0 ? nullptr : yield);
      if (w == Connection::Wait::timeout && n == 0) counters_.timed_out.fetch_add(1);
      if (w != Connection::Wait::ready) break;
      RequestStream strm(conn, head_deadline, limits_.max_head_bytes, limits_.timeout);
      const bool last = n + 1 == limits_.keep_alive_max_requests || others_wait();
      bool client_closes = false;
      bool refused = false;
      ok = process_request(strm, last, client_closes, [&](httplib::Request& req) {
        const Admission a = admit(req, limits_.token);
        if (a.status == 0) return;
        refused = true;
        unread_input = a.unread_body;
        req.headers.erase("Connection");
        req.set_header("Connection", "close");  // so that the refusal says the connection ends
      });
      if (strm.timed_out()) counters_.timed_out.fetch_add(1);
      if (strm.head_too_large()) {
        counters_.refused.fetch_add(1);
        unread_input = true;
      }
      if (!ok || client_closes || refused || last || strm.timed_out() || strm.head_too_large()) break;
    }
    conn.finish(unread_input);
  }
  counters_.connections.fetch_sub(1);
  return ok;
}

}  // namespace wattlab::http
