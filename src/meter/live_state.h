// What the meter knows now, for live views (Meter::snapshot, events, the store's flusher): each
// reading's health and newest value, events on the timeline, how late the sampler's reads start,
// the readings waiting for the flusher, and the cumulative energy of every domain. It also files
// each read's readings into the domain's timeline. Not thread-safe: the meter holds its lock.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "estimate.h"
#include "wattlab/meter/meter.h"

namespace wattlab {

class LiveState {
 public:
  LiveState(const std::vector<Domain>& domains, std::size_t export_capacity, int64_t start_ns);

  enum class Outcome { ok, failed, lost };
  // One read's outcome for reading `kind` of domain d: health, events, and its readings exported
  // and (all but the counter's, which CounterTracker places) added to the timeline.
  Outcome record(uint32_t d, ReadingKind kind, const Status& st, int64_t mid_ns, std::span<const Reading> readings,
                 Timeline& tl, DomainState& state);
  // A read started at t0_ns took dur_ns; late_ns: how late it started (the first read of each
  // reading waits for start and is not counted late).
  void count_read(int64_t t0_ns, int64_t dur_ns, const int64_t* late_ns);
  // The counter went back: `message` says how the step was bridged.
  void counter_reset(uint32_t d, int64_t t_ns, std::string message);
  void event(int64_t t_ns, uint32_t d, ReadingKind k, std::string kind, std::string message);

  // The sampler fields besides the CPU figures (the meter adds those); advances the running
  // energy of domains without a counter.
  MeterSnapshot snapshot(const DomainTimelines& tl, int64_t now_ns);
  std::size_t drain_readings(std::vector<TimedReading>& out);
  const std::vector<MeterEvent>& events() const { return events_; }

 private:
  struct PowerAccum {
    int64_t to_ns = INT64_MIN;
    double energy_j = 0;
    int64_t unmeasured_ns = 0;
  };
  void export_reading(uint32_t d, const Reading& r);

  std::vector<std::string> domain_ids_;
  std::size_t export_capacity_;
  int64_t start_ns_;
  std::vector<DomainLive> live_;   // reading health and counter resets, per domain
  std::vector<PowerAccum> accum_;  // energy of domains without a counter, advanced by snapshot()
  std::vector<int> fail_streak_;   // per domain and reading kind: failures in a row
  SamplerStats stats_;
  std::vector<MeterEvent> events_;
  std::vector<TimedReading> export_;
  std::size_t export_dropped_ = 0;
};

}  // namespace wattlab
