// wattlab marks client: header-only, C++17, POSIX, no dependency on the rest of wattlab.
// Under `wattlab run --marks -- CMD` it writes the marks protocol (docs/marks.md) to the pipe
// named by WATTLAB_MARKS_FD; without that variable every call does nothing.
//
//   #include <wattlab/marks.h>
//   wattlab::marks::tag({{"model", "llama-8b"}, {"batch", "8"}});
//   {
//     wattlab::marks::Window w("decode b8");   // open now, close at scope exit
//     ... generate ...
//     w.count({{"tokens", 8 * 128}, {"requests", 8}});
//   }
#pragma once
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

namespace wattlab::marks {

using Counts = std::map<std::string, double>;
using Labels = std::map<std::string, std::string>;

// CLOCK_MONOTONIC in ns: the clock wattlab's sampler uses.
inline int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

namespace detail {
inline void put_string(std::string& out, const std::string& s) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}
inline void put_number(std::string& out, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", std::isfinite(v) ? v : 0.0);  // JSON has no NaN
  out += buf;
}
inline void put_value(std::string& out, double v) { put_number(out, v); }
inline void put_value(std::string& out, const std::string& v) { put_string(out, v); }
// ,"field":{"k":v,...}
template <class Map>
void put_object(std::string& out, const char* field, const Map& m) {
  out += ",\"";
  out += field;
  out += "\":{";
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ",";
    first = false;
    put_string(out, k);
    out += ":";
    put_value(out, v);
  }
  out += "}";
}

// Writes without ever hurting the caller: SIGPIPE is blocked on the calling thread for the write
// (a pending one it raised is taken back), so a reader that is gone makes the write fail with
// EPIPE instead of killing the process; and the write waits at most `wait_ms` for room in a full
// pipe (a reader that is slow or stopped), then gives up. Returns false when the line was not sent.
inline bool write_line(int fd, const std::string& line, int wait_ms) {
  sigset_t pipe_only, old_mask;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);
  bool ok = true;
  std::size_t done = 0;
  while (done < line.size()) {
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 || (p.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
      ok = false;
      break;
    }
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (!ok && !was_pending) {
    // The write may have raised SIGPIPE on this thread: take it back before unblocking.
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return ok;
}
}  // namespace detail

// One connection to the channel. Thread-safe: each mark is one write() of one line, and a pipe
// write of at most PIPE_BUF (4096) bytes is never interleaved with another writer's. A mark never
// hurts the measured program: a reader that is gone or stuck makes it return false, never raise
// SIGPIPE or block for longer than kWaitMs; once a mark was dropped, the next ones do not wait at
// all until one gets through again (a stopped reader costs one wait, not one per mark). dropped()
// counts the marks that did not get through.
class Client {
 public:
  static constexpr int kWaitMs = 100;  // longest wait for room in a full pipe
  explicit Client(int fd) : fd_(fd) {}
  Client(const Client& o) : fd_(o.fd_), dropped_(o.dropped_.load()), dropping_(o.dropping_.load()) {}
  Client& operator=(const Client&) = delete;
  // The channel of this process: WATTLAB_MARKS_FD, or none (every call a no-op).
  static Client from_env() {
    const char* s = std::getenv("WATTLAB_MARKS_FD");
    if (s == nullptr || *s == '\0') return Client(-1);
    char* end = nullptr;
    const long fd = std::strtol(s, &end, 10);
    return Client(end != nullptr && *end == '\0' && fd >= 0 ? static_cast<int>(fd) : -1);
  }
  bool enabled() const { return fd_ >= 0; }
  // Marks of an enabled client that were not sent (the reader gone, stopped or too slow).
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

  bool open(const std::string& name, const Labels& labels = {}) { return send("open", name, {}, labels, "labels"); }
  bool close(const std::string& name, const Counts& counts = {}) { return send("close", name, counts, {}, ""); }
  // Adds to the counts of the innermost open window of that name (every open window if empty).
  bool count(const std::string& name, const Counts& counts) { return send("count", name, counts, {}, ""); }
  // Run tags (name empty) or labels of an open window.
  bool tag(const Labels& tags, const std::string& name = "") { return send("tag", name, {}, tags, "tags"); }

 private:
  bool send(const char* op, const std::string& name, const Counts& counts, const Labels& text, const char* text_field) {
    if (fd_ < 0) return false;
    std::string line = "{\"op\":\"";
    line += op;
    line += "\",\"t_ns\":" + std::to_string(monotonic_ns());
    if (!name.empty()) {
      line += ",\"name\":";
      detail::put_string(line, name);
    }
    if (!counts.empty()) detail::put_object(line, "counts", counts);
    if (!text.empty()) detail::put_object(line, text_field, text);
    line += "}\n";
    const bool ok = detail::write_line(fd_, line, dropping_.load(std::memory_order_relaxed) ? 0 : kWaitMs);
    dropping_.store(!ok, std::memory_order_relaxed);
    if (!ok) dropped_.fetch_add(1, std::memory_order_relaxed);
    return ok;
  }
  int fd_;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<bool> dropping_{false};  // the last mark was dropped: the next one does not wait
};

inline Client& client() {
  static Client c = Client::from_env();
  return c;
}

inline bool open(const std::string& name, const Labels& labels = {}) { return client().open(name, labels); }
inline bool close(const std::string& name, const Counts& counts = {}) { return client().close(name, counts); }
inline bool count(const std::string& name, const Counts& counts) { return client().count(name, counts); }
inline bool tag(const Labels& tags, const std::string& name = "") { return client().tag(tags, name); }
// Marks of this process that were not sent.
inline uint64_t dropped() { return client().dropped(); }

// Opens on construction, closes (with the counts gathered) on destruction.
class Window {
 public:
  explicit Window(std::string name, const Labels& labels = {}, Client& c = client()) : c_(c), name_(std::move(name)) {
    c_.open(name_, labels);
  }
  ~Window() { c_.close(name_, counts_); }
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  void count(const Counts& counts) {
    for (const auto& [k, v] : counts) counts_[k] += v;
  }

 private:
  Client& c_;
  std::string name_;
  Counts counts_;
};

}  // namespace wattlab::marks
