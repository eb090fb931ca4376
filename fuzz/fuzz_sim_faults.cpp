// Fuzzes the simulated GPU's fault scripts (src/sensors/sim/sim_faults.cpp, docs/sim.md): a script
// either throws UsageError naming the problem (exit 2) or gives faults whose read-error ranges are
// non-empty and whose times the simulated GPU can ask about.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "sensors/sim/sim_faults.h"
#include "wattlab/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using wattlab::fuzz::check;
  using wattlab::sim::Faults;
  const std::string_view script(reinterpret_cast<const char*>(data), size);
  Faults f;
  try {
    f = Faults::parse(script);
  } catch (const wattlab::UsageError& e) {
    check(std::string_view(e.what()).rfind("sim faults '", 0) == 0, std::string("the error names the fault: ") + e.what());
    return 0;
  }
  for (const auto& e : f.read_errors) {
    check(e.from_ns >= 0 && e.to_ns > e.from_ns, "a read-error range is non-empty and starts at or after the device opens");
    const auto kind = e.kind.value_or(wattlab::ReadingKind::energy_counter_j);
    check(f.read_fails(kind, e.from_ns), "a read fails at the start of its range");
    check(f.read_fails(kind, e.to_ns - 1), "a read fails at the end of its range");
  }
  for (int64_t r : f.counter_resets_ns) {
    check(r >= 0, "a counter reset lies at or after the moment the device opens");
    check(f.last_reset_before(r) >= r, "a reset is found at its own time");
  }
  if (f.gpu_lost_ns >= 0) check(f.lost(f.gpu_lost_ns), "the GPU is lost at its time");
  return 0;
}
