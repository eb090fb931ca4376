#include "wattlab/store/run_record.h"

#include <ctime>
#include <string>

#include <fmt/format.h>

namespace wattlab {

std::optional<double> RunSummary::dur_s() const {
  if (!end_t_ns) return std::nullopt;
  return static_cast<double>(*end_t_ns - info.start_t_ns) * 1e-9;
}

std::string utc_iso8601(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto ms = floor<milliseconds>(t.time_since_epoch());
  const std::time_t secs = static_cast<std::time_t>(floor<seconds>(ms).count());
  const auto millis = static_cast<int>((ms - floor<seconds>(ms)).count());
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
}

}  // namespace wattlab
