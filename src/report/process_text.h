// The per-process split of GPUs' energy (src/meter/process_split.h) as text and as JSON: the
// total, the idle share and where its power came from, the measured command's process tree and the
// other tenants, each process with its labels, the unattributed part and the model's notes.
#pragma once
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "meter/process_split.h"

namespace wattlab::report {

void print_process_split(std::ostream& out, const std::vector<GpuAttribution>& gpus);
// An array, one object per GPU (docs/per-process.md lists the fields).
nlohmann::ordered_json process_split_to_json(const std::vector<GpuAttribution>& gpus);

}  // namespace wattlab::report
