// Faults the simulated GPU produces on request (docs/sim.md):
//   read-error [KIND] FROM-TO   reads (of KIND, or all) fail in [FROM, TO)
//   counter-reset AT            the energy counter restarts from 0 at AT (as on a driver reload)
//   gpu-lost AT                 every read fails with "GPU lost" from AT on
// Times are since the simulated GPU was opened; segments separated by ';'.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "wattlab/sensors/reading.h"

namespace wattlab::sim {

struct Faults {
  struct ReadError {
    std::optional<ReadingKind> kind;  // empty: every kind
    int64_t from_ns = 0;
    int64_t to_ns = 0;
  };
  std::vector<ReadError> read_errors;
  std::vector<int64_t> counter_resets_ns;
  int64_t gpu_lost_ns = -1;

  static Faults parse(std::string_view script);  // throws UsageError naming the bad part
  bool read_fails(ReadingKind kind, int64_t t_ns) const;
  bool lost(int64_t t_ns) const { return gpu_lost_ns >= 0 && t_ns >= gpu_lost_ns; }
  int64_t last_reset_before(int64_t t_ns) const;  // -1 when none
};

}  // namespace wattlab::sim
