// Marks: a measured command opens and closes named windows and reports counts (tokens,
// requests, images) by writing one JSON object per line to a pipe that `wattlab run --marks`
// passes in WATTLAB_MARKS_FD (protocol: docs/marks.md). This is wattlab's side: the parser, the
// collector that turns marks into windows with explicit edges, and the pipe reader. Clients
// (include/wattlab/marks.h, python/wattlab_marks.py) depend on none of it.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "wattlab/core/clock.h"
#include "wattlab/core/error.h"

namespace wattlab::marks {

inline constexpr const char* kFdEnv = "WATTLAB_MARKS_FD";
inline constexpr std::size_t kMaxLineBytes = 64 * 1024;  // longer lines are malformed
// Labels and run tags wattlab writes itself (users may not set keys under "marks.").
inline constexpr const char* kLabelTimeSource = "marks.t_source";  // "client", "arrival", "client+arrival"
inline constexpr const char* kLabelUnclosed = "marks.unclosed";    // set on windows closed at exit

enum class Op { open, close, count, tag };
const char* to_string(Op op);

// One parsed line.
struct Mark {
  Op op = Op::open;
  std::string name;               // window name; empty for a run-level tag or a count to all open
  std::optional<int64_t> t_ns;    // the client's CLOCK_MONOTONIC stamp; empty: stamped on arrival
  std::map<std::string, double> counts;
  std::map<std::string, std::string> labels;  // "labels" of open/close, or "tags" of a named tag
  std::map<std::string, std::string> tags;    // "tags" of a tag without a name: run tags
};

// Parses one line (without its newline). A parse error names what is wrong with it.
Result<Mark> parse_mark(std::string_view line);

// A window the marks opened and closed, with explicit edges on the monotonic clock.
struct MarkedWindow {
  std::string name;
  int64_t t_begin_ns = 0;
  int64_t t_end_ns = 0;
  std::map<std::string, double> counts;
  std::map<std::string, std::string> labels;
};

struct MarksReport {
  std::size_t lines = 0;             // non-empty lines received
  std::size_t malformed = 0;         // lines rejected (bad JSON, bad field, close of a window not open...)
  std::vector<std::string> malformed_examples;  // the first few: "line 3: ..."
  std::size_t arrival_stamped = 0;   // marks without t_ns, stamped by wattlab on arrival
  std::size_t windows = 0;           // windows completed (closed, or closed at exit)
  std::size_t unclosed = 0;          // windows still open at exit, closed by finish()
  std::map<std::string, std::string> run_tags;  // from tag marks without a name
  // The report as run tags ("marks.lines", "marks.malformed", ...), user tags included.
  std::map<std::string, std::string> as_run_tags() const;
};

// Turns a stream of lines into windows. Not thread-safe: one reader feeds it.
class MarkCollector {
 public:
  // run_start_ns: no mark may be stamped before it; future_slack_ns: how far a client stamp may
  // lie after its arrival (same clock, so only scheduling noise) before it is called wrong.
  explicit MarkCollector(int64_t run_start_ns, int64_t future_slack_ns = 50'000'000);

  // One line as it arrived at arrival_t_ns; returns the windows it closed.
  std::vector<MarkedWindow> feed(std::string_view line, int64_t arrival_t_ns);
  // Closes every window still open at t_end_ns, flagged with kLabelUnclosed.
  std::vector<MarkedWindow> finish(int64_t t_end_ns);
  const MarksReport& report() const { return report_; }
  std::size_t open_windows() const { return open_.size(); }

 private:
  struct Open {
    MarkedWindow w;
    bool client_time = false, arrival_time = false;
  };
  void reject(const std::string& why);
  std::optional<int64_t> stamp(const Mark& m, int64_t arrival_t_ns, bool& from_client);
  MarkedWindow complete(Open o, int64_t t_end_ns, bool from_client);

  int64_t run_start_ns_;
  int64_t future_slack_ns_;
  std::vector<Open> open_;  // in opening order; close and count find the innermost by name
  MarksReport report_;
};

// The pipe: the read end stays in wattlab (close-on-exec), the write end is inherited by the
// command, which finds its number in WATTLAB_MARKS_FD. A reader thread splits what arrives into
// lines and hands each to `on_line` with its arrival time.
class MarkChannel {
 public:
  using LineFn = std::function<void(std::string_view line, int64_t arrival_t_ns)>;
  static Result<std::unique_ptr<MarkChannel>> create();
  ~MarkChannel();
  MarkChannel(const MarkChannel&) = delete;
  MarkChannel& operator=(const MarkChannel&) = delete;

  int write_fd() const { return write_fd_; }
  // "WATTLAB_MARKS_FD=<n>" for the command's environment.
  std::string env_entry() const;
  // The parent's copy of the write end: close it after the command started, so EOF can come.
  void close_write_end();
  void start(const Clock& clock, LineFn on_line);
  // After the command exited: reads what is already in the pipe without waiting for EOF (a
  // grandchild may still hold the write end), hands over a last unterminated line, joins.
  void stop();

 private:
  MarkChannel(int read_fd, int write_fd) : read_fd_(read_fd), write_fd_(write_fd) {}
  void loop(const Clock& clock);
  std::size_t read_available(const Clock& clock);  // returns bytes read; 0 at EOF or nothing
  void split(const char* data, std::size_t n, int64_t t_ns);

  int read_fd_ = -1;
  int write_fd_ = -1;
  LineFn on_line_;
  const Clock* clock_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  bool eof_ = false;
  std::string pending_;
  bool overlong_ = false;  // inside a line longer than kMaxLineBytes: drop until its newline
};

}  // namespace wattlab::marks
