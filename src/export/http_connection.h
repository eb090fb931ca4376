// One accepted connection of the exporter's HTTP server, with every wait bounded: its socket, the
// bytes read ahead of the request being parsed, and httplib's view of one request on it
// (RequestStream), whose reads end at the request head's deadline or size limit and whose writes
// end at the answer's deadline. Waits poll in short slices so that a stopping server is seen.
#pragma once
#include <httplib.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <functional>

namespace wattlab::http {

using Deadline = std::chrono::steady_clock::time_point;

class Connection {
 public:
  // `stopping` is polled while waiting: true ends every wait (the server is shutting down).
  Connection(int fd, std::function<bool()> stopping);
  ~Connection();  // closes the socket
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  enum class Wait { ready, timeout, closed, error, stopped, yielded };
  // Until a byte of the next request is read ahead (ready), the peer closed (closed), the socket
  // failed, the deadline passed or the server stops; `yield` is polled too: true gives the
  // connection up (another one waits for its thread).
  Wait wait_readable(Deadline deadline, const std::function<bool()>& yield = nullptr);
  // Up to `size` bytes; 0 when the peer closed, -1 on an error, at the deadline or on stop.
  long read(char* ptr, std::size_t size, Deadline deadline);
  // Writes some of the bytes (MSG_NOSIGNAL); -1 on an error, at the deadline or on stop.
  long write(const char* ptr, std::size_t size, Deadline deadline);
  // Ends the connection: shuts down sending, then, where a refused request's body or head may
  // still be on its way, reads and discards a little of it (at most kLingerBytes or kLingerTime) so that the
  // refusal reaches the client before the close; the socket is closed by the destructor.
  void finish(bool unread_input);
  int fd() const { return fd_; }

  static constexpr std::size_t kLingerBytes = 256 * 1024;
  static constexpr std::chrono::milliseconds kLingerTime{200};

 private:
  // poll() for `events` until the deadline, in slices: ready, timeout, error, stopped or yielded.
  Wait poll_until(short events, Deadline deadline, const std::function<bool()>& yield);

  int fd_;
  std::function<bool()> stopping_;
  std::array<char, 4096> buf_{};
  std::size_t buf_begin_ = 0, buf_end_ = 0;  // bytes read ahead: buf_[buf_begin_, buf_end_)
};

// One request on a connection, as httplib reads and answers it. Reads stop with -1 at
// `head_deadline` (timed_out()) or once `max_head_bytes` were handed out (head_too_large()): the
// exporter never reads a body, so everything it reads of a request is its head. The answer must be
// taken within `answer_time` of its first write.
class RequestStream final : public httplib::Stream {
 public:
  RequestStream(Connection& c, Deadline head_deadline, std::size_t max_head_bytes,
                std::chrono::steady_clock::duration answer_time);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return conn_.fd(); }

  bool timed_out() const { return timed_out_; }
  bool head_too_large() const { return head_too_large_; }

 private:
  Connection& conn_;
  Deadline head_deadline_;
  std::size_t head_left_;
  std::chrono::steady_clock::duration answer_time_;
  Deadline answer_deadline_{};
  bool answering_ = false;
  bool timed_out_ = false;
  bool head_too_large_ = false;
};

}  // namespace wattlab::http
