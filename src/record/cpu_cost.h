// What measuring cost, as run tags (docs/json-output.md, "Run tags written by wattlab run"): the
// sampler thread's and the whole process's CPU time over the span the sampler ran.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "wattlab/meter/meter.h"

namespace wattlab::record_detail {

// CPU time of this whole process (every thread; child processes are not counted), ns.
int64_t process_cpu_ns();

// wattlab.sampler_cpu_s, wattlab.sampler_cpu_pct, ..., wattlab.sampler_span_s.
std::map<std::string, std::string> cpu_cost_tags(const SamplerStats& sampler, int64_t process_cpu_ns, int64_t span_ns);

}  // namespace wattlab::record_detail
