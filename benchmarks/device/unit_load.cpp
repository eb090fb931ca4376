#include "unit_load.h"

#include <chrono>
#include <cstdio>

#include "cuda_check.h"

namespace wattlab::device {
namespace {

std::string uuid_string(const cudaUUID_t& u) {
  // NVML's form: GPU-8-4-4-4-12 hex digits.
  std::string s = "GPU-";
  char buf[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(u.bytes[i]));
    s += buf;
  }
  return s;
}

}  // namespace

UnitLoad::UnitLoad() {
  cuda_check(cudaSetDevice(0), "cudaSetDevice(0)");
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  name_ = prop.name;
  uuid_ = uuid_string(prop.uuid);
  sm_count_ = prop.multiProcessorCount;
  cudaStream_t stream = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  stream_ = stream;
  for (auto& e : events_) {
    cudaEvent_t ev = nullptr;
    // Blocking sync: the launching thread sleeps while it waits instead of spinning a core.
    cuda_check(cudaEventCreateWithFlags(&ev, cudaEventBlockingSync | cudaEventDisableTiming), "cudaEventCreate");
    e = ev;
  }
}

UnitLoad::~UnitLoad() {
  stop_.store(true);
  if (feeder_.joinable()) feeder_.join();
  cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  for (auto& e : events_) cudaEventDestroy(static_cast<cudaEvent_t>(e));
  cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

void UnitLoad::finish_setup() {
  launch_one();
  cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
}

void UnitLoad::launch_one() {
  // Before reusing an event slot, wait for the unit it marks: at most kDepth in flight.
  auto ev = static_cast<cudaEvent_t>(events_[next_event_ % kDepth]);
  if (next_event_ >= kDepth) cuda_check(cudaEventSynchronize(ev), "cudaEventSynchronize");
  enqueue_unit();
  cuda_check(cudaEventRecord(ev, static_cast<cudaStream_t>(stream_)), "cudaEventRecord");
  ++next_event_;
  launched_.fetch_add(1);
}

void UnitLoad::start() {
  if (feeder_.joinable()) return;
  stop_.store(false);
  feeder_ = std::thread([this] {
    while (!stop_.load()) launch_one();
  });
}

void UnitLoad::stop() {
  if (!feeder_.joinable()) return;
  stop_.store(true);
  feeder_.join();
  cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
}

int64_t UnitLoad::burst(int64_t busy_ns) {
  const auto t0 = std::chrono::steady_clock::now();
  int64_t count = 0;
  while (std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count() < busy_ns) {
    launch_one();
    ++count;
  }
  cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
  return count;
}

int64_t UnitLoad::run_units(int64_t count) {
  for (int64_t i = 0; i < count; ++i) launch_one();
  cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
  return count;
}

double UnitLoad::time_units_ms(int count) {
  cudaEvent_t t0 = nullptr, t1 = nullptr;
  cuda_check(cudaEventCreate(&t0), "cudaEventCreate");
  cuda_check(cudaEventCreate(&t1), "cudaEventCreate");
  auto s = static_cast<cudaStream_t>(stream_);
  cuda_check(cudaEventRecord(t0, s), "cudaEventRecord");
  for (int i = 0; i < count; ++i) launch_one();
  cuda_check(cudaEventRecord(t1, s), "cudaEventRecord");
  cuda_check(cudaEventSynchronize(t1), "cudaEventSynchronize");
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, t0, t1), "cudaEventElapsedTime");
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
  return static_cast<double>(ms) / count;
}

}  // namespace wattlab::device
