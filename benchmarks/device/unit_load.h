// A GPU load made of identical units of work (one GEMM, one kernel launch, one copy), launched on
// one stream with at most kDepth in flight: continuously from a feeder thread, for a given time,
// or a given number of units. A unit is the "work" that measured energies are checked against.
// Derived classes enqueue one unit; their constructors end with finish_setup() and their
// destructors begin with stop(), so the feeder never calls into a half-built or half-destroyed load.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace wattlab::device {

class UnitLoad {
 public:
  virtual ~UnitLoad();
  UnitLoad(const UnitLoad&) = delete;
  UnitLoad& operator=(const UnitLoad&) = delete;

  // Units launched back to back on a feeder thread until stop(); stop() waits for the GPU.
  void start();
  void stop();
  bool running() const { return feeder_.joinable(); }
  // Launches units while less than `busy_ns` has passed since the call, then waits for them.
  // Returns the number launched.
  int64_t burst(int64_t busy_ns);
  // Launches exactly `count` units and waits for them. Returns `count`.
  int64_t run_units(int64_t count);
  // Runs `count` units and waits: the mean GPU time of one, in ms (CUDA events).
  double time_units_ms(int count);

  uint64_t launched() const { return launched_.load(); }
  const std::string& device_name() const { return name_; }
  const std::string& device_uuid() const { return uuid_; }  // "GPU-xxxxxxxx-...", as NVML writes it
  int sm_count() const { return sm_count_; }
  virtual std::string describe() const = 0;  // what one unit is, for the results

 protected:
  UnitLoad();  // CUDA device 0, a non-blocking stream and kDepth events
  void* stream() const { return stream_; }  // cudaStream_t
  // Enqueues one unit on stream(). Throws std::runtime_error naming the failed call.
  virtual void enqueue_unit() = 0;
  // One unit launched and waited for: kernels are loaded before anything is timed.
  void finish_setup();

 private:
  void launch_one();
  static constexpr int kDepth = 4;
  std::string name_, uuid_;
  int sm_count_ = 0;
  void* stream_ = nullptr;
  void* events_[kDepth] = {};
  uint64_t next_event_ = 0;
  std::atomic<uint64_t> launched_{0};
  std::atomic<bool> stop_{false};
  std::thread feeder_;
};

}  // namespace wattlab::device
