// A TCP client on 127.0.0.1 that sends exactly the bytes it is given, for the tests of hostile
// HTTP clients. Every blocking call is bounded by `limit` (SO_RCVTIMEO/SO_SNDTIMEO), so a server
// that neither answers nor closes fails a test instead of hanging it.
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <string_view>

namespace wattlab::testing {

class RawClient {
 public:
  explicit RawClient(int port, std::chrono::seconds limit = std::chrono::seconds(20)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{static_cast<long>(limit.count()), 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }

  // Sends all of `bytes`; false when the socket failed (send_errno() says how) or timed out.
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0) {
        send_errno_ = errno;
        return false;
      }
      sent_ += static_cast<std::size_t>(n);
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  int send_errno() const { return send_errno_; }
  std::size_t sent() const { return sent_; }

  // Everything the server sends until it closes the connection (closed() true) or the limit.
  std::string read_to_close() {
    std::string out;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        out.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      closed_ = n == 0 || errno == ECONNRESET;
      return out;
    }
  }
  // Without waiting: has the server closed the connection (bytes it sent are discarded)?
  bool closed_now() {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) continue;
      closed_ = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
      return closed_;
    }
  }
  bool closed() const { return closed_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
  int send_errno_ = 0;
  std::size_t sent_ = 0;
};

}  // namespace wattlab::testing
