// Live views of a running meter for exporters and monitors: the meter's snapshot with energy
// counters that never go back, so that Prometheus' rate() and a monitor's deltas stay sane.
#pragma once
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/meter/meter.h"

namespace wattlab {

class LiveMeter {
 public:
  explicit LiveMeter(const Meter& meter);
  const std::vector<Domain>& domains() const;
  // The meter's snapshot, with every domain's energy_j raised to the highest value published so
  // far. The timeline already removes counter resets and wraps (bridged with integrated power);
  // what it may still do is revise a value slightly down (an extension past the newest counter
  // point replaced by the counter, a bridge corrected). Holding the published value until the
  // timeline passes it again keeps the published counter monotonic. Thread-safe.
  MeterSnapshot sample();

 private:
  const Meter& meter_;
  std::mutex mu_;
  std::vector<double> published_j_;
};

// The newest reading of `kind` while it still describes the device: the domain is not lost and
// the newest read of that kind succeeded. A lost domain's telemetry, or a reading whose reads now
// fail, has no current value (empty), so exporters omit it rather than repeat the last one.
const std::optional<Reading>& current_reading(const DomainLive& live, ReadingKind kind);

// Names of the bits set in an NVML clocks-event (throttle) reason mask, in bit order, e.g.
// "sw_power_cap". Unknown bits come out as "bit_0x...".
struct ClockEventReason {
  uint64_t bit;
  std::string_view name;
};
const std::vector<ClockEventReason>& clock_event_reasons();
std::vector<std::string> clock_event_reason_names(uint64_t mask);

// Domain id "gpu:3" or "gpu:3/memory" -> "3"; other domains -> "".
std::string gpu_index_of(std::string_view domain_id);

}  // namespace wattlab
