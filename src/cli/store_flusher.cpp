#include "store_flusher.h"

#include <chrono>
#include <vector>

namespace wattlab::cli {

StoreFlusher::StoreFlusher(Meter& meter, Store& store, RunId run) : meter_(meter), store_(store), run_(run) {
  thread_ = std::thread([this] {
    while (!done_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      flush_once();
    }
  });
}

StoreFlusher::~StoreFlusher() { finish(); }

void StoreFlusher::finish() {
  if (!thread_.joinable()) return;
  done_.store(true);
  thread_.join();
  flush_once();
}

void StoreFlusher::flush_once() {
  std::vector<TimedReading> batch;
  meter_.drain_readings(batch);
  if (!batch.empty()) store_.append_readings(run_, batch);
}

}  // namespace wattlab::cli
