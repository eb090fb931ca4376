// The diagnosis rules of docs/joules-framework.md §8 ("rules as data, over the graph").
#include "diagnose/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "diagnose/frontier.h"
#include "diagnose/min_energy.h"
#include "diagnose/pairs.h"

namespace wattlab::diagnose {
namespace {

using N = Node;

std::string unit_of(const ConfigRecord& r) { return fmt::format("J/{}", r.unit()); }

Evidence ev_energy(const ConfigRecord& r, const std::string& what) {
  return {what, r.energy_per_unit_j(), unit_of(r), r.where()};
}

// The lowest-energy point of the curve at a batch larger than the target's.
const ConfigRecord* best_larger_batch(const RuleContext& c) {
  Rows larger;
  for (const auto* x : c.curve)
    if (x->batch() > c.target.batch()) larger.push_back(x);
  return min_energy(larger);
}
const ConfigRecord* next_larger_batch(const RuleContext& c) {
  for (const auto* x : c.curve)
    if (x->batch() > c.target.batch()) return x;
  return nullptr;
}

std::optional<double> power_share(const ConfigRecord& r) {
  auto lim = power_limit_per_gpu_w(r);
  if (!lim) return std::nullopt;
  return r.avg_power_watts / r.num_gpus / *lim;
}

Finding start(const Rule& rule, std::string summary) { return {rule.id, rule.title, rule.path, std::move(summary), {}}; }


const Rule& rule_named(const std::string& id) {
  for (const auto& r : rules())
    if (r.id == id) return r;
  throw std::logic_error("unknown rule " + id);
}

std::optional<Finding> memory_limited_batch(const RuleContext& c) {
  const auto& t = c.target;
  const auto& T = thresholds();
  if (!t.llm || c.curve.empty()) return std::nullopt;
  const ConfigRecord* top = c.curve.back();
  const bool kv_full = t.measured.kv_cache_usage && *t.measured.kv_cache_usage >= T.kv_full;
  // The largest stable batch on this (GPU, count), and energy still falling into it.
  bool falling = false;
  const ConfigRecord* prev = nullptr;
  if (c.curve.size() >= 2) {
    prev = c.curve[c.curve.size() - 2];
    falling = top->energy_per_unit_j() <= prev->energy_per_unit_j() * (1 - T.flat);
  }
  // Other GPU counts or generations of the same model and task that reach a larger batch.
  // Prefer more GPUs of the same generation (memory availability through the count), else any.
  const ConfigRecord* bigger = nullptr;
  for (int pass = 0; pass < 2 && !bigger; ++pass)
    for (const auto* x : c.population)
      if (x->model_id == t.model_id && x->task == t.task && x->batch() > top->batch() &&
          (pass == 1 || x->gpu_model == t.gpu_model) &&
          (!bigger || x->energy_per_unit_j() < bigger->energy_per_unit_j()))
        bigger = x;
  if (!kv_full && !(t.batch() == top->batch() && falling && bigger)) return std::nullopt;
  const auto& rule = rule_named("memory_limited_batch");
  Finding f = start(rule, "");
  if (kv_full) {
    f.summary = fmt::format("KV-cache use was {:.0f}% (measured): memory caps the batch at {}.",
                            *t.measured.kv_cache_usage * 100, t.batch());
    f.evidence.push_back({"measured KV-cache use", *t.measured.kv_cache_usage * 100, "%", t.where()});
  }
  if (falling && bigger && t.batch() == top->batch()) {
    f.summary += fmt::format(
        "{}{} stops at batch {} on {}x{} while energy per {} is still falling ({:.4g} -> {:.4g} J from batch {} to {}); "
        "{}x{} reaches batch {} at {:.4g} J/{} ({:+.0f}%).",
        f.summary.empty() ? "" : " ", t.nickname, top->batch(), t.gpu_model, t.num_gpus, t.unit(),
        prev->energy_per_unit_j(), top->energy_per_unit_j(), prev->batch(), top->batch(), bigger->gpu_model,
        bigger->num_gpus, bigger->batch(), bigger->energy_per_unit_j(), t.unit(),
        (bigger->energy_per_unit_j() / t.energy_per_unit_j() - 1) * 100);
    f.evidence.push_back({"largest stable batch on this GPU count", static_cast<double>(top->batch()), "requests", top->where()});
    f.evidence.push_back(ev_energy(*prev, fmt::format("energy per {} at batch {}", t.unit(), prev->batch())));
    f.evidence.push_back(ev_energy(*top, fmt::format("energy per {} at batch {}", t.unit(), top->batch())));
    f.evidence.push_back(ev_energy(*bigger, fmt::format("energy per {} at batch {} on {}x{}", t.unit(), bigger->batch(),
                                                        bigger->gpu_model, bigger->num_gpus)));
  }
  return f;
}

std::optional<Finding> gpu_underutilized(const RuleContext& c) {
  const auto& t = c.target;
  const auto& T = thresholds();
  const ConfigRecord* better = best_larger_batch(c);
  if (!better || better->energy_per_unit_j() > t.energy_per_unit_j() * (1 - T.still_falling)) return std::nullopt;
  const auto share = power_share(t);
  const auto sm = t.measured.sm_activity;
  const bool low_power = share && *share < T.low_power_share;
  const bool low_sm = sm && *sm < T.low_sm_activity;
  if (!low_power && !low_sm) return std::nullopt;
  Finding f = start(rule_named("gpu_underutilized"), "");
  std::string why;
  if (low_power) why = fmt::format("power is {:.0f}% of the per-GPU limit ({:.0f} W of {:.0f} W per GPU)", *share * 100,
                                   t.avg_power_watts / t.num_gpus, *power_limit_per_gpu_w(t));
  if (low_sm) why += fmt::format("{}measured SM activity is {:.0f}%", why.empty() ? "" : " and ", *sm * 100);
  f.summary = fmt::format("At batch {} {}, and energy per {} still falls with batch: {:.4g} J at batch {} -> {:.4g} J at "
                          "batch {} ({:.2f}x lower).",
                          t.batch(), why, t.unit(), t.energy_per_unit_j(), t.batch(), better->energy_per_unit_j(),
                          better->batch(), t.energy_per_unit_j() / better->energy_per_unit_j());
  if (share) f.evidence.push_back({"power per GPU / limit", *share * 100, "%", t.where()});
  if (sm) f.evidence.push_back({"measured SM activity", *sm * 100, "%", t.where()});
  f.evidence.push_back(ev_energy(t, "energy per unit at this batch"));
  f.evidence.push_back(ev_energy(*better, fmt::format("lowest energy per unit at a larger batch ({})", better->batch())));
  if (better->avg_power_watts > 0 && share)
    f.evidence.push_back({fmt::format("power per GPU / limit at batch {}", better->batch()), *power_share(*better) * 100, "%",
                          better->where()});
  return f;
}

std::optional<Finding> non_gpu_bottleneck(const RuleContext& c) {
  const auto& t = c.target;
  const auto& T = thresholds();
  const auto& m = t.measured;
  const bool low_util = (m.gpu_utilization && *m.gpu_utilization < T.low_gpu_utilization) ||
                        (m.sm_activity && *m.sm_activity < T.low_sm_activity);
  const bool not_held = t.llm && t.llm->avg_batch_size / t.llm->max_num_seqs < T.held_batch;
  const auto share = power_share(t);
  const bool low_power = share && *share < T.low_power_share;
  const ConfigRecord* next = next_larger_batch(c);
  const bool flat = next && next->energy_per_unit_j() > t.energy_per_unit_j() * (1 - T.flat);
  // Host-bound: the driving CPU thread is saturated while kernels run less than most of the time
  // (NVML utilization counts time with any kernel running, so launch gaps show up there even when
  // a larger batch still helps).
  const bool host_bound = m.cpu_utilization && *m.cpu_utilization >= T.host_busy && m.gpu_utilization &&
                          *m.gpu_utilization < T.low_gpu_utilization && low_power;
  if (!((low_util && low_power && flat) || (not_held && low_power) || host_bound)) return std::nullopt;
  Finding f = start(rule_named("non_gpu_bottleneck"), "");
  std::vector<std::string> parts;
  if (m.gpu_utilization) parts.push_back(fmt::format("measured GPU utilization {:.0f}%", *m.gpu_utilization * 100));
  if (m.sm_activity) parts.push_back(fmt::format("measured SM activity {:.0f}%", *m.sm_activity * 100));
  if (share) parts.push_back(fmt::format("power {:.0f}% of the limit", *share * 100));
  if (not_held)
    parts.push_back(fmt::format("the server held {:.1f} of {} requests on average (B_eff/B = {:.2f} < {:.2f})",
                                t.llm->avg_batch_size, t.llm->max_num_seqs, t.llm->avg_batch_size / t.llm->max_num_seqs,
                                T.held_batch));
  if (flat)
    parts.push_back(fmt::format("a larger batch ({}) barely lowers energy per {} ({:.4g} -> {:.4g} J)", next->batch(),
                                t.unit(), t.energy_per_unit_j(), next->energy_per_unit_j()));
  if (m.cpu_utilization) parts.push_back(fmt::format("host CPU busy {:.0f}%", *m.cpu_utilization * 100));
  f.summary = fmt::format("The GPU waits on something else: {}.", fmt::join(parts, "; "));
  if (host_bound)
    f.summary += fmt::format(" Host-bound: the host thread is saturated (>= {:.0f}% busy) while kernels run {:.0f}% of "
                             "the time (< {:.0f}%).",
                             T.host_busy * 100, *m.gpu_utilization * 100, T.low_gpu_utilization * 100);
  if (m.gpu_utilization) f.evidence.push_back({"measured GPU utilization", *m.gpu_utilization * 100, "%", t.where()});
  if (m.sm_activity) f.evidence.push_back({"measured SM activity", *m.sm_activity * 100, "%", t.where()});
  if (share) f.evidence.push_back({"power per GPU / limit", *share * 100, "%", t.where()});
  if (t.llm) f.evidence.push_back({"B_eff / B", t.llm->avg_batch_size / t.llm->max_num_seqs, "", t.where()});
  if (next) f.evidence.push_back(ev_energy(*next, fmt::format("energy per unit at batch {}", next->batch())));
  if (m.cpu_utilization) f.evidence.push_back({"measured host CPU busy", *m.cpu_utilization * 100, "%", t.where()});
  if (m.cpu_energy_per_unit_joules)
    f.evidence.push_back({"measured CPU energy per unit", *m.cpu_energy_per_unit_joules, unit_of(t), t.where()});
  return f;
}

std::optional<Finding> compute_volume(const RuleContext& c) {
  const auto& t = c.target;
  const auto& T = thresholds();
  Filter same_task;
  same_task.task = t.task;
  same_task.gpu_model = t.gpu_model;
  const Rows minima = min_energy_per_model(c.population, same_task);
  if (minima.size() < 2) return std::nullopt;
  Finding f = start(rule_named(t.llm ? "compute_volume" : "compute_volume_diffusion"), "");
  std::vector<std::string> parts;
  if (t.llm) {
    std::vector<double> lens, act;
    for (const auto* r : minima) {
      lens.push_back(r->llm->avg_output_len);
      act.push_back(r->activated_params_billions);
    }
    const double ml = median_of(lens), ma = median_of(act);
    const double rl = t.llm->avg_output_len / ml, ra = t.activated_params_billions / ma;
    if (rl >= T.volume_ratio || rl <= 1 / T.volume_ratio)
      parts.push_back(fmt::format("output length {:.0f} tokens is {:.2f}x the task's median {:.0f} (energy per request "
                                  "= {:.4g} J/token x {:.0f} tokens = {:.4g} J)",
                                  t.llm->avg_output_len, rl, ml, t.energy_per_unit_j(), t.llm->avg_output_len,
                                  t.energy_per_response_j()));
    if (ra >= T.volume_ratio || ra <= 1 / T.volume_ratio)
      parts.push_back(fmt::format("{:.3g}B active parameters{} is {:.2f}x the median {:.3g}B", t.activated_params_billions,
                                  t.activated_params_billions < t.total_params_billions
                                      ? fmt::format(" (of {:.3g}B total, MoE)", t.total_params_billions)
                                      : std::string{},
                                  ra, ma));
    f.evidence.push_back({"avg_output_len", t.llm->avg_output_len, "tokens", t.where()});
    f.evidence.push_back({"median avg_output_len over the task's per-model minima", ml, "tokens", "derived"});
    f.evidence.push_back({"activated_params_billions", t.activated_params_billions, "B params", t.where()});
    f.evidence.push_back({"median activated params over those minima", ma, "B params", "derived"});
  } else {
    auto volume = [](const ConfigRecord& r) {
      const auto& d = *r.diffusion;
      return static_cast<double>(d.inference_steps) * d.height * d.width * d.num_frames.value_or(1);
    };
    std::vector<double> vols, steps;
    for (const auto* r : minima) {
      vols.push_back(volume(*r));
      steps.push_back(r->diffusion->inference_steps);
    }
    const double mv = median_of(vols), ms = median_of(steps);
    const double rv = volume(t) / mv;
    const auto& d = *t.diffusion;
    if (rv >= T.volume_ratio || rv <= 1 / T.volume_ratio)
      parts.push_back(fmt::format("{} steps x {}x{} px{} is {:.2f}x the task's median (median steps {:.0f})",
                                  d.inference_steps, d.width, d.height,
                                  d.num_frames ? fmt::format(" x {} frames", *d.num_frames) : std::string{}, rv, ms));
    f.evidence.push_back({"inference_steps", static_cast<double>(d.inference_steps), "steps", t.where()});
    f.evidence.push_back({"pixels per image", static_cast<double>(d.height) * d.width, "px", t.where()});
    f.evidence.push_back({"steps x pixels x frames / task median", rv, "", "derived"});
    f.evidence.push_back({"activated_params_billions", t.activated_params_billions, "B params", t.where()});
  }
  if (parts.empty()) return std::nullopt;
  f.summary = fmt::format("Compute volume relative to the task: {} (medians over the per-model minimum-energy rows of {} on {}).",
                          fmt::join(parts, "; "), t.task, t.gpu_model);
  return f;
}

std::optional<Finding> parallelism_overhead(const RuleContext& c) {
  const auto& t = c.target;
  const ConfigRecord* fewer = nullptr;
  for (const auto* x : c.population)
    if (x->model_id == t.model_id && x->task == t.task && x->gpu_model == t.gpu_model && x->batch() == t.batch() &&
        x->num_gpus < t.num_gpus && (!fewer || x->energy_per_unit_j() < fewer->energy_per_unit_j()))
      fewer = x;
  if (!fewer || t.energy_per_unit_j() < fewer->energy_per_unit_j() * (1 + thresholds().overhead)) return std::nullopt;
  Finding f = start(rule_named("parallelism_overhead"), "");
  f.summary = fmt::format(
      "At equal batch {}, {}x{} uses {:.4g} J/{} against {:.4g} J on {}x{} ({:+.0f}%); latency {:.4g} -> {:.4g} ms. Each GPU "
      "holds {:.1f} instead of {:.1f} sequences and pays for communication.",
      t.batch(), t.gpu_model, t.num_gpus, t.energy_per_unit_j(), t.unit(), fewer->energy_per_unit_j(), fewer->gpu_model,
      fewer->num_gpus, (t.energy_per_unit_j() / fewer->energy_per_unit_j() - 1) * 100, fewer->latency_ms(), t.latency_ms(),
      static_cast<double>(t.batch()) / t.num_gpus, static_cast<double>(t.batch()) / fewer->num_gpus);
  f.evidence.push_back(ev_energy(t, "energy per unit, this configuration"));
  f.evidence.push_back(ev_energy(*fewer, fmt::format("energy per unit on {} GPU(s), same batch", fewer->num_gpus)));
  f.evidence.push_back({fmt::format("{}, this configuration", t.latency_name()), t.latency_ms(), "ms", t.where()});
  f.evidence.push_back({fmt::format("{} on fewer GPUs", t.latency_name()), fewer->latency_ms(), "ms", fewer->where()});
  return f;
}

std::optional<Finding> low_arithmetic_intensity(const RuleContext& c) {
  const auto& t = c.target;
  const std::string sib = bf16_sibling_id(t.model_id);
  if (sib.empty()) return std::nullopt;
  const ConfigRecord* bf = nullptr;
  for (const auto* x : c.population)
    if (x->model_id == sib && x->task == t.task && x->gpu_model == t.gpu_model && x->num_gpus == t.num_gpus &&
        x->batch() == t.batch())
      bf = x;
  if (!bf || t.energy_per_unit_j() <= bf->energy_per_unit_j()) return std::nullopt;
  Finding f = start(rule_named("low_arithmetic_intensity"), "");
  f.summary = fmt::format(
      "FP8 costs more than its BF16 sibling at batch {}: {:.4g} vs {:.4g} J/{} ({:+.0f}%). Small GEMMs and unfused "
      "quantize/scale operations keep arithmetic intensity low; FP8's higher peak leaves the GPU more underutilized.",
      t.batch(), t.energy_per_unit_j(), bf->energy_per_unit_j(), t.unit(),
      (t.energy_per_unit_j() / bf->energy_per_unit_j() - 1) * 100);
  f.evidence.push_back(ev_energy(t, "energy per unit, FP8"));
  f.evidence.push_back(ev_energy(*bf, "energy per unit, BF16 sibling at the same batch"));
  return f;
}

std::optional<Finding> off_frontier(const RuleContext& c) {
  const auto& t = c.target;
  Rows same;
  for (const auto* x : c.population)
    if (x->model_id == t.model_id && x->task == t.task && x->gpu_model == t.gpu_model) same.push_back(x);
  const ConfigRecord* by = nullptr;
  if (!is_dominated(t, same, &by)) return std::nullopt;
  Finding f = start(rule_named("off_frontier"), "");
  f.summary = fmt::format(
      "Not on the time-energy frontier of {} on {}: {}x{} at batch {} is both faster ({:.4g} vs {:.4g} ms {}) and cheaper "
      "({:.4g} vs {:.4g} J/{}).",
      t.nickname, t.gpu_model, by->gpu_model, by->num_gpus, by->batch(), by->latency_ms(), t.latency_ms(),
      t.latency_name(), by->energy_per_unit_j(), t.energy_per_unit_j(), t.unit());
  f.evidence.push_back(ev_energy(*by, "energy per unit of the dominating configuration"));
  f.evidence.push_back({"its latency", by->latency_ms(), "ms", by->where()});
  return f;
}

}  // namespace

const RuleThresholds& thresholds() {
  static const RuleThresholds t;
  return t;
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> r = {
      {"memory_limited_batch", "Batch limited by memory",
       "The largest batch that ran stably on this GPU count is where memory saturates (KV cache), and energy per token "
       "was still falling into it; a configuration with more memory reaches a larger batch.",
       {N::gpu_count_generation, N::memory_availability, N::batch_size, N::gpu_utilization, N::energy},
       memory_limited_batch},
      {"gpu_underutilized", "GPU underutilized",
       "Power is far below the GPU's limit (or measured SM activity is low) while a larger batch still lowers energy per "
       "unit: static power is paid over time that does little work.",
       {N::batch_size, N::gpu_utilization, N::energy},
       gpu_underutilized},
      {"non_gpu_bottleneck", "Non-GPU bottleneck",
       "Measured GPU utilization and power are low and a larger batch does not help, or the server never held its "
       "batch: the CPU, network or I/O starve the GPU.",
       {N::non_gpu_bottlenecks, N::batch_size, N::gpu_utilization, N::energy},
       non_gpu_bottleneck},
      {"compute_volume", "Compute volume",
       "Output length and active parameters far from the task's median explain energy per request: more work, more "
       "joules.",
       {N::model, N::compute_volume, N::energy},
       compute_volume},
      {"compute_volume_diffusion", "Compute volume (diffusion)",
       "Denoising steps, resolution and frames far from the task's median explain energy per image or video.",
       {N::runtime_parameters, N::compute_volume, N::energy},
       nullptr},
      {"parallelism_overhead", "Parallelism overhead",
       "At the same batch a configuration with fewer GPUs uses less energy per unit: each GPU holds fewer sequences "
       "and communication adds time.",
       {N::gpu_count_generation, N::memory_availability, N::batch_size, N::gpu_utilization, N::energy},
       parallelism_overhead},
      {"low_arithmetic_intensity", "Low arithmetic intensity",
       "FP8 uses more energy than its BF16 sibling at the same batch: the lower compute volume is outweighed by "
       "low-intensity quantize/scale work and a less utilized GPU.",
       {N::quantization, N::compute_volume, N::gpu_utilization, N::energy},
       low_arithmetic_intensity},
      {"off_frontier", "Off the time-energy frontier",
       "Another configuration of the same model on the same GPU type is both faster and cheaper: the choice of batch "
       "and GPU count is not a trade-off here.",
       {N::app_constraints, N::batch_size, N::gpu_utilization, N::energy},
       off_frontier},
  };
  return r;
}

std::vector<Finding> diagnose_record(const ConfigRecord& target, const Rows& population) {
  RuleContext ctx{target, population, curve_of(target, population)};
  std::vector<Finding> out;
  for (const auto& rule : rules()) {
    if (!rule.eval) continue;  // evaluated by a sibling rule (compute_volume covers diffusion)
    if (auto f = rule.eval(ctx)) out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace wattlab::diagnose
