#include "record/marks_recorder.h"

namespace wattlab {

MarksRecorder::MarksRecorder(Recording& recording) : rec_(recording), collector_(recording.start_t_ns()) {
  auto ch = marks::MarkChannel::create();
  if (!ch) throw WattlabError(ch.error());
  channel_ = std::move(*ch);
  channel_->start(rec_.clock(), [this](std::string_view line, int64_t t_ns) {
    std::lock_guard lk(mu_);
    take(collector_.feed(line, t_ns));
    // Run tags reach the store as they arrive; one that fails is tried again with the next line,
    // and finish() stores them all (and says when it cannot).
    for (const auto& [k, v] : collector_.report().run_tags) {
      auto& old = stored_tags_[k];
      if (old == v) continue;
      try {
        rec_.set_tag(k, v);
        old = v;
      } catch (const WattlabError&) {
      }
    }
  });
}

MarksRecorder::~MarksRecorder() {
  if (channel_) channel_->stop();
}

std::string MarksRecorder::env_entry() const { return channel_->env_entry(); }

void MarksRecorder::close_write_end() { channel_->close_write_end(); }

void MarksRecorder::take(std::vector<marks::MarkedWindow> windows) {
  for (auto& w : windows)
    rec_.add_window(w.name, w.t_begin_ns, w.t_end_ns, std::move(w.labels), std::move(w.counts));
}

void MarksRecorder::finish() {
  channel_->stop();
  std::lock_guard lk(mu_);
  if (finished_) return;
  finished_ = true;
  take(collector_.finish(rec_.clock().now_ns()));
  for (const auto& [k, v] : collector_.report().as_run_tags()) rec_.set_tag(k, v);
}

}  // namespace wattlab
