// A user's program over an installed wattlab: one window on the simulated GPU, on a virtual clock,
// measured through a Recording that stores nothing. Exit 0 when the window holds energy and says
// it is SIMULATED; 1 with the reason otherwise.
#include <wattlab/wattlab.h>

#include <cstdio>
#include <exception>

int main() {
  constexpr int64_t kS = 1'000'000'000;
  try {
    wattlab::VirtualClock clock{10 * kS};
    wattlab::RecordingOptions options;
    options.devices.device = "sim";
    options.devices.clock = &clock;
    options.devices.sim_workload = "step 300W 60s";
    wattlab::Recording recording(options);
    if (!recording.start()) {
      std::fprintf(stderr, "consumer: the simulated GPU did not answer\n");
      return 1;
    }
    const wattlab::WindowId w = recording.open("step");
    recording.meter().advance_to(clock.now_ns() + 5 * kS);
    recording.close(w);
    recording.meter().advance_to(clock.now_ns() + 2 * kS);
    const wattlab::WindowResult result = recording.result(w);
    recording.end(0);

    if (!result.final || result.domains.size() != 1) {
      std::fprintf(stderr, "consumer: expected one final domain, got %zu (final=%d)\n", result.domains.size(),
                   static_cast<int>(result.final));
      return 1;
    }
    const wattlab::DomainEnergy& d = result.domains[0];
    std::printf("consumer: %s %.1f J over %.1f s (%s)\n", d.domain_id.c_str(), d.energy_j, result.dur_s(),
                d.simulated ? "SIMULATED" : "measured");
    if (!d.available || !(d.energy_j > 0)) {
      std::fprintf(stderr, "consumer: no energy in the window\n");
      return 1;
    }
    if (!d.simulated) {
      std::fprintf(stderr, "consumer: the window is not marked SIMULATED\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
