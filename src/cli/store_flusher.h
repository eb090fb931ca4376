// Moves the meter's readings into the store every 500 ms on its own thread, so a killed run keeps
// what it measured; finish() stops it and writes what is left. Shared by `run` and `infer serve-bench`.
#pragma once
#include <atomic>
#include <thread>

#include "wattlab/meter/meter.h"
#include "wattlab/store/store.h"

namespace wattlab::cli {

class StoreFlusher {
 public:
  StoreFlusher(Meter& meter, Store& store, RunId run);
  StoreFlusher(const StoreFlusher&) = delete;
  StoreFlusher& operator=(const StoreFlusher&) = delete;
  ~StoreFlusher();
  // Stops the thread, then drains the meter once more (call after meter.stop()). Idempotent.
  void finish();

 private:
  void flush_once();
  Meter& meter_;
  Store& store_;
  RunId run_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace wattlab::cli
