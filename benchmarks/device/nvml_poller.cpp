#include "nvml_poller.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "wattlab/marks.h"

namespace wattlab::device {
using namespace wattlab::nvml;  // NVML_SUCCESS, field ids: the loader's own declarations

namespace {

double field_value(const nvmlFieldValue_t& f) {
  switch (f.valueType) {
    case NVML_VALUE_TYPE_DOUBLE: return f.value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT: return f.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: return static_cast<double>(f.value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return static_cast<double>(f.value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return static_cast<double>(f.value.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT: return f.value.siVal;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT: return f.value.usVal;
    default: return kNaN;
  }
}

// Linear interpolation of (t, v) points at t; the points bracket t.
double lerp_at(const std::pair<int64_t, double>& a, const std::pair<int64_t, double>& b, int64_t t) {
  if (b.first == a.first) return a.second;
  const double f = static_cast<double>(t - a.first) / static_cast<double>(b.first - a.first);
  return a.second + f * (b.second - a.second);
}

// Trapezoid integral (J, with W and ns) of the points over [t0, t1]; the value is held flat up to
// max_gap_ns beyond the first and last point; NaN if the points leave part of the span uncovered.
double integrate_points(const std::vector<std::pair<int64_t, double>>& p, int64_t t0, int64_t t1, int64_t max_gap_ns) {
  if (p.empty() || t1 <= t0) return kNaN;
  if (p.front().first - t0 > max_gap_ns || t1 - p.back().first > max_gap_ns) return kNaN;
  std::vector<std::pair<int64_t, double>> q;
  q.reserve(p.size() + 2);
  if (p.front().first > t0) q.emplace_back(t0, p.front().second);
  q.insert(q.end(), p.begin(), p.end());
  if (p.back().first < t1) q.emplace_back(t1, p.back().second);
  double sum = 0;
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    if (q[i + 1].first - q[i].first > max_gap_ns && q[i + 1].first > t0 && q[i].first < t1) return kNaN;
    const int64_t a = std::max(q[i].first, t0), b = std::min(q[i + 1].first, t1);
    if (b <= a) continue;
    sum += 0.5 * (lerp_at(q[i], q[i + 1], a) + lerp_at(q[i], q[i + 1], b)) * static_cast<double>(b - a) * 1e-9;
  }
  return sum;
}

}  // namespace

PollIntegral integrate_polls(const std::vector<PollSample>& polls, int64_t t0, int64_t t1, int64_t max_gap_ns) {
  PollIntegral r;
  auto lo = std::lower_bound(polls.begin(), polls.end(), t0 - max_gap_ns,
                             [](const PollSample& s, int64_t t) { return s.t_ns < t; });
  auto hi = std::upper_bound(polls.begin(), polls.end(), t1 + max_gap_ns,
                             [](int64_t t, const PollSample& s) { return t < s.t_ns; });
  double PollSample::*fields[4] = {&PollSample::usage_w, &PollSample::instant_w, &PollSample::mem_instant_w,
                                   &PollSample::mem_average_w};
  double* outs[4] = {&r.usage_j, &r.instant_j, &r.mem_instant_j, &r.mem_average_j};
  for (int k = 0; k < 4; ++k) {
    std::vector<std::pair<int64_t, double>> pts;
    for (auto it = lo; it != hi; ++it)
      if (std::isfinite((*it).*fields[k])) pts.emplace_back(it->t_ns, (*it).*fields[k]);
    *outs[k] = integrate_points(pts, t0, t1, max_gap_ns);
  }
  int capped = 0, with_reasons = 0, clocks = 0;
  double clock_sum = 0;
  for (auto it = lo; it != hi; ++it) {
    if (it->t_ns < t0 || it->t_ns > t1) continue;
    ++r.samples;
    if (it->reasons_ok) {
      ++with_reasons;
      if (it->reasons & kReasonSwPowerCap) ++capped;
    }
    if (std::isfinite(it->sm_clock_mhz)) {
      ++clocks;
      clock_sum += it->sm_clock_mhz;
    }
  }
  if (with_reasons > 0) r.capped_share = static_cast<double>(capped) / with_reasons;
  if (clocks > 0) r.sm_clock_mhz = clock_sum / clocks;
  return r;
}

NvmlPoller::NvmlPoller(const DirectCounter& device, int64_t interval_ns) : dev_(device), interval_ns_(interval_ns) {}

NvmlPoller::~NvmlPoller() { stop(); }

PollSample NvmlPoller::poll_once() {
  const Library& lib = dev_.library();
  const Api& api = lib.api();
  nvmlDevice_t h = dev_.handle();
  PollSample s;
  std::vector<std::pair<std::string, std::string>> st;
  auto note = [&](const std::string& what, nvmlReturn_t rc, const std::string& call) {
    st.emplace_back(what, rc == NVML_SUCCESS ? "ok" : lib.error(call, rc, dev_.uuid()).message());
  };
  const int64_t t0 = marks::monotonic_ns();
  if (api.device_get_power_usage) {
    unsigned mw = 0;
    const nvmlReturn_t rc = api.device_get_power_usage(h, &mw);
    if (rc == NVML_SUCCESS) s.usage_w = mw * 1e-3;
    note("power_usage", rc, "nvmlDeviceGetPowerUsage");
  }
  if (api.device_get_field_values) {
    nvmlFieldValue_t fv[3]{};
    fv[0].fieldId = NVML_FI_DEV_POWER_INSTANT;
    fv[0].scopeId = NVML_POWER_SCOPE_GPU;
    fv[1].fieldId = NVML_FI_DEV_POWER_INSTANT;
    fv[1].scopeId = NVML_POWER_SCOPE_MEMORY;
    fv[2].fieldId = NVML_FI_DEV_POWER_AVERAGE;
    fv[2].scopeId = NVML_POWER_SCOPE_MEMORY;
    const nvmlReturn_t rc = api.device_get_field_values(h, 3, fv);
    double* outs[3] = {&s.instant_w, &s.mem_instant_w, &s.mem_average_w};
    const char* names[3] = {"field 186 scope 0 (instant, GPU)", "field 186 scope 2 (instant, memory)",
                            "field 185 scope 2 (average, memory)"};
    for (int k = 0; k < 3; ++k) {
      const nvmlReturn_t r = rc != NVML_SUCCESS ? rc : fv[k].nvmlReturn;
      if (r == NVML_SUCCESS) *outs[k] = field_value(fv[k]) * 1e-3;
      note(names[k], r, "nvmlDeviceGetFieldValues");
    }
  }
  if (api.device_get_clock_info) {
    unsigned mhz = 0;
    const nvmlReturn_t rc = api.device_get_clock_info(h, NVML_CLOCK_SM, &mhz);
    if (rc == NVML_SUCCESS) s.sm_clock_mhz = mhz;
    note("sm_clock", rc, "nvmlDeviceGetClockInfo");
  }
  if (api.device_get_clocks_event_reasons) {
    unsigned long long r = 0;
    const nvmlReturn_t rc = api.device_get_clocks_event_reasons(h, &r);
    if (rc == NVML_SUCCESS) {
      s.reasons = r;
      s.reasons_ok = true;
    }
    note("clock_event_reasons", rc, "nvmlDeviceGetCurrentClocksEventReasons");
  }
  s.t_ns = t0 + (marks::monotonic_ns() - t0) / 2;
  std::lock_guard<std::mutex> g(mu_);
  if (status_.empty()) status_ = std::move(st);
  return s;
}

void NvmlPoller::start() {
  if (thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] {
    int64_t next = marks::monotonic_ns();
    while (!stop_.load()) {
      const PollSample s = poll_once();
      {
        std::lock_guard<std::mutex> g(mu_);
        samples_.push_back(s);
      }
      next += interval_ns_;
      const int64_t now = marks::monotonic_ns();
      if (next < now) next = now;  // late: poll again at once, then keep the interval from here
      std::this_thread::sleep_for(std::chrono::nanoseconds(next - now));
    }
  });
}

void NvmlPoller::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

PollIntegral NvmlPoller::integrate(int64_t t_begin_ns, int64_t t_end_ns) const {
  std::lock_guard<std::mutex> g(mu_);
  // A poll held up (NVML busy with another thread's counter read) is bridged, as a polling tool would.
  return integrate_polls(samples_, t_begin_ns, t_end_ns, std::max<int64_t>(50 * interval_ns_, 500'000'000));
}

std::vector<PollSample> NvmlPoller::samples() const {
  std::lock_guard<std::mutex> g(mu_);
  return samples_;
}

std::vector<std::pair<std::string, std::string>> NvmlPoller::status() const {
  std::lock_guard<std::mutex> g(mu_);
  return status_;
}

}  // namespace wattlab::device
