#include "wattlab/record/flusher.h"

#include <chrono>
#include <exception>

namespace wattlab {

Flusher::Flusher(std::function<void()> flush, int64_t interval_ns, std::function<void(std::string_view)> on_error)
    : flush_(std::move(flush)), on_error_(std::move(on_error)) {
  thread_ = std::thread([this, interval_ns] {
    std::unique_lock lk(mu_);
    while (!cv_.wait_for(lk, std::chrono::nanoseconds(interval_ns), [this] { return done_; })) {
      lk.unlock();
      call_flush();
      lk.lock();
    }
  });
}

Flusher::~Flusher() { finish(); }

void Flusher::finish() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lk(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
  call_flush();
}

void Flusher::call_flush() noexcept {
  try {
    flush_();
  } catch (const std::exception& e) {
    if (on_error_) on_error_(e.what());
  } catch (...) {
    if (on_error_) on_error_("unknown exception in the flush thread");
  }
}

}  // namespace wattlab
