// One serve-bench run as JSON (the objects of "runs" in series_json.cpp; docs/serve-bench.md "JSON").
#pragma once
#include <nlohmann/json.hpp>

#include "infer/bench_result.h"

namespace wattlab::infer {

nlohmann::json run_json(const BenchResult& r);

}  // namespace wattlab::infer
