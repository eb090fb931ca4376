#include "growing_pool.h"

#include <algorithm>

namespace wattlab::http {

GrowingPool::GrowingPool(std::size_t max_threads) : max_(std::max<std::size_t>(max_threads, 1)) {}

void GrowingPool::enqueue(std::function<void()> fn) {
  std::lock_guard lk(mu_);
  jobs_.push_back(std::move(fn));
  if (jobs_.size() > idle_ + starting_ && threads_.size() < max_) {
    ++starting_;
    threads_.emplace_back([this] { work(); });
  }
  count_waiting();
  cv_.notify_one();
}

void GrowingPool::shutdown() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void GrowingPool::count_waiting() {
  const std::size_t takers = idle_ + starting_;
  waiting_.store(jobs_.size() > takers ? jobs_.size() - takers : 0, std::memory_order_relaxed);
}

void GrowingPool::work() {
  std::unique_lock lk(mu_);
  --starting_;
  for (;;) {
    ++idle_;
    cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
    --idle_;
    if (jobs_.empty()) return;  // stopping, nothing left
    std::function<void()> fn = std::move(jobs_.front());
    jobs_.pop_front();
    count_waiting();
    lk.unlock();
    try {
      fn();
    } catch (...) {
      // A connection's failure must not take the pool down.
    }
    lk.lock();
  }
}

}  // namespace wattlab::http
