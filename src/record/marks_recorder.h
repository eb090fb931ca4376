// The marks channel of a recorded command (docs/marks.md): the windows the command opens and
// closes through the pipe become windows of the recording, with their counts and labels; its run
// tags reach the store as they arrive, so a killed run keeps its configuration. Real time only
// (the command stamps its marks with CLOCK_MONOTONIC).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "meter/marks.h"
#include "wattlab/record/recording.h"

namespace wattlab {

class MarksRecorder {
 public:
  // Makes the pipe and starts reading it into `recording` (started, with a meter). Throws
  // WattlabError when the pipe cannot be made.
  explicit MarksRecorder(Recording& recording);
  ~MarksRecorder();
  MarksRecorder(const MarksRecorder&) = delete;
  MarksRecorder& operator=(const MarksRecorder&) = delete;

  // "WATTLAB_MARKS_FD=<n>" for the command's environment.
  std::string env_entry() const;
  // Closes this process's copy of the write end once the command has started, so EOF can come.
  void close_write_end();
  // After the command exited: reads what is already in the pipe, closes the windows still open,
  // and stores what the channel saw as run tags (marks.lines, marks.windows, ...). Idempotent.
  // Throws WattlabError when the store fails.
  void finish();

 private:
  void take(std::vector<marks::MarkedWindow> windows);

  Recording& rec_;
  std::mutex mu_;
  marks::MarkCollector collector_;
  std::map<std::string, std::string> stored_tags_;
  bool finished_ = false;
  std::unique_ptr<marks::MarkChannel> channel_;  // last: its reader thread stops first
};

}  // namespace wattlab
