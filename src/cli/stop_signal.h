// SIGINT/SIGTERM for long-running subcommands. The handler only sets a flag (serve, monitor: the
// loop sees it within one sleep slice and exits 0) and, when an on_signal action is given, wakes a
// watcher thread that runs it: there a command that blocks in the library (sensors --characterize)
// ends its recording with the signal's status, then exits by the signal (exit_by).
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <iosfwd>
#include <thread>

namespace wattlab {
class Recording;
}


namespace wattlab::cli {

class StopSignal {
 public:
  // Installs the handlers; `on_signal` (optional) runs on the watcher thread at the first signal.
  explicit StopSignal(std::function<void(int signal)> on_signal = {});
  ~StopSignal();  // stops the watcher, restores the previous handlers
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;
  bool requested() const;
  // Sleeps until `deadline` or a signal, whichever first; true if a signal came.
  bool sleep_until(std::chrono::steady_clock::time_point deadline) const;
  // Ends the process the way `signal` does by default (the shell sees the signal); 128 + signal
  // if it survives that.
  [[noreturn]] static void exit_by(int signal);

 private:
  std::function<void(int)> on_signal_;
  bool installed_ = false;
  int wake_read_fd_ = -1;
  std::thread watcher_;
};

// For a StopSignal's on_signal: ends `rec` with 128 + `signal` (what went wrong storing it goes to
// `err`), then ends the process by the signal.
[[noreturn]] void end_by_signal(Recording& rec, int signal, std::ostream& err);

}  // namespace wattlab::cli
