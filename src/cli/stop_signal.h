// SIGINT/SIGTERM as a flag for long-running subcommands (serve, monitor): the handler only sets
// it; the loop sees it within one sleep slice and exits 0 cleanly.
#pragma once
#include <atomic>
#include <chrono>
#include <string>

namespace wattlab::cli {

class StopSignal {
 public:
  StopSignal();   // installs the handlers
  ~StopSignal();  // restores the previous ones
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;
  bool requested() const;
  // Sleeps until `deadline` or a signal, whichever first; true if a signal came.
  bool sleep_until(std::chrono::steady_clock::time_point deadline) const;
};

std::string local_hostname();

}  // namespace wattlab::cli
