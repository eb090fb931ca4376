// Moving measurements to the store while a process runs, so a killed process keeps what it
// measured: a thread that calls a flush function every interval (real time).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>

namespace wattlab {

class Flusher {
 public:
  // Calls `flush` on its own thread every `interval_ns`; no exception escapes that thread: its
  // message goes to `on_error` (if given).
  explicit Flusher(std::function<void()> flush, int64_t interval_ns = 500'000'000,
                   std::function<void(std::string_view)> on_error = {});
  Flusher(const Flusher&) = delete;
  Flusher& operator=(const Flusher&) = delete;
  ~Flusher();
  // Stops the thread at once (it does not sleep out its interval), then calls `flush` once more
  // on the calling thread. Idempotent.
  void finish();

 private:
  void call_flush() noexcept;
  std::function<void()> flush_;
  std::function<void(std::string_view)> on_error_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace wattlab
