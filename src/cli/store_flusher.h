// Readings of a meter the caller drives itself, flushed to the store every 500 ms on a thread
// (the library's Flusher), for the commands that do not yet run through wattlab::Recording.
// finish() stops the thread and writes what is left.
#pragma once
#include "wattlab/record/flusher.h"

namespace wattlab::cli {

class StoreFlusher {
 public:
  StoreFlusher(Meter& meter, Store& store, RunId run)
      : flusher_([&meter, &store, run] { flush_readings(meter, store, run); }) {}
  void finish() { flusher_.finish(); }

 private:
  Flusher flusher_;
};

}  // namespace wattlab::cli
