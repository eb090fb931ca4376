// Faults the simulated GPU produces on request (docs/sim.md):
//   read-error [KIND] FROM-TO      reads (of KIND, or all) fail in [FROM, TO)
//   counter-reset AT               the energy counter restarts from 0 at AT (as on a driver reload)
//   gpu-lost AT                    every read fails with "GPU lost" from AT on
//   gpu-lost FROM-TO               ... from FROM until TO, then the GPU answers again
//   stuck [KIND] FROM-TO           reads (of KIND, or all) return the value they had at FROM
//   garbage [KIND] FROM-TO         reads return nonsense: NaN, negative, or far out of range
//   slow-read [KIND] FROM-TO DUR   each read blocks DUR (a latency spike) before it reads
//   unsupported KIND AT            reads of KIND answer "not supported" from AT on
// Times are since the simulated GPU was opened (0s included); segments separated by ';'.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "wattlab/sensors/reading.h"

namespace wattlab::sim {

struct Faults {
  // Reads of `kind` (every kind when empty) in [from_ns, to_ns).
  struct Span {
    std::optional<ReadingKind> kind;
    int64_t from_ns = 0;
    int64_t to_ns = 0;
    int64_t extra_ns = 0;  // slow-read: how long each read blocks
    bool covers(ReadingKind k, int64_t t_ns) const {
      return (!kind || *kind == k) && t_ns >= from_ns && t_ns < to_ns;
    }
  };
  std::vector<Span> read_errors;
  std::vector<Span> stuck;
  std::vector<Span> garbage;
  std::vector<Span> slow_reads;
  std::vector<Span> unsupported;  // to_ns: INT64_MAX
  std::vector<int64_t> counter_resets_ns;
  int64_t gpu_lost_ns = -1;
  int64_t gpu_back_ns = INT64_MAX;  // gpu-lost FROM-TO: when the GPU answers again

  static Faults parse(std::string_view script);  // throws UsageError naming the bad part
  bool read_fails(ReadingKind kind, int64_t t_ns) const;
  bool lost(int64_t t_ns) const { return gpu_lost_ns >= 0 && t_ns >= gpu_lost_ns && t_ns < gpu_back_ns; }
  int64_t last_reset_before(int64_t t_ns) const;  // -1 when none
  // The span a fault list holds for (kind, t), or nullptr.
  static const Span* find(const std::vector<Span>& spans, ReadingKind kind, int64_t t_ns);
  int64_t slow_ns(ReadingKind kind, int64_t t_ns) const;  // 0 when no slow-read covers t
  bool unsupported_at(ReadingKind kind, int64_t t_ns) const { return find(unsupported, kind, t_ns) != nullptr; }
};

// The nonsense value a garbage read returns: the i-th of a cycle of NaN, a negative value, a huge
// one and (for a counter) zero; deterministic in i.
double garbage_value(ReadingKind kind, uint64_t i);

}  // namespace wattlab::sim
