// The connection threads of the exporter's HTTP server: a bounded pool that starts a thread only
// when every one is busy. httplib gives each connection one task for its whole keep-alive life, so
// 200 keep-alive scrapers need 200 threads; a fixed pool that small would leave the rest waiting in
// the queue until a connection closes. has_waiting() tells connections between requests that
// another one waits for a thread, so that they give theirs up (src/export/guarded_server.cpp).
#pragma once
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace wattlab::http {

class GrowingPool final : public httplib::TaskQueue {
 public:
  explicit GrowingPool(std::size_t max_threads);
  ~GrowingPool() override = default;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;
  // True while a connection waits in the queue for a thread (every thread is busy).
  bool has_waiting() const { return waiting_.load(std::memory_order_relaxed) > 0; }

 private:
  void work();
  void count_waiting();  // under mu_

  const std::size_t max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;      // threads waiting for a job
  std::size_t starting_ = 0;  // threads started that have not yet waited for one
  std::atomic<std::size_t> waiting_{0};  // jobs no thread is free or starting to take
  bool stop_ = false;
};

}  // namespace wattlab::http
