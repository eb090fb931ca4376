// Sweeps as plain data: which points run, in which order, and how long that takes. The order is
// randomized within each seed (a seeded shuffle per engine and shape) with the reference point
// interleaved, so drift in temperature or clock cannot masquerade as an input effect.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/core/error.h"
#include "lab/engine.h"
#include "lab/executor.h"

namespace wattlab::lab {

struct Shape {
  int64_t m = 0, n = 0, k = 0;
};
// "8192" -> 8192^3; "8192x8192x28672" -> that; a list is comma-separated.
Result<Shape> parse_shape(std::string_view text);
Result<std::vector<Shape>> parse_shape_list(std::string_view list);
std::string to_string(const Shape& s);

// One value of a swept parameter and the recipes of A and B that realize it.
struct SweepValue {
  std::string value;
  std::string recipe_a, recipe_b;
  Control control = Control::none;  // controls: what runs instead of a GEMM
  uint64_t rest_bytes = 0;
  int fill_byte = 0;
  int toggle_bits = 0;
  bool hold_context = true;  // X3 "without": the process holds no CUDA context
};
struct ExperimentSweep {
  std::string id;     // "E3", "X1"
  std::string param;  // "distinct_values"
  std::vector<SweepValue> values;
  bool control = false;  // X1-X3: engine-independent
};

struct PlanRequest {
  std::vector<std::string> experiments;  // "E1".."E15", "X1".."X3"
  std::vector<Engine> engines;
  std::vector<Shape> shapes;
  std::vector<uint64_t> seeds{1};
  int max_values = 0;        // > 0: keep at most this many values per sweep (ends kept, spread evenly)
  int reference_every = 6;   // a reference point before the first, after every this many, and at the end
  uint64_t order_seed = 1;   // the shuffle's seed (with each point seed)
  uint64_t control_bytes = 1ull << 30;  // X1/X2 buffer size
  std::string id_salt;       // what else defines the sweep (window length...): part of sweep_id
};

struct PlannedPoint {
  int index = 0;  // position in the whole plan: the resume key
  GemmSpec spec;
  std::string experiment;   // "E3"; the reference point: "ref"
  std::string param, param_value;
  bool reference = false;
  std::string engine_label;  // the engine name, or "control"
};

struct SweepPlan {
  std::string sweep_id;  // a hash of everything that defines the points: resume finds them by it
  std::vector<PlannedPoint> points;
};

// The sweeps the study defines for an engine (from study_recipes.h). X1-X3 ignore the engine.
Result<ExperimentSweep> study_sweep(std::string_view experiment, Engine engine, const PlanRequest& req);
// The reference point's recipes for an engine (the study's baseline).
Result<SweepValue> reference_value(Engine engine);
std::vector<std::string> study_experiment_ids();

// Validates (unknown experiment, shape an engine cannot run: invalid_argument) and orders.
Result<SweepPlan> make_plan(const PlanRequest& req);

// `wattlab gemm run`'s plan: the one point `spec`, experiment "run", param "recipe" = "baseline"
// when both recipes are the engine's reference, else "custom". The caller sets the sweep id (the
// run's). Errors: the engine has no reference (invalid_argument).
Result<SweepPlan> single_point_plan(const GemmSpec& spec);

// Keeps at most `n` of `values`: the first, the last, and evenly spread ones between.
std::vector<SweepValue> thin_values(const std::vector<SweepValue>& values, int n);

// Estimated wall time of one point and of a plan (warm-up, window, preparation).
struct TimeModel {
  double window_s = 10;
  double warmup_s = 2;
  double first_warmup_s = 10;
  double prepare_s = 0.5;  // generation, graph capture, calibration, spot check
};
double estimate_plan_s(const SweepPlan& plan, const TimeModel& model, std::size_t skip = 0);

}  // namespace wattlab::lab
