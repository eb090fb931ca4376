#include "sim_faults.h"

#include <sstream>
#include <string>
#include <string_view>

#include "sim_workload.h"
#include "wattlab/core/error.h"

namespace wattlab::sim {

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
    // A time of the script; its error names this fault, not the workload parser that reads it.
    auto time_ns = [&](std::string_view text) {
      try {
        return parse_duration_ns(text);
      } catch (const UsageError& e) {
        std::string why = e.what();
        if (const std::string prefix = "sim workload: "; why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
        throw UsageError(where + ": " + why);
      }
    };
    if (w[0] == "read-error" && (w.size() == 2 || w.size() == 3)) {
      ReadError e;
      const std::string& range = w.back();
      if (w.size() == 3) {
        e.kind = reading_kind_from_string(w[1]);
        if (!e.kind) throw UsageError(where + ": unknown reading '" + w[1] + "' (e.g. energy_counter_j)");
      }
      const auto dash = range.find('-');
      if (dash == std::string::npos) throw UsageError(where + ": expected FROM-TO, e.g. 2s-2.5s");
      e.from_ns = time_ns(std::string_view(range).substr(0, dash));
      e.to_ns = time_ns(std::string_view(range).substr(dash + 1));
      if (e.to_ns <= e.from_ns) throw UsageError(where + ": the range ends before it starts");
      f.read_errors.push_back(e);
    } else if (w[0] == "counter-reset" && w.size() == 2) {
      f.counter_resets_ns.push_back(time_ns(w[1]));
    } else if (w[0] == "gpu-lost" && w.size() == 2) {
      f.gpu_lost_ns = time_ns(w[1]);
    } else {
      throw UsageError(where + ": use 'read-error [KIND] FROM-TO', 'counter-reset AT' or 'gpu-lost AT'");
    }
  }
  return f;
}

bool Faults::read_fails(ReadingKind kind, int64_t t_ns) const {
  for (const auto& e : read_errors)
    if ((!e.kind || *e.kind == kind) && t_ns >= e.from_ns && t_ns < e.to_ns) return true;
  return false;
}

int64_t Faults::last_reset_before(int64_t t_ns) const {
  int64_t last = -1;
  for (int64_t r : counter_resets_ns)
    if (r <= t_ns && r > last) last = r;
  return last;
}

}  // namespace wattlab::sim
