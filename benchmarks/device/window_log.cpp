#include "window_log.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "wattlab/marks.h"

namespace wattlab::device {
namespace {

// The CSV's columns, in order (python/bench/meter_validate.py reads them by name).
constexpr const char* kColumns[] = {
    "half", "part", "level", "set", "role", "repeat", "name", "t_begin_ns", "t_end_ns", "dur_s", "planned_s",
    "shift_ms", "shift_actual_ms", "work_units", "busy_s",
    "wl_api", "wl_final", "wl_available", "wl_energy_j", "wl_u95_j", "wl_gain_j", "wl_estimator", "wl_mean_power_w",
    "wl_peak_power_w", "wl_cross_check_j", "wl_cross_check_estimator", "wl_capped_share", "wl_sm_clock_mhz",
    "wl_issues",
    "ctr_edges_j", "ctr_read_ms", "ctr_edge_offset_ms",
    "poll_usage_j", "poll_instant_j", "poll_samples", "poll_capped_share", "poll_sm_clock_mhz",
    "mem_wl_status", "mem_wl_energy_j", "mem_wl_u95_j", "mem_wl_estimator", "mem_poll_instant_j",
    "mem_poll_average_j",
    "ref_j", "ref_u_j", "ref_kind", "ref_alt_j"};

std::string num(double v, int digits = 6) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string csv_quoted(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
  return s;
}

const DomainEnergy* find_domain(const WindowResult& r, const std::string& id) {
  for (const auto& d : r.domains)
    if (d.domain_id == id) return &d;
  return nullptr;
}

}  // namespace

WindowLog::WindowLog(Meter& meter, const NvmlPoller& poller, std::string gpu_domain, std::string mem_domain,
                     const std::string& csv_path, std::string half)
    : meter_(meter), poller_(poller), gpu_domain_(std::move(gpu_domain)), mem_domain_(std::move(mem_domain)),
      half_(std::move(half)), csv_(csv_path) {
  if (!csv_) throw std::runtime_error("cannot write " + csv_path);
  bool first = true;
  for (const char* c : kColumns) {
    csv_ << (first ? "" : ",") << c;
    first = false;
  }
  csv_ << "\n";
  csv_.flush();
}

void WindowLog::add(WindowPlan p) {
  p.wl_id = meter_.add_window(p.name, p.t_begin_ns, p.t_end_ns);
  p.wl_api = "add_window";
  queue_.push_back(std::move(p));
}

void WindowLog::queue(WindowPlan p) {
  if (!p.wl_id) throw std::logic_error("WindowLog::queue: window '" + p.name + "' was never opened");
  if (p.wl_api.empty()) p.wl_api = "open_close";
  queue_.push_back(std::move(p));
}

void WindowLog::flush() {
  // The polls must cover the newest window's end too.
  const int64_t polled_to = marks::monotonic_ns() - 3 * poller_.interval_ns();
  while (!queue_.empty()) {
    const WindowPlan& p = queue_.front();
    const auto r = meter_.result(*p.wl_id);
    if (!r || r->t_end_ns > polled_to) return;
    write(p, *r);
    queue_.pop_front();
  }
}

void WindowLog::finish(int64_t until_ns) {
  while (!queue_.empty()) {
    const WindowPlan& p = queue_.front();
    const int64_t left_ns = std::max<int64_t>(0, until_ns - marks::monotonic_ns());
    const WindowResult r = meter_.wait_result(*p.wl_id, std::chrono::milliseconds(left_ns / 1'000'000));
    write(p, r);
    queue_.pop_front();
  }
  csv_.flush();
}

void WindowLog::write(const WindowPlan& p, const WindowResult& r) {
  const int64_t a = p.wl_api == "add_window" ? p.t_begin_ns : r.t_begin_ns;
  const int64_t b = p.wl_api == "add_window" ? p.t_end_ns : r.t_end_ns;
  const double dur_s = static_cast<double>(b - a) * 1e-9;
  const DomainEnergy* g = find_domain(r, gpu_domain_);
  const DomainEnergy* m = find_domain(r, mem_domain_);
  const PollIntegral poll = poller_.integrate(a, b);
  double ctr_j = kNaN, ctr_read_ms = kNaN, ctr_offset_ms = kNaN;
  if (p.ctr_begin && p.ctr_end) {
    ctr_j = static_cast<double>(static_cast<int64_t>(p.ctr_end->energy_mj) - static_cast<int64_t>(p.ctr_begin->energy_mj)) /
            1000.0;
    ctr_read_ms = static_cast<double>((p.ctr_begin->t_end_ns - p.ctr_begin->t_begin_ns) +
                                      (p.ctr_end->t_end_ns - p.ctr_end->t_begin_ns)) * 1e-6;
    ctr_offset_ms = static_cast<double>(std::max(std::llabs(mid_ns(*p.ctr_begin) - a), std::llabs(mid_ns(*p.ctr_end) - b))) *
                    1e-6;
  }
  std::string mem_status = "no memory domain";
  if (m != nullptr) mem_status = m->available ? "ok" : "unavailable: " + joined(m->issues);
  const bool g_ok = g != nullptr && g->available;
  const auto& tel = g != nullptr ? g->telemetry : TelemetrySummary{};
  std::vector<std::string> f = {
      half_, p.part, p.level, p.set, p.role, std::to_string(p.repeat), csv_quoted(p.name), std::to_string(a),
      std::to_string(b), num(dur_s, 9), num(p.planned_s), num(p.shift_ms), num(p.shift_actual_ms), num(p.work_units, 9),
      num(p.busy_s, 9),
      p.wl_api, r.final ? "final" : "provisional", g_ok ? "1" : "0", g_ok ? num(g->energy_j, 9) : "",
      g_ok ? num(g->uncertainty_j) : "", g_ok ? num(g->systematic_j) : "", g != nullptr ? csv_quoted(to_string(g->estimator)) : "",
      g_ok ? num(g->mean_power_w) : "", g_ok ? num(g->peak_power_w) : "",
      g != nullptr && g->cross_check_j ? num(*g->cross_check_j, 9) : "", g != nullptr ? csv_quoted(to_string(g->cross_check_estimator)) : "",
      tel.power_capped_fraction ? num(*tel.power_capped_fraction) : "",
      tel.mean_sm_clock_mhz ? num(*tel.mean_sm_clock_mhz) : "",
      g != nullptr ? csv_quoted(joined(g->issues)) : csv_quoted("no domain " + gpu_domain_ + " in the result"),
      num(ctr_j, 9), num(ctr_read_ms), num(ctr_offset_ms),
      num(poll.usage_j, 9), num(poll.instant_j, 9), std::to_string(poll.samples), num(poll.capped_share),
      num(poll.sm_clock_mhz),
      csv_quoted(mem_status), m != nullptr && m->available ? num(m->energy_j, 9) : "",
      m != nullptr && m->available ? num(m->uncertainty_j) : "", m != nullptr ? csv_quoted(to_string(m->estimator)) : "",
      num(poll.mem_instant_j, 9), num(poll.mem_average_j, 9),
      num(p.ref_j, 9), num(p.ref_u_j), p.ref_kind, num(p.ref_alt_j, 9)};
  store(p, r, poll, ctr_j);
  if (f.size() != std::size(kColumns)) throw std::logic_error("WindowLog: a row does not match the CSV header");
  for (std::size_t i = 0; i < f.size(); ++i) csv_ << (i > 0 ? "," : "") << f[i];
  csv_ << "\n";
  csv_.flush();
  ++rows_;
  if (!r.final) ++provisional_;
}

void WindowLog::store(const WindowPlan& p, const WindowResult& r, const PollIntegral& poll, double ctr_j) {
  if (recording_ == nullptr || store_failed_) return;
  WindowResult w = r;
  w.labels = {{"half", half_}, {"part", p.part}, {"level", p.level}, {"set", p.set}, {"role", p.role},
              {"wl_api", p.wl_api}};
  if (!p.ref_kind.empty()) w.labels["ref_kind"] = p.ref_kind;
  w.counts["repeat"] = p.repeat;
  auto count = [&](const char* key, double v) {
    if (std::isfinite(v)) w.counts[key] = v;
  };
  count("planned_s", p.planned_s);
  count("shift_ms", p.shift_ms);
  count("work_units", p.work_units);
  count("busy_s", p.busy_s);
  count("ref_j", p.ref_j);
  count("ref_u_j", p.ref_u_j);
  count("ref_alt_j", p.ref_alt_j);
  count("ctr_edges_j", ctr_j);
  count("poll_usage_j", poll.usage_j);
  count("poll_instant_j", poll.instant_j);
  count("mem_poll_instant_j", poll.mem_instant_j);
  count("mem_poll_average_j", poll.mem_average_j);
  try {
    recording_->store_window(w);
  } catch (const std::exception& e) {
    // The CSV goes on: a store that fails once is not written again (its error is printed once).
    store_failed_ = true;
    std::fprintf(stderr, "meter_validate: storing window '%s' failed, no more windows are stored: %s\n", p.name.c_str(),
                 e.what());
  }
}

}  // namespace wattlab::device
