// Diagnosis rules: evidence about one configuration (and its neighbours in the population) in,
// findings out. Each rule is data: an id, what it means, and its path through the causal graph
// (graph.h), which the tests check edge by edge.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/graph.h"
#include "diagnose/population.h"

namespace wattlab::diagnose {

struct Evidence {
  std::string what;   // "power per GPU / TDP"
  double value = 0;
  std::string unit;   // "W", "J/token", "%", "" for a plain ratio
  std::string from;   // "gpqa.json row 12", or "derived"
};

struct Finding {
  std::string rule_id;
  std::string title;
  std::vector<Node> path;
  std::string summary;  // one sentence with the numbers
  std::vector<Evidence> evidence;
};

struct RuleContext {
  const ConfigRecord& target;
  const Rows& population;  // every loaded row (all tasks)
  Rows curve;              // the target's (model, task, GPU, count) over batch
};

struct Rule {
  std::string id;
  std::string title;
  std::string meaning;     // what the finding means (docs/diagnose.md repeats it)
  std::vector<Node> path;  // its path through the causal graph
  std::function<std::optional<Finding>(const RuleContext&)> eval;
};

// Thresholds the rules use; named so the findings and the docs can quote them.
struct RuleThresholds {
  double low_power_share = 0.80;       // per-GPU power / limit below this: "far below its limit"
  double still_falling = 0.10;         // a larger batch lowers energy per unit by at least this
  double flat = 0.05;                  // "does not fall": a larger batch lowers it by less than this
  double low_sm_activity = 0.60;       // measured GPM SM activity below this
  double low_gpu_utilization = 0.60;   // measured NVML utilization below this
  double held_batch = 0.85;            // B_eff / B below this: the server never held the batch
  double host_busy = 0.90;             // host CPU busy share at or above this: the host thread is saturated
  double kv_full = 0.90;               // measured KV-cache use at or above this
  double volume_ratio = 1.5;           // compute-volume terms this far from the task's median
  double overhead = 0.05;              // more GPUs raise energy per unit by at least this
};
const RuleThresholds& thresholds();

const std::vector<Rule>& rules();

// Runs every rule on `target`; findings in rule order.
std::vector<Finding> diagnose_record(const ConfigRecord& target, const Rows& population);

}  // namespace wattlab::diagnose
