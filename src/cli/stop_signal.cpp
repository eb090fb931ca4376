#include "stop_signal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ostream>

#include "wattlab/record/recording.h"

namespace wattlab::cli {
namespace {

std::atomic<bool> g_stop{false};
// The write end of the watcher's pipe (-1: no watcher): the handler writes the signal number.
std::atomic<int> g_wake_fd{-1};
struct sigaction g_old_int {}, g_old_term{};

void on_signal(int sig) {
  g_stop.store(true);
  const int fd = g_wake_fd.load();
  if (fd >= 0) {
    const unsigned char b = static_cast<unsigned char>(sig);
    [[maybe_unused]] const auto n = ::write(fd, &b, 1);  // async-signal-safe; a full pipe loses nothing needed
  }
}

}  // namespace

StopSignal::StopSignal(std::function<void(int)> on_signal_action) : on_signal_(std::move(on_signal_action)) {
  g_stop.store(false);
  if (on_signal_) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;  // no watcher: the signals keep their default action
    {
      wake_read_fd_ = fds[0];
      g_wake_fd.store(fds[1]);
      watcher_ = std::thread([this] {
        unsigned char b = 0;
        ssize_t n = 0;
        while ((n = ::read(wake_read_fd_, &b, 1)) < 0 && errno == EINTR) {
        }
        if (n == 1 && b != 0) on_signal_(b);  // 0: the destructor's wake-up
      });
    }
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  installed_ = true;
}

StopSignal::~StopSignal() {
  if (!installed_) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  const int fd = g_wake_fd.exchange(-1);
  if (watcher_.joinable()) {
    const unsigned char zero = 0;
    [[maybe_unused]] const auto n = ::write(fd, &zero, 1);
    watcher_.join();
  }
  if (fd >= 0) ::close(fd);
  if (wake_read_fd_ >= 0) ::close(wake_read_fd_);
}

bool StopSignal::requested() const { return g_stop.load(); }

bool StopSignal::sleep_until(std::chrono::steady_clock::time_point deadline) const {
  // Slices of at most 50 ms: a signal is seen soon without a self-pipe.
  while (!g_stop.load()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(deadline - now, std::chrono::milliseconds(50)));
  }
  return true;
}

void StopSignal::exit_by(int signal) {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(signal, &sa, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(signal);
  ::_exit(128 + signal);
}

void end_by_signal(Recording& rec, int signal, std::ostream& err) {
  try {
    rec.end(128 + signal);
  } catch (const WattlabError& e) {
    err << "wattlab: " << e.what() << "\n";
  }
  StopSignal::exit_by(signal);
}

}  // namespace wattlab::cli
