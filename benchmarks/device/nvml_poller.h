// What a polling tool sees: a thread that reads NVML's power every `interval_ns` (10 ms) and
// integrates it over any window afterwards. Each poll reads nvmlDeviceGetPowerUsage (on Hopper a
// 1 s running average), the instant power field for the GPU and memory scope, the memory scope's
// averaged field, the SM clock and the clock-event reasons (the power-cap bit). Read only.
#pragma once
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "direct_counter.h"

namespace wattlab::device {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr uint64_t kReasonSwPowerCap = 0x4;  // nvmlClocksEventReasonSwPowerCap

struct PollSample {
  int64_t t_ns = 0;  // CLOCK_MONOTONIC, midpoint of the poll's reads
  double usage_w = kNaN;        // nvmlDeviceGetPowerUsage
  double instant_w = kNaN;      // field NVML_FI_DEV_POWER_INSTANT, GPU scope
  double mem_instant_w = kNaN;  // field NVML_FI_DEV_POWER_INSTANT, memory scope
  double mem_average_w = kNaN;  // field NVML_FI_DEV_POWER_AVERAGE, memory scope (what wattlab reads)
  double sm_clock_mhz = kNaN;
  uint64_t reasons = 0;
  bool reasons_ok = false;
};

// Energy over a window from the polled values, each taken as the power at its poll time and
// joined linearly (trapezoids), cut at the window's edges. NaN where the polls do not cover it.
struct PollIntegral {
  double usage_j = kNaN;
  double instant_j = kNaN;
  double mem_instant_j = kNaN;
  double mem_average_j = kNaN;
  double capped_share = kNaN;  // polls inside the window with the SW power cap bit set
  double sm_clock_mhz = kNaN;  // mean over the polls inside the window
  int samples = 0;             // polls inside the window
};

class NvmlPoller {
 public:
  NvmlPoller(const DirectCounter& device, int64_t interval_ns);
  ~NvmlPoller();
  NvmlPoller(const NvmlPoller&) = delete;
  NvmlPoller& operator=(const NvmlPoller&) = delete;

  void start();
  void stop();
  PollIntegral integrate(int64_t t_begin_ns, int64_t t_end_ns) const;
  std::vector<PollSample> samples() const;  // a copy, in time order
  int64_t interval_ns() const { return interval_ns_; }
  // The first poll's outcome per quantity: "ok" or the NVML error, for the results JSON.
  std::vector<std::pair<std::string, std::string>> status() const;

 private:
  PollSample poll_once();
  const DirectCounter& dev_;
  int64_t interval_ns_;
  mutable std::mutex mu_;
  std::vector<PollSample> samples_;
  std::vector<std::pair<std::string, std::string>> status_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The same integral over a given sorted list of polls (pure; NvmlPoller::integrate uses it).
PollIntegral integrate_polls(const std::vector<PollSample>& polls, int64_t t_begin_ns, int64_t t_end_ns,
                             int64_t max_gap_ns);

}  // namespace wattlab::device
