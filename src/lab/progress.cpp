#include "lab/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <ostream>

namespace wattlab::lab {

std::string format_duration(double s) {
  const auto t = static_cast<int64_t>(std::llround(std::max(0.0, s)));
  if (t >= 3600) return fmt::format("{}h{:02d}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02d}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

Progress::Progress(std::ostream& out, bool tty, std::size_t total, std::size_t skipped, double planned_s_per_point,
                   bool simulated)
    : out_(out), tty_(tty), total_(total), done_(skipped), planned_s_(planned_s_per_point), simulated_(simulated) {
  if (skipped > 0) out_ << fmt::format("resuming: {} of {} points already in the store, {} left\n", skipped, total, total - skipped);
}

bool Progress::stderr_is_tty() { return ::isatty(STDERR_FILENO) == 1; }

std::string Progress::eta_text() const {
  const double per = run_ > 0 ? spent_s_ / static_cast<double>(run_) : planned_s_;
  const std::size_t left = total_ > done_ ? total_ - done_ : 0;
  return "ETA " + format_duration(per * static_cast<double>(left)) + (simulated_ ? " (SIMULATED time)" : "");
}

void Progress::draw(const std::string& what) {
  constexpr int kWidth = 24;
  const double frac = total_ > 0 ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  const int full = static_cast<int>(frac * kWidth);
  const std::string bar = std::string(static_cast<std::size_t>(full), '#') + std::string(static_cast<std::size_t>(kWidth - full), '.');
  const std::string line = fmt::format("[{}] {}/{} done, {} left, {} | {}", bar, done_, total_, total_ - done_, eta_text(), what);
  if (tty_) out_ << "\r\x1b[K" << line << std::flush;
  else out_ << line << "\n" << std::flush;
}

void Progress::start(const std::string& what, int64_t t_ns) {
  what_ = what;
  start_t_ns_ = t_ns;
  draw("running " + what);
}

void Progress::finish(int64_t t_ns) {
  spent_s_ += static_cast<double>(t_ns - start_t_ns_) * 1e-9;
  ++run_;
  ++done_;
  // A terminal redraws at the next start; a log gets one line per finished point.
  if (!tty_) draw("finished " + what_);
}

void Progress::done() {
  draw(done_ >= total_ ? "all points done" : "stopped");
  if (tty_) out_ << "\n";
}

}  // namespace wattlab::lab
