// Live views of a running meter for exporters and monitors: the meter's snapshot with energy
// counters that never go back, so that Prometheus' rate() and a monitor's deltas stay sane.
#pragma once
#include <cstdint>
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
  // The meter's snapshot, with every domain's energy never below the highest value published so
  // far. The timeline already removes counter resets and wraps (bridged with integrated power);
  // what it may still do is revise a value down (an extension past the newest counter point
  // replaced by the counter, a bridge corrected) or fall back to an older point (the extension
  // cannot be made while power readings lag). Then the published pair, energy_j with the
  // energy_t_ns it belongs to, is held until the timeline passes it again: the counter stays
  // monotonic and its time stays the one its value belongs to, so that a consumer dividing energy
  // by time (a job's mean power from two scrapes) never pairs a newer value with an older time.
  // energy_t_ns never goes back either. Thread-safe.
  MeterSnapshot sample();

 private:
  struct Published {
    double energy_j = 0;
    int64_t t_ns = INT64_MIN;
  };
  const Meter& meter_;
  std::mutex mu_;
  std::vector<Published> published_;
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
