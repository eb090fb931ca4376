#include "stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

namespace wattlab::cli {
namespace {

std::atomic<bool> g_stop{false};
struct sigaction g_old_int {}, g_old_term{};

void on_signal(int) { g_stop.store(true); }

}  // namespace

StopSignal::StopSignal() {
  g_stop.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignal::~StopSignal() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
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

std::string local_hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace wattlab::cli
