#include "export/live.h"

#include <algorithm>

namespace wattlab {

LiveMeter::LiveMeter(const Meter& meter) : meter_(meter), published_(meter.domains().size()) {}

const std::vector<Domain>& LiveMeter::domains() const { return meter_.domains(); }

MeterSnapshot LiveMeter::sample() {
  MeterSnapshot s = meter_.snapshot();
  std::lock_guard lk(mu_);
  for (std::size_t d = 0; d < s.domains.size() && d < published_.size(); ++d) {
    DomainLive& l = s.domains[d];
    if (!l.energy_ok) continue;
    Published& p = published_[d];
    if (l.energy_j >= p.energy_j) {
      p.energy_j = l.energy_j;
      p.t_ns = std::max(p.t_ns, l.energy_t_ns);
    }
    l.energy_j = p.energy_j;
    l.energy_t_ns = p.t_ns;
  }
  return s;
}

const std::optional<Reading>& current_reading(const DomainLive& l, ReadingKind kind) {
  static const std::optional<Reading> none;
  const ReadingHealth& h = l.health(kind);
  if (l.lost || !h.latest || h.last_error_ns > h.last_ok_ns) return none;
  return h.latest;
}

std::string gpu_index_of(std::string_view id) {
  if (id.substr(0, 4) != "gpu:") return "";
  const std::string_view rest = id.substr(4);
  return std::string(rest.substr(0, rest.find('/')));
}

}  // namespace wattlab
