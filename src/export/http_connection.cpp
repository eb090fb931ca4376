#include "http_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace wattlab::http {
namespace {

using Clock = std::chrono::steady_clock;

// A wait is cut into slices this long, so that a stopping server or a waiting connection is seen.
constexpr std::chrono::milliseconds kSlice{50};

void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  const int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len)
                      : getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ip.clear();
  port = 0;
  if (rc != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    if (inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text)) ip = text;
    port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    if (inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text)) ip = text;
    port = ntohs(v6->sin6_port);
  }
}

}  // namespace

Connection::Connection(int fd, std::function<bool()> stopping) : fd_(fd), stopping_(std::move(stopping)) {}

Connection::~Connection() { ::close(fd_); }

Connection::Wait Connection::poll_until(short events, Deadline deadline, const std::function<bool()>& yield) {
  for (;;) {
    if (stopping_ && stopping_()) return Wait::stopped;
    if (yield && yield()) return Wait::yielded;
    const auto now = Clock::now();
    if (now >= deadline) return Wait::timeout;
    const auto slice = std::min<Clock::duration>(deadline - now, kSlice);
    pollfd p{fd_, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(slice).count()));
    if (n > 0) return Wait::ready;  // readable, writable, hung up or in error: the next call says which
    if (n < 0 && errno != EINTR) return Wait::error;
  }
}

Connection::Wait Connection::wait_readable(Deadline deadline, const std::function<bool()>& yield) {
  while (buf_begin_ == buf_end_) {
    const Wait w = poll_until(POLLIN, deadline, yield);
    if (w != Wait::ready) return w;
    const ssize_t n = ::recv(fd_, buf_.data(), buf_.size(), MSG_DONTWAIT);
    if (n == 0) return Wait::closed;
    if (n > 0) {
      buf_begin_ = 0;
      buf_end_ = static_cast<std::size_t>(n);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return Wait::error;
    }
  }
  return Wait::ready;
}

long Connection::read(char* ptr, std::size_t size, Deadline deadline) {
  const Wait w = wait_readable(deadline);
  if (w == Wait::closed) return 0;
  if (w != Wait::ready) return -1;
  const std::size_t n = std::min(size, buf_end_ - buf_begin_);
  std::memcpy(ptr, buf_.data() + buf_begin_, n);
  buf_begin_ += n;
  return static_cast<long>(n);
}

long Connection::write(const char* ptr, std::size_t size, Deadline deadline) {
  for (;;) {
    const ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return static_cast<long>(n);
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    if (poll_until(POLLOUT, deadline, nullptr) != Wait::ready) return -1;
  }
}

void Connection::finish(bool unread_input) {
  ::shutdown(fd_, SHUT_WR);
  if (!unread_input) return;
  const Deadline until = Clock::now() + kLingerTime;
  std::size_t drained = 0;
  while (drained < kLingerBytes && poll_until(POLLIN, until, nullptr) == Wait::ready) {
    const ssize_t n = ::recv(fd_, buf_.data(), buf_.size(), MSG_DONTWAIT);
    if (n == 0) return;  // the client closed: nothing left unread
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return;
    if (n > 0) drained += static_cast<std::size_t>(n);
  }
}

RequestStream::RequestStream(Connection& c, Deadline head_deadline, std::size_t max_head_bytes,
                             std::chrono::steady_clock::duration answer_time)
    : conn_(c), head_deadline_(head_deadline), head_left_(max_head_bytes), answer_time_(answer_time) {}

bool RequestStream::is_readable() const {
  return !answering_ && head_left_ > 0 && conn_.wait_readable(head_deadline_) == Connection::Wait::ready;
}

bool RequestStream::is_writable() const {
  return !timed_out_ && (!answering_ || Clock::now() < answer_deadline_);
}

ssize_t RequestStream::read(char* ptr, size_t size) {
  if (timed_out_ || head_left_ == 0) {
    head_too_large_ = head_too_large_ || head_left_ == 0;
    return -1;
  }
  const long n = conn_.read(ptr, std::min(size, head_left_), head_deadline_);
  if (n < 0 && Clock::now() >= head_deadline_) timed_out_ = true;
  if (n > 0) head_left_ -= static_cast<std::size_t>(n);
  return n;
}

ssize_t RequestStream::write(const char* ptr, size_t size) {
  if (timed_out_) return -1;  // a client that did not send its request in time gets no answer
  if (!answering_) {
    answering_ = true;
    answer_deadline_ = Clock::now() + answer_time_;
  }
  const long n = conn_.write(ptr, size, answer_deadline_);
  if (n < 0 && Clock::now() >= answer_deadline_) timed_out_ = true;
  return n;
}

void RequestStream::get_remote_ip_and_port(std::string& ip, int& port) const { address_of(conn_.fd(), true, ip, port); }

void RequestStream::get_local_ip_and_port(std::string& ip, int& port) const { address_of(conn_.fd(), false, ip, port); }

}  // namespace wattlab::http
