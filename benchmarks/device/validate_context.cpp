#include "validate_context.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <sstream>
#include <thread>

#include "wattlab/marks.h"

namespace wattlab::device {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int) { g_stop.store(true); }

}  // namespace

void install_stop_handler() {
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
}

bool stop_requested() { return g_stop.load(); }

double Level::unit_s() const { return std::isfinite(t_unit_s) ? t_unit_s : unit_s_timed; }

double Level::power_at(int64_t t_ns) const {
  if (!std::isfinite(p1_w) || !std::isfinite(p2_w) || t2_ns == t1_ns) return power_w;
  const double f = static_cast<double>(t_ns - t1_ns) / static_cast<double>(t2_ns - t1_ns);
  return p1_w + f * (p2_w - p1_w);
}

nlohmann::json Level::to_json() const {
  auto v = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  return {{"name", name}, {"load", load != nullptr ? load->describe() : ""}, {"unit_s_timed", v(unit_s_timed)},
          {"measured", measured}, {"power_w", v(power_w)}, {"power_first_half_w", v(p1_w)},
          {"power_second_half_w", v(p2_w)}, {"e_unit_j", v(e_unit_j)}, {"t_unit_s", v(t_unit_s)},
          {"capped_share", v(capped_share)}, {"sm_clock_mhz", v(sm_clock_mhz)}};
}

Context::Context(const Options& o, Meter& m, DirectCounter& ctr, NvmlPoller& p, WindowLog& l, Loads& ld, int64_t start_ns)
    : opt(o), meter(m), counter(ctr), poller(p), log(l), loads(ld), start_ns_(start_ns),
      deadline_ns_(start_ns_ + s_to_ns(o.deadline_s)), rng_(o.seed) {}

double Context::elapsed_s() const { return static_cast<double>(marks::monotonic_ns() - start_ns_) * 1e-9; }

bool Context::has_time(double need_s) const {
  if (stop_requested()) return false;
  return marks::monotonic_ns() + s_to_ns(need_s + kReserveS) <= deadline_ns_;
}

void Context::skip(const std::string& what, double need_s) {
  const std::string why = stop_requested() ? "stop asked (signal)" : "no time left before the deadline";
  notes["skipped"].push_back({{"what", what}, {"need_s", need_s}, {"at_s", elapsed_s()}, {"why", why}});
  std::printf("[%7.1f s] skipped: %s (%s; needs %.1f s)\n", elapsed_s(), what.c_str(), why.c_str(), need_s);
  std::fflush(stdout);
}

void Context::progress(const std::string& part, const std::string& level, const std::string& text) const {
  std::printf("[%7.1f s] %s %s: %s\n", elapsed_s(), part.c_str(), level.c_str(), text.c_str());
  std::fflush(stdout);
}

bool Context::selected(const std::string& list, const std::string& level) const {
  auto in = [](const std::string& csv, const std::string& x) {
    std::stringstream ss(csv);
    for (std::string t; std::getline(ss, t, ',');)
      if (t == x) return true;
    return false;
  };
  return in(list, level) && in(opt.levels, level) && levels.count(level) > 0 && levels.at(level).measured;
}

AlignedEdge Context::aligned() const { return AlignedEdge{counter.read_at_update()}; }

CounterRead Context::read() const { return counter.read(); }

double Context::uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng_); }

void Context::sleep_until(int64_t t_ns) const {
  constexpr int64_t kSliceNs = 50'000'000;  // a stop request ends the wait within this
  while (!stop_requested()) {
    const int64_t now = marks::monotonic_ns();
    if (now >= t_ns) return;
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(t_ns - now, kSliceNs)));
  }
}

WindowPlan Context::labelled(const std::string& part, const std::string& level, const std::string& set,
                             const std::string& role, int repeat) {
  WindowPlan p;
  p.part = part;
  p.level = level;
  p.set = set;
  p.role = role;
  p.repeat = repeat;
  p.name = name_of(p);
  return p;
}

void Context::add_phase(const std::string& part, const std::string& level, const std::string& set, int repeat,
                        int64_t t_on, int64_t t_off) {
  WindowPlan p = labelled(part, level, set, "phase", repeat);
  p.t_begin_ns = t_on;
  p.t_end_ns = t_off;
  p.busy_s = static_cast<double>(t_off - t_on) * 1e-9;
  log.add(p);
}

WindowPlan Context::exact(const std::string& part, const std::string& level, const std::string& set,
                          const std::string& role, int repeat, const AlignedEdge& a, const AlignedEdge& b) const {
  WindowPlan p = labelled(part, level, set, role, repeat);
  p.t_begin_ns = a.t_ns();
  p.t_end_ns = b.t_ns();
  p.ctr_begin = a.e.after;
  p.ctr_end = b.e.after;
  p.ref_j = static_cast<double>(static_cast<int64_t>(b.e.after.energy_mj) - static_cast<int64_t>(a.e.after.energy_mj)) / 1000.0;
  p.ref_kind = "counter-updates";
  // The update lies somewhere in each bracket: at the window's mean power, half a bracket each side.
  const double dur_s = static_cast<double>(p.t_end_ns - p.t_begin_ns) * 1e-9;
  if (dur_s > 0) p.ref_u_j = p.ref_j / dur_s * (a.half_s() + b.half_s());
  return p;
}

std::string Context::name_of(const WindowPlan& p) {
  return p.part + "/" + p.level + "/" + p.set + "/" + p.role + "/" + std::to_string(p.repeat);
}

std::string fmt_len(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

int64_t s_to_ns(double s) { return static_cast<int64_t>(std::llround(s * 1e9)); }

}  // namespace wattlab::device
