#include "row_parser.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <set>

#include "wattlab/core/error.h"

namespace wattlab::diagnose::detail {
namespace {

using nlohmann::json;

std::string type_of(const json& v) {
  std::string s = v.type_name();
  if (v.is_string()) s += " \"" + v.get<std::string>() + "\"";
  return s;
}

class Row {
 public:
  Row(const json& row, const std::string& where) : row_(row), where_(where) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw UsageError(fmt::format("{}, field '{}': {}", where_, field, what));
  }
  bool has(const char* f) const { return row_.contains(f) && !row_.at(f).is_null(); }
  const json& get(const char* f) const {
    used_.insert(f);
    if (!has(f)) fail(f, "missing (required for this kind of row)");
    return row_.at(f);
  }
  std::string str(const char* f) const {
    const auto& v = get(f);
    if (!v.is_string()) fail(f, "expected a string, got " + type_of(v));
    return v.get<std::string>();
  }
  std::string opt_str(const char* f) const { return has(f) ? str(f) : (used_.insert(f), std::string{}); }
  // A finite number; `positive` also rejects <= 0, `nonneg` rejects < 0.
  double num(const char* f, bool positive = true) const {
    const auto& v = get(f);
    if (!v.is_number()) fail(f, "expected a number, got " + type_of(v));
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail(f, fmt::format("not a finite number ({})", x));
    if (positive && !(x > 0)) fail(f, fmt::format("must be > 0, got {}", x));
    if (!positive && x < 0) fail(f, fmt::format("must be >= 0, got {}", x));
    return x;
  }
  std::optional<double> opt_num(const char* f, bool positive = false) const {
    used_.insert(f);
    if (!has(f)) return std::nullopt;
    return num(f, positive);
  }
  std::optional<double> opt_fraction(const char* f) const {
    auto x = opt_num(f);
    if (x && *x > 1.0 + 1e-9) fail(f, fmt::format("is a share and must lie in [0, 1], got {}", *x));
    return x;
  }
  int integer(const char* f) const {
    const auto& v = get(f);
    if (!v.is_number()) fail(f, "expected an integer, got " + type_of(v));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x != std::floor(x) || x < 1 || x > std::numeric_limits<int>::max())
      fail(f, fmt::format("expected a positive integer, got {}", v.dump()));
    return static_cast<int>(x);
  }
  int opt_int(const char* f, int dflt) const {
    used_.insert(f);
    return has(f) ? integer(f) : dflt;
  }
  void keep_unused(ConfigRecord& r) const {
    for (const auto& [k, v] : row_.items()) {
      if (!used_.count(k)) r.extra_json[k] = v.dump();
    }
  }

 private:
  const json& row_;
  const std::string& where_;
  mutable std::set<std::string> used_;
};

}  // namespace

ConfigRecord parse_row(const json& row, const std::string& where, const std::string& file_architecture) {
  if (!row.is_object()) throw UsageError(fmt::format("{}: expected an object, got {}", where, type_of(row)));
  Row f(row, where);
  ConfigRecord r;
  r.model_id = f.str("model_id");
  r.nickname = f.opt_str("nickname");
  if (r.nickname.empty()) r.nickname = r.model_id;
  r.gpu_model = f.str("gpu_model");
  r.num_gpus = f.integer("num_gpus");
  r.weight_precision = f.opt_str("weight_precision");
  r.total_params_billions = f.opt_num("total_params_billions").value_or(0);
  r.activated_params_billions = f.opt_num("activated_params_billions").value_or(r.total_params_billions);
  r.avg_power_watts = f.num("avg_power_watts");

  const bool diffusion = file_architecture == "diffusion" || f.has("batch_latency_s");
  if (!diffusion) {
    r.workload = Workload::llm;
    r.architecture = f.opt_str("architecture");
    LlmMetrics m;
    m.tensor_parallel = f.opt_int("tensor_parallel", 1);
    m.expert_parallel = f.opt_int("expert_parallel", 1);
    m.data_parallel = f.opt_int("data_parallel", 1);
    m.max_num_seqs = f.integer("max_num_seqs");
    m.avg_batch_size = f.num("avg_batch_size");
    m.avg_output_len = f.num("avg_output_len");
    m.energy_per_token_joules = f.num("energy_per_token_joules");
    m.energy_per_request_joules = f.num("energy_per_request_joules");
    m.output_throughput_tokens_per_sec = f.num("output_throughput_tokens_per_sec");
    m.median_itl_ms = f.num("median_itl_ms");
    m.p90_itl_ms = f.opt_num("p90_itl_ms", true);
    m.p95_itl_ms = f.opt_num("p95_itl_ms", true);
    m.p99_itl_ms = f.opt_num("p99_itl_ms", true);
    r.llm = m;
  } else {
    r.workload = Workload::diffusion;
    r.architecture = f.opt_str("architecture");
    DiffusionMetrics d;
    d.video = f.has("energy_per_video_joules") || f.has("num_frames");
    d.ulysses_degree = f.opt_int("ulysses_degree", 1);
    d.ring_degree = f.opt_int("ring_degree", 1);
    d.batch_size = f.integer("batch_size");
    d.inference_steps = f.integer("inference_steps");
    if (d.video) {
      d.height = f.integer("video_height");
      d.width = f.integer("video_width");
      d.num_frames = f.integer("num_frames");
      d.fps = f.opt_num("fps", true);
      d.throughput_per_sec = f.num("throughput_videos_per_sec");
      d.energy_per_generation_joules = f.num("energy_per_video_joules");
    } else {
      d.height = f.integer("image_height");
      d.width = f.integer("image_width");
      d.throughput_per_sec = f.num("throughput_images_per_sec");
      d.energy_per_generation_joules = f.num("energy_per_image_joules");
    }
    d.batch_latency_s = f.num("batch_latency_s");
    r.diffusion = d;
  }

  auto& x = r.measured;
  x.cpu_energy_per_unit_joules = f.opt_num("cpu_energy_per_unit_joules");
  x.sm_clock_mhz = f.opt_num("sm_clock_mhz", true);
  x.sm_activity = f.opt_fraction("sm_activity");
  x.tensor_activity = f.opt_fraction("tensor_activity");
  x.dram_activity = f.opt_fraction("dram_activity");
  x.gpu_utilization = f.opt_fraction("gpu_utilization");
  x.power_limit_watts = f.opt_num("power_limit_watts", true);
  x.kv_cache_usage = f.opt_fraction("kv_cache_usage");
  x.cpu_utilization = f.opt_fraction("cpu_utilization");
  f.opt_str("task");  // a CSV column; the reader sets r.task
  f.keep_unused(r);
  return r;
}

}  // namespace wattlab::diagnose::detail
