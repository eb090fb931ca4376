#include "sim_faults.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "sim_workload.h"
#include "wattlab/core/error.h"

namespace wattlab::sim {
namespace {

// A time since the device opened: a duration, or zero (the moment it opens).
int64_t parse_time_ns(const std::string& text, const std::string& where) {
  const auto unit = text.find_first_not_of("0123456789.");
  const std::string num = text.substr(0, unit);
  const std::string suffix = unit == std::string::npos ? "" : text.substr(unit);
  const bool known_unit = suffix == "s" || suffix == "ms" || suffix == "us" || suffix == "ns";
  if (known_unit && !num.empty() && num.find_first_not_of("0.") == std::string::npos &&
      num.find_first_of('0') != std::string::npos)
    return 0;
  try {
    return parse_duration_ns(text);
  } catch (const UsageError& e) {
    // The duration parser's reason, named for this fault rather than for the workload it also reads.
    std::string why = e.what();
    if (const std::string prefix = "sim workload: "; why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
    throw UsageError(where + ": '" + text + "' is not a time (" + why +
                     "): a number >= 0 with a unit (s, ms, us or ns), e.g. 2s");
  }
}

// FROM-TO, both times, TO after FROM.
void parse_range(const std::string& range, const std::string& where, int64_t& from_ns, int64_t& to_ns) {
  const auto dash = range.find('-');
  if (dash == std::string::npos) throw UsageError(where + ": expected FROM-TO, e.g. 2s-2.5s");
  from_ns = parse_time_ns(range.substr(0, dash), where);
  to_ns = parse_time_ns(range.substr(dash + 1), where);
  if (to_ns <= from_ns) throw UsageError(where + ": the range ends before it starts");
}

ReadingKind parse_kind(const std::string& word, const std::string& where) {
  const auto k = reading_kind_from_string(word);
  if (!k) throw UsageError(where + ": unknown reading '" + word + "' (e.g. energy_counter_j)");
  return *k;
}

}  // namespace

Faults Faults::parse(std::string_view script) {
  Faults f;
  std::string s(script);
  for (char& c : s)
    if (c == '\n') c = ';';
  std::istringstream parts(s);
  for (std::string part; std::getline(parts, part, ';');) {
    std::istringstream in(part);
    std::vector<std::string> w;
    for (std::string x; in >> x;) w.push_back(x);
    if (w.empty()) continue;
    const std::string where = "sim faults '" + part + "'";
    // [KIND] FROM-TO, then `range_from_end` more words.
    auto span = [&](std::size_t range_from_end) {
      Span e;
      if (w.size() == 3 + range_from_end) e.kind = parse_kind(w[1], where);
      parse_range(w[w.size() - 1 - range_from_end], where, e.from_ns, e.to_ns);
      return e;
    };
    const bool kind_and_range = w.size() == 2 || w.size() == 3;
    if (w[0] == "read-error" && kind_and_range) {
      f.read_errors.push_back(span(0));
    } else if (w[0] == "stuck" && kind_and_range) {
      f.stuck.push_back(span(0));
    } else if (w[0] == "garbage" && kind_and_range) {
      f.garbage.push_back(span(0));
    } else if (w[0] == "slow-read" && (w.size() == 3 || w.size() == 4)) {
      Span e = span(1);
      e.extra_ns = parse_time_ns(w.back(), where);
      if (e.extra_ns <= 0) throw UsageError(where + ": a slow read needs a positive delay, e.g. 200ms");
      f.slow_reads.push_back(e);
    } else if (w[0] == "unsupported" && w.size() == 3) {
      f.unsupported.push_back(Span{parse_kind(w[1], where), parse_time_ns(w[2], where), INT64_MAX, 0});
    } else if (w[0] == "counter-reset" && w.size() == 2) {
      f.counter_resets_ns.push_back(parse_time_ns(w[1], where));
    } else if (w[0] == "gpu-lost" && w.size() == 2) {
      if (w[1].find('-') != std::string::npos) {
        parse_range(w[1], where, f.gpu_lost_ns, f.gpu_back_ns);
      } else {
        f.gpu_lost_ns = parse_time_ns(w[1], where);
        f.gpu_back_ns = INT64_MAX;
      }
    } else {
      throw UsageError(where +
                       ": use 'read-error [KIND] FROM-TO', 'counter-reset AT', 'gpu-lost AT|FROM-TO', "
                       "'stuck [KIND] FROM-TO', 'garbage [KIND] FROM-TO', 'slow-read [KIND] FROM-TO DUR' or "
                       "'unsupported KIND AT'");
    }
  }
  return f;
}

const Faults::Span* Faults::find(const std::vector<Span>& spans, ReadingKind kind, int64_t t_ns) {
  for (const auto& e : spans)
    if (e.covers(kind, t_ns)) return &e;
  return nullptr;
}

bool Faults::read_fails(ReadingKind kind, int64_t t_ns) const { return find(read_errors, kind, t_ns) != nullptr; }

int64_t Faults::slow_ns(ReadingKind kind, int64_t t_ns) const {
  const Span* e = find(slow_reads, kind, t_ns);
  return e ? e->extra_ns : 0;
}

int64_t Faults::last_reset_before(int64_t t_ns) const {
  int64_t last = -1;
  for (int64_t r : counter_resets_ns)
    if (r <= t_ns && r > last) last = r;
  return last;
}

double garbage_value(ReadingKind kind, uint64_t i) {
  const bool counter = kind == ReadingKind::energy_counter_j;
  switch (i % (counter ? 4 : 3)) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return -1.0;
    case 2: return counter ? 1.8e16 : 65535.0;  // an all-ones register, as a driver returns on error
    default: return 0.0;                         // a counter read as zero
  }
}

}  // namespace wattlab::sim
