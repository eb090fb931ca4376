// The planner's view of study_recipes.h: sweeps per engine (A and B may differ in type, as in
// fp8e5m2), and the controls X1-X3 as non-GEMM points.
#include <fmt/format.h>

#include <cmath>

#include "lab/plan.h"
#include "lab/study_recipes.h"

namespace wattlab::lab {

std::vector<std::string> study_experiment_ids() {
  std::vector<std::string> ids;
  for (const auto& s : study_sweeps(DType::bf16)) ids.push_back(s.id);
  return ids;
}

Result<ExperimentSweep> study_sweep(std::string_view experiment, Engine engine, const PlanRequest& req) {
  const EngineSpec& es = spec(engine);
  const auto sa = find_sweep(es.a, experiment);
  if (!sa) {
    std::string ids;
    for (const auto& id : study_experiment_ids()) ids += (ids.empty() ? "" : ", ") + id;
    return Error{ErrorKind::invalid_argument,
                 fmt::format("experiment '{}' is not in the study for engine {}", experiment, es.name),
                 "use one of: " + ids};
  }
  const auto sb = es.b == es.a ? sa : find_sweep(es.b, experiment);
  ExperimentSweep out;
  out.id = sa->id;
  out.param = sa->parameter;
  out.control = sa->kind != SweepKind::gemm;
  for (std::size_t i = 0; i < sa->points.size(); ++i) {
    const StudyPoint& p = sa->points[i];
    SweepValue v;
    v.value = p.value_text;
    switch (sa->kind) {
      case SweepKind::gemm:
        if (!sb || sb->points.size() != sa->points.size())
          return Error{ErrorKind::invalid_argument,
                       fmt::format("experiment {} has no matching sweep for B ({}) of engine {}", out.id,
                                   to_string(es.b), es.name),
                       ""};
        v.recipe_a = p.recipe_a;
        v.recipe_b = sb->points[i].recipe_b;
        break;
      case SweepKind::buffer_at_rest:
        v.control = Control::rest;
        v.fill_byte = static_cast<int>(std::lround(p.value));
        v.rest_bytes = req.control_bytes;
        break;
      case SweepKind::toggle_kernel:
        v.control = Control::toggle;
        v.toggle_bits = static_cast<int>(std::lround(p.value));
        v.rest_bytes = req.control_bytes;
        break;
      case SweepKind::idle:
        v.control = Control::idle;
        v.hold_context = p.value != 0;
        break;
    }
    out.values.push_back(std::move(v));
  }
  return out;
}

Result<SweepValue> reference_value(Engine engine) {
  const EngineSpec& es = spec(engine);
  SweepValue v;
  v.value = "baseline";
  v.recipe_a = baseline_recipe(es.a);
  v.recipe_b = baseline_recipe(es.b);
  return v;
}

}  // namespace wattlab::lab
