#include "store/gemm_point_record.h"

#include <array>
#include <utility>

#include "record_fields.h"

namespace wattlab {
namespace {

constexpr const char* kKind = "kind";
constexpr const char* kGemmPoint = "gemm_point";
// Counts that are one number each, with their names.
using Number = std::optional<double> GemmPointCounts::*;
constexpr std::array<std::pair<const char*, Number>, 23> kNumbers{{
    {"gemms", &GemmPointCounts::gemms},
    {"replays", &GemmPointCounts::replays},
    {"gemms_per_replay", &GemmPointCounts::gemms_per_replay},
    {"replay_s", &GemmPointCounts::replay_s},
    {"window_s", &GemmPointCounts::window_s},
    {"prepare_s", &GemmPointCounts::prepare_s},
    {"warmup_s", &GemmPointCounts::warmup_s},
    {"warmup_drift_c", &GemmPointCounts::warmup_drift_c},
    {"tflops", &GemmPointCounts::tflops},
    {"rel_error", &GemmPointCounts::rel_error},
    {"nonfinite_fraction", &GemmPointCounts::nonfinite_fraction},
    {"energy_j", &GemmPointCounts::energy_j},
    {"energy_u_j", &GemmPointCounts::energy_u_j},
    {"energy_sys_j", &GemmPointCounts::energy_sys_j},
    {"mean_power_w", &GemmPointCounts::mean_power_w},
    {"mean_power_u_w", &GemmPointCounts::mean_power_u_w},
    {"energy_per_gemm_j", &GemmPointCounts::energy_per_gemm_j},
    {"energy_per_gemm_u_j", &GemmPointCounts::energy_per_gemm_u_j},
    {"mean_sm_clock_mhz", &GemmPointCounts::mean_sm_clock_mhz},
    {"temperature_c", &GemmPointCounts::temperature_c},
    {"power_capped_fraction", &GemmPointCounts::power_capped_fraction},
    {"tensor_activity_pct", &GemmPointCounts::tensor_activity_pct},
    {"power_limit_w", &GemmPointCounts::power_limit_w},
}};
constexpr const char* kWarmupSteady = "warmup_steady";
constexpr const char* kRelErrorNonfinite = "rel_error_nonfinite";
// input_<stat> and prepare_<step>_s.
constexpr std::string_view kInputPrefix = "input_", kPreparePrefix = "prepare_", kPrepareSuffix = "_s";

void encode_counts(const GemmPointCounts& c, std::map<std::string, double>& out) {
  for (const auto& [name, field] : kNumbers)
    if (const auto& v = c.*field) out[name] = *v;
  if (c.warmup_steady) out[kWarmupSteady] = *c.warmup_steady ? 1 : 0;
  if (c.rel_error_nonfinite) out[kRelErrorNonfinite] = 1;
  for (const auto& [k, v] : c.input_stats) out[std::string(kInputPrefix) + k] = v;
  for (const auto& [k, v] : c.prepare_steps_s) out[std::string(kPreparePrefix) + k + std::string(kPrepareSuffix)] = v;
}

GemmPointCounts decode_counts(const std::map<std::string, double>& in) {
  GemmPointCounts c;
  for (const auto& [name, field] : kNumbers)
    if (auto it = in.find(name); it != in.end()) c.*field = it->second;
  if (auto it = in.find(kWarmupSteady); it != in.end()) c.warmup_steady = it->second > 0;
  c.rel_error_nonfinite = in.count(kRelErrorNonfinite) > 0;
  const std::size_t step_min = kPreparePrefix.size() + kPrepareSuffix.size();
  for (const auto& [k, v] : in) {
    if (k.starts_with(kInputPrefix)) c.input_stats[k.substr(kInputPrefix.size())] = v;
    else if (k.size() > step_min && k.starts_with(kPreparePrefix) && k.ends_with(kPrepareSuffix))
      c.prepare_steps_s[k.substr(kPreparePrefix.size(), k.size() - step_min)] = v;
  }
  return c;
}

}  // namespace

bool is_gemm_point(const WindowResult& w) {
  auto it = w.labels.find(kKind);
  return it != w.labels.end() && it->second == kGemmPoint;
}

void GemmPointRecord::encode(WindowResult& w) const {
  auto& l = w.labels;
  l[kKind] = kGemmPoint;
  l["experiment"] = experiment;
  l["engine"] = engine;
  l["M"] = std::to_string(m);
  l["N"] = std::to_string(n);
  l["K"] = std::to_string(k);
  l["recipe_a"] = recipe_a;
  l["recipe_b"] = recipe_b;
  l["seed"] = std::to_string(seed);
  l["param"] = param;
  l["param_value"] = param_value;
  // Flags as std::string: GCC 12 at -O3 warns (-Wrestrict, falsely) on assigning a chosen char*.
  l["reference"] = std::string(reference ? "1" : "0");
  l["sweep"] = sweep;
  l["point"] = std::to_string(point);
  l["simulated"] = std::string(simulated ? "1" : "0");
  encode_counts(counts, w.counts);
}

Result<GemmPointRecord> GemmPointRecord::decode(const WindowResult& w) {
  store_detail::FieldReader f(w.labels, w.counts, "gemm_point window '" + w.name + "'");
  if (!is_gemm_point(w)) {
    const auto kind = f.optional_text(kKind);
    return Error{ErrorKind::parse,
                 "window '" + w.name + "' is not a GEMM point (label kind " +
                     (kind ? "= '" + *kind + "'" : std::string("missing")) + ", expected '" + kGemmPoint + "')",
                 ""};
  }
  GemmPointRecord r;
  r.experiment = f.text("experiment");
  r.engine = f.text("engine");
  r.m = f.integer("M");
  r.n = f.integer("N");
  r.k = f.integer("K");
  r.recipe_a = f.text("recipe_a");
  r.recipe_b = f.text("recipe_b");
  r.seed = f.unsigned_integer("seed");
  r.param = f.text("param");
  r.param_value = f.text("param_value");
  r.reference = f.flag("reference", "1", "0");
  r.sweep = f.text("sweep");
  r.point = static_cast<int>(f.integer("point"));
  r.simulated = f.flag("simulated", "1", "0");
  if (f.failed()) return f.error();
  r.counts = decode_counts(w.counts);
  return r;
}

}  // namespace wattlab
