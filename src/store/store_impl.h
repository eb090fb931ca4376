// Store's private state, shared by the writing (store.cpp) and reading (store_load.cpp) halves.
#pragma once
#include <filesystem>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "sqlite.h"
#include "wattlab/store/store.h"

namespace wattlab {

class Store::Impl {
 public:
  std::filesystem::path path;
  bool read_only = false;
  // One connection for all threads: the flusher appends while the main thread adds windows.
  std::mutex mu;
  sqlite::Db db;

  // Hot-path statements, prepared once (read-write mode only).
  sqlite::Stmt insert_reading;
  sqlite::Stmt insert_telemetry;
  sqlite::Stmt add_counts;
  sqlite::Stmt insert_event;

  // Domains per run, cached: append_readings checks every index without a query.
  std::unordered_map<RunId, uint32_t> domain_counts;

  Status prepare_writes();
  Status require_writable(std::string_view operation) const;
  // The run's domain count; not_found when the run is not in the file. Caller holds `mu`.
  Result<uint32_t> domain_count(RunId run);
  Error run_not_found(RunId run) const;
};

}  // namespace wattlab
