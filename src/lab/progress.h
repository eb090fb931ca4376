// A progress bar on stderr for sweeps: on a terminal one line redrawn with '\r', otherwise one
// plain line per point (logs, CI). It shows what runs, how many are done and left, and an ETA
// from the time the finished points took (on the executor's clock: virtual on the sim).
#pragma once
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace wattlab::lab {

class Progress {
 public:
  // `total` points planned; `skipped` of them already done (resume); `planned_s_per_point` seeds
  // the ETA before the first point finishes.
  Progress(std::ostream& out, bool tty, std::size_t total, std::size_t skipped, double planned_s_per_point,
           bool simulated);
  // A point starts at executor time `t_ns`.
  void start(const std::string& what, int64_t t_ns);
  // It finished at `t_ns`.
  void finish(int64_t t_ns);
  void done();  // final line (and the newline a terminal needs)

  static bool stderr_is_tty();
  std::string eta_text() const;  // "ETA 3m05s"

 private:
  void draw(const std::string& what);
  std::ostream& out_;
  bool tty_;
  std::size_t total_, done_;
  std::size_t run_ = 0;  // finished in this invocation
  double planned_s_;
  bool simulated_;
  int64_t start_t_ns_ = 0;
  double spent_s_ = 0;
  std::string what_;
};

// "1h02m", "3m05s", "42s".
std::string format_duration(double s);

}  // namespace wattlab::lab
