#include "store/run_readings.h"

#include <cstdint>
#include <limits>

namespace wattlab {

Result<std::vector<TimedReading>> load_run_readings(const Store& store, const RunRecord& record) {
  std::vector<TimedReading> out;
  for (uint32_t d = 0; d < record.domains.size(); ++d)
    for (const ReadingModel& m : record.domains[d].model.readings) {
      if (!is_power_or_energy(m.kind)) continue;
      auto rs = store.load_readings(record.run_id, d, m.kind, std::numeric_limits<int64_t>::min(),
                                    std::numeric_limits<int64_t>::max());
      if (!rs) return rs.error();
      for (const Reading& r : *rs) out.push_back({d, r});
    }
  return out;
}

}  // namespace wattlab
