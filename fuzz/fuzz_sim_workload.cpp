// Fuzzes the simulated GPU's workload scripts (src/sensors/sim/sim_workload.cpp, docs/sim.md): a
// script either throws UsageError naming the problem (exit 2) or gives a workload whose true
// power is finite and >= 0 and whose true energy is finite and never decreases, at any time the
// simulated GPU may ask about (its start, inside and at the end of the cycle, several cycles on).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "sensors/sim/sim_workload.h"
#include "wattlab/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using wattlab::fuzz::check;
  using wattlab::sim::Workload;
  const std::string_view script(reinterpret_cast<const char*>(data), size);
  Workload w;
  try {
    w = Workload::parse(script);
  } catch (const wattlab::UsageError& e) {
    check(std::string_view(e.what()).rfind("sim workload", 0) == 0, std::string("the error names the workload: ") + e.what());
    return 0;
  }
  check(w.cycle_ns() > 0, "a parsed workload lasts > 0 ns");
  std::vector<int64_t> times{0, 1};
  for (const auto& s : w.segments()) {
    times.push_back(s.start_ns);
    times.push_back(s.start_ns + s.dur_ns / 2);
    times.push_back(s.start_ns + s.dur_ns - 1);
  }
  const int64_t c = w.cycle_ns();
  for (int64_t k : {1, 2, 3}) {
    if (c > std::numeric_limits<int64_t>::max() / 4) break;
    times.push_back(k * c - 1);
    times.push_back(k * c);
    times.push_back(k * c + c / 3);
  }
  double last_energy_j = 0;
  int64_t last_t_ns = 0;
  std::sort(times.begin(), times.end());
  for (int64_t t : times) {
    const double p = w.power_w(t);
    check(std::isfinite(p) && p >= 0, "power at t=" + std::to_string(t) + " ns is " + std::to_string(p));
    const double e = w.energy_j(t);
    check(std::isfinite(e) && e >= 0, "energy to t=" + std::to_string(t) + " ns is " + std::to_string(e));
    check(e >= last_energy_j * (1 - 1e-12) - 1e-9,
          "energy decreases from t=" + std::to_string(last_t_ns) + " to " + std::to_string(t) + " ns");
    const int64_t capped = w.capped_ns(t);
    check(capped >= 0 && capped <= t, "capped time to t=" + std::to_string(t) + " ns is " + std::to_string(capped));
    (void)w.capped_at(t);
    last_energy_j = e;
    last_t_ns = t;
  }
  return 0;
}
