// The marks pipe and its reader thread (docs/marks.md: why a pipe passed by fd number).
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "meter/marks.h"

namespace wattlab::marks {

Result<std::unique_ptr<MarkChannel>> MarkChannel::create() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return Error{ErrorKind::io, std::string("pipe2 for the marks channel failed: ") + std::strerror(errno), ""};
  // The command inherits the write end only; wattlab keeps the read end to itself.
  if (::fcntl(fds[1], F_SETFD, 0) != 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Error{ErrorKind::io, std::string("fcntl on the marks pipe failed: ") + std::strerror(e), ""};
  }
  return std::unique_ptr<MarkChannel>(new MarkChannel(fds[0], fds[1]));
}

MarkChannel::~MarkChannel() {
  stop();
  close_write_end();
  if (read_fd_ >= 0) ::close(read_fd_);
}

std::string MarkChannel::env_entry() const { return std::string(kFdEnv) + "=" + std::to_string(write_fd_); }

void MarkChannel::close_write_end() {
  if (write_fd_ >= 0) ::close(write_fd_);
  write_fd_ = -1;
}

void MarkChannel::start(const Clock& clock, LineFn on_line) {
  on_line_ = std::move(on_line);
  clock_ = &clock;
  thread_ = std::thread([this, &clock] { loop(clock); });
}

void MarkChannel::split(const char* data, std::size_t n, int64_t t_ns) {
  for (std::size_t i = 0; i < n; ++i) {
    const char c = data[i];
    if (c == '\n') {
      if (!overlong_) on_line_(pending_, t_ns);
      pending_.clear();
      overlong_ = false;
      continue;
    }
    if (overlong_) continue;
    pending_.push_back(c);
    if (pending_.size() > kMaxLineBytes) {
      on_line_(pending_, t_ns);  // the parser rejects it for its length: counted once
      pending_.clear();
      overlong_ = true;
    }
  }
}

std::size_t MarkChannel::read_available(const Clock& clock) {
  char buf[8192];
  const ssize_t n = ::read(read_fd_, buf, sizeof buf);
  if (n > 0) {
    split(buf, static_cast<std::size_t>(n), clock.now_ns());
    return static_cast<std::size_t>(n);
  }
  if (n == 0) eof_ = true;
  else if (errno != EINTR && errno != EAGAIN) eof_ = true;
  return 0;
}

void MarkChannel::loop(const Clock& clock) {
  while (!stop_.load() && !eof_) {
    pollfd p{read_fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, 50);
    if (r > 0) read_available(clock);
  }
}

void MarkChannel::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  thread_.join();
  // What the command wrote before it exited is already in the pipe: take it without blocking.
  ::fcntl(read_fd_, F_SETFL, ::fcntl(read_fd_, F_GETFL) | O_NONBLOCK);
  while (!eof_ && read_available(*clock_) > 0) {
  }
  if (!pending_.empty() && !overlong_) on_line_(pending_, clock_->now_ns());
  pending_.clear();
}

}  // namespace wattlab::marks
