#include "sim_workload.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "wattlab/core/error.h"

namespace wattlab::sim {
namespace {

std::vector<std::string> split_segments(std::string_view script) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : script) {
    if (c == ';' || c == '\n') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

double parse_number(std::string_view text, std::string_view what) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v))
    throw UsageError("sim workload: '" + std::string(text) + "' is not a valid " + std::string(what));
  return v;
}

bool ends_with(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.substr(s.size() - suf.size()) == suf;
}

}  // namespace

double parse_power_w(std::string_view text) {
  if (!ends_with(text, "W"))
    throw UsageError("sim workload: power '" + std::string(text) + "' needs a unit, e.g. 450W");
  const double w = parse_number(text.substr(0, text.size() - 1), "power in W");
  if (w < 0) throw UsageError("sim workload: power '" + std::string(text) + "' is negative");
  return w;
}

int64_t parse_duration_ns(std::string_view text) {
  double scale = 0;
  std::string_view num;
  if (ends_with(text, "ms")) scale = 1e6, num = text.substr(0, text.size() - 2);
  else if (ends_with(text, "us")) scale = 1e3, num = text.substr(0, text.size() - 2);
  else if (ends_with(text, "ns")) scale = 1, num = text.substr(0, text.size() - 2);
  else if (ends_with(text, "s")) scale = 1e9, num = text.substr(0, text.size() - 1);
  else throw UsageError("sim workload: duration '" + std::string(text) + "' needs a unit: s, ms, us or ns");
  const double v = parse_number(num, "duration");
  if (v <= 0) throw UsageError("sim workload: duration '" + std::string(text) + "' must be positive");
  // Bounded so that every time the simulated GPU computes stays far inside int64 ns.
  if (v * scale > static_cast<double>(kMaxDurationNs))
    throw UsageError("sim workload: duration '" + std::string(text) + "' is longer than 10^7 s");
  const int64_t ns = std::llround(v * scale);
  if (ns < 1) throw UsageError("sim workload: duration '" + std::string(text) + "' is shorter than 1 ns");
  return ns;
}

const char* Workload::default_script() {
  return "idle 1s; step 450W 2s; periodic 690W 120W period=80ms duty=0.5 3s; gemm 0.95 3s; idle 1s; loop";
}

Workload Workload::parse(std::string_view script, double idle_w, double board_max_w) {
  Workload w;
  w.idle_w_ = idle_w;
  double cap_w = board_max_w;
  int64_t t = 0;
  const auto parts = split_segments(script);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto wd = words(parts[i]);
    if (wd.empty()) continue;
    const std::string where = "sim workload segment " + std::to_string(i + 1) + " '" + parts[i] + "'";
    auto need = [&](std::size_t n, const char* usage) {
      if (wd.size() != n) throw UsageError(where + ": expected '" + usage + "'");
    };
    if (w.loop_) throw UsageError(where + ": nothing may follow 'loop'");
    Segment s;
    s.cap_w = cap_w;
    if (wd[0] == "idle") {
      need(2, "idle DUR");
      s.kind = Segment::Kind::idle;
      s.high_w = idle_w;
      s.dur_ns = parse_duration_ns(wd[1]);
    } else if (wd[0] == "step") {
      need(3, "step POWER DUR");
      s.kind = Segment::Kind::step;
      s.high_w = parse_power_w(wd[1]);
      s.dur_ns = parse_duration_ns(wd[2]);
      s.activity = s.high_w > idle_w ? 1.0 : 0.0;
    } else if (wd[0] == "periodic") {
      need(6, "periodic HIGH LOW period=DUR duty=FRACTION DUR");
      s.kind = Segment::Kind::periodic;
      s.high_w = parse_power_w(wd[1]);
      s.low_w = parse_power_w(wd[2]);
      if (wd[3].rfind("period=", 0) != 0) throw UsageError(where + ": expected period=DUR, got '" + wd[3] + "'");
      if (wd[4].rfind("duty=", 0) != 0) throw UsageError(where + ": expected duty=FRACTION, got '" + wd[4] + "'");
      s.period_ns = parse_duration_ns(std::string_view(wd[3]).substr(7));
      const double duty = parse_number(std::string_view(wd[4]).substr(5), "duty fraction");
      if (duty <= 0 || duty >= 1) throw UsageError(where + ": duty must be between 0 and 1 (exclusive)");
      s.on_ns = static_cast<int64_t>(std::llround(duty * static_cast<double>(s.period_ns)));
      s.dur_ns = parse_duration_ns(wd[5]);
      s.activity = duty;
    } else if (wd[0] == "gemm") {
      need(3, "gemm ACTIVITY DUR");
      s.kind = Segment::Kind::gemm;
      s.activity = parse_number(wd[1], "activity (0..1)");
      if (s.activity < 0 || s.activity > 1) throw UsageError(where + ": activity must be within 0..1");
      // Dynamic power scales with switching activity: the input-dependent part of the study.
      s.high_w = idle_w + s.activity * (board_max_w + 60.0 - idle_w);
      s.tensor = true;
      s.dur_ns = parse_duration_ns(wd[2]);
    } else if (wd[0] == "cap") {
      need(2, "cap POWER|none");
      cap_w = wd[1] == "none" ? 0.0 : parse_power_w(wd[1]);
      continue;
    } else if (wd[0] == "loop") {
      need(1, "loop");
      w.loop_ = true;
      continue;
    } else {
      throw UsageError(where + ": unknown segment '" + wd[0] + "'; use idle, step, periodic, gemm, cap or loop");
    }
    if (s.dur_ns > kMaxScriptNs - t) throw UsageError(where + ": the script lasts longer than 10^8 s");
    s.start_ns = t;
    t += s.dur_ns;
    w.segs_.push_back(s);
  }
  if (w.segs_.empty()) throw UsageError("sim workload: the script has no segments");
  w.cycle_ns_ = t;
  w.tail_.kind = Segment::Kind::idle;
  w.tail_.high_w = idle_w;
  w.tail_.cap_w = cap_w;
  Prefix acc;
  for (const auto& s : w.segs_) {
    w.seg_prefix_.push_back(acc);
    const Prefix p = w.partial(s, s.dur_ns);
    acc.energy_j += p.energy_j;
    acc.capped_ns += p.capped_ns;
  }
  w.cycle_total_ = acc;
  return w;
}

namespace {
double capped(double p, double cap) { return cap > 0 ? std::min(p, cap) : p; }
}  // namespace

Workload::Prefix Workload::partial(const Segment& s, int64_t into_ns) const {
  Prefix p;
  const double ns = 1e-9;
  auto add = [&](double power, int64_t dur) {
    p.energy_j += capped(power, s.cap_w) * static_cast<double>(dur) * ns;
    if (s.cap_w > 0 && power > s.cap_w) p.capped_ns += dur;
  };
  if (s.kind != Segment::Kind::periodic) {
    add(s.high_w, into_ns);
    return p;
  }
  const int64_t full = into_ns / s.period_ns;
  const int64_t rem = into_ns % s.period_ns;
  add(s.high_w, full * s.on_ns + std::min(rem, s.on_ns));
  add(s.low_w, full * (s.period_ns - s.on_ns) + std::max<int64_t>(0, rem - s.on_ns));
  return p;
}

Workload::Prefix Workload::prefix_to(int64_t t_ns) const {
  Prefix p;
  if (t_ns <= 0) return p;
  int64_t rem = t_ns;
  if (loop_) {
    const int64_t cycles = t_ns / cycle_ns_;
    rem = t_ns % cycle_ns_;
    p.energy_j = cycle_total_.energy_j * static_cast<double>(cycles);
    p.capped_ns = cycle_total_.capped_ns * cycles;
  } else if (t_ns >= cycle_ns_) {
    p = cycle_total_;
    const Prefix tail = partial(tail_, t_ns - cycle_ns_);
    p.energy_j += tail.energy_j;
    p.capped_ns += tail.capped_ns;
    return p;
  }
  auto it = std::upper_bound(segs_.begin(), segs_.end(), rem,
                             [](int64_t t, const Segment& s) { return t < s.start_ns; });
  const std::size_t i = static_cast<std::size_t>(it - segs_.begin()) - 1;
  const Prefix part = partial(segs_[i], rem - segs_[i].start_ns);
  p.energy_j += seg_prefix_[i].energy_j + part.energy_j;
  p.capped_ns += seg_prefix_[i].capped_ns + part.capped_ns;
  return p;
}

const Segment& Workload::segment_at(int64_t t_ns) const {
  if (t_ns < 0) t_ns = 0;
  int64_t rem = t_ns;
  if (loop_) rem = t_ns % cycle_ns_;
  else if (t_ns >= cycle_ns_) return tail_;
  auto it = std::upper_bound(segs_.begin(), segs_.end(), rem,
                             [](int64_t t, const Segment& s) { return t < s.start_ns; });
  return *(it - 1);
}

double Workload::uncapped_power_w(int64_t t_ns) const {
  const Segment& s = segment_at(t_ns);
  if (s.kind != Segment::Kind::periodic) return s.high_w;
  int64_t rem = loop_ ? t_ns % cycle_ns_ : t_ns;
  const int64_t phase = (rem - s.start_ns) % s.period_ns;
  return phase < s.on_ns ? s.high_w : s.low_w;
}

double Workload::power_w(int64_t t_ns) const { return capped(uncapped_power_w(t_ns), segment_at(t_ns).cap_w); }

bool Workload::capped_at(int64_t t_ns) const {
  const Segment& s = segment_at(t_ns);
  return s.cap_w > 0 && uncapped_power_w(t_ns) > s.cap_w;
}

double Workload::energy_j(int64_t t_ns) const { return prefix_to(t_ns).energy_j; }
int64_t Workload::capped_ns(int64_t t_ns) const { return prefix_to(t_ns).capped_ns; }

}  // namespace wattlab::sim
