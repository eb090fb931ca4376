#include "cpu_cost.h"

#include <fmt/format.h>
#include <sys/resource.h>

namespace wattlab::record_detail {

int64_t process_cpu_ns() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return (static_cast<int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1'000'000'000 +
         (static_cast<int64_t>(ru.ru_utime.tv_usec) + ru.ru_stime.tv_usec) * 1'000;
}

std::map<std::string, std::string> cpu_cost_tags(const SamplerStats& sampler, int64_t process_cpu_ns, int64_t span_ns) {
  const double span_s = static_cast<double>(span_ns) * 1e-9;
  auto pct = [&](int64_t cpu_ns) {
    return span_ns > 0 ? 100.0 * static_cast<double>(cpu_ns) / static_cast<double>(span_ns) : 0.0;
  };
  return {{"wattlab.sampler_cpu_s", fmt::format("{:.6f}", static_cast<double>(sampler.cpu_ns) * 1e-9)},
          {"wattlab.sampler_cpu_pct", fmt::format("{:.4f}", pct(sampler.cpu_ns))},
          {"wattlab.sampler_read_pct", fmt::format("{:.4f}", pct(sampler.read_ns))},
          {"wattlab.sampler_rest_pct", fmt::format("{:.4f}", 100.0 * sampler.rest_cpu_share)},
          {"wattlab.sampler_read_budget_pct", fmt::format("{:.4f}", 100.0 * sampler.read_cpu_share)},
          {"wattlab.process_cpu_s", fmt::format("{:.6f}", static_cast<double>(process_cpu_ns) * 1e-9)},
          {"wattlab.process_cpu_pct", fmt::format("{:.4f}", pct(process_cpu_ns))},
          {"wattlab.sampler_span_s", fmt::format("{:.6f}", span_s)}};
}

}  // namespace wattlab::record_detail
