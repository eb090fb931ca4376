#include "diagnose/records.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <stdexcept>

namespace wattlab::diagnose {

const char* to_string(Workload w) { return w == Workload::llm ? "llm" : "diffusion"; }

bool MeasuredExtras::any() const {
  return cpu_energy_per_unit_joules || sm_clock_mhz || sm_activity || tensor_activity ||
         dram_activity || gpu_utilization || power_limit_watts || kv_cache_usage || cpu_utilization;
}

int ConfigRecord::batch() const { return llm ? llm->max_num_seqs : diffusion->batch_size; }

double ConfigRecord::energy_per_unit_j() const {
  return llm ? llm->energy_per_token_joules : diffusion->energy_per_generation_joules;
}

double ConfigRecord::energy_per_response_j() const {
  return llm ? llm->energy_per_request_joules : diffusion->energy_per_generation_joules;
}

double ConfigRecord::latency_ms() const {
  return llm ? llm->median_itl_ms : diffusion->batch_latency_s * 1e3;
}

double ConfigRecord::throughput_per_sec() const {
  return llm ? llm->output_throughput_tokens_per_sec : diffusion->throughput_per_sec;
}

double ConfigRecord::throughput_per_watt() const {
  const double e = energy_per_unit_j();
  return e > 0 ? 1.0 / e : 0.0;
}

const char* ConfigRecord::unit() const {
  if (llm) return "token";
  return diffusion->video ? "video" : "image";
}

const char* ConfigRecord::latency_name() const { return llm ? "median ITL" : "batch latency"; }

std::string ConfigRecord::label() const {
  return fmt::format("{} {}x{} batch {} {}", model_id, gpu_model, num_gpus, batch(), weight_precision);
}

std::string ConfigRecord::where() const {
  return fmt::format("{} row {}", std::filesystem::path(source).filename().string(), row_index);
}

std::string InvariantViolation::message() const {
  return fmt::format("{} row {}: {} does not hold: stored {:.9g}, computed {:.9g} (relative error {:.2e})",
                     std::filesystem::path(source).filename().string(), row_index, invariant, actual,
                     expected, rel_error);
}

Dataset make_dataset(std::string source, std::string source_label, std::string task,
                     std::vector<ConfigRecord> rows) {
  Dataset d;
  d.source = std::move(source);
  d.source_label = std::move(source_label);
  d.task = std::move(task);
  d.task_display_name = d.task;
  d.rows = std::move(rows);
  for (auto& r : d.rows) {
    if (r.source.empty()) r.source = d.source;
    if (r.task.empty()) r.task = d.task;
    for (auto& v : check_invariants(r)) d.violations.push_back(std::move(v));
  }
  return d;
}

namespace {
constexpr std::array<GpuSpec, 4> kGpus{{
    {"H100", 700.0, 80.0},   // H100 SXM 80 GB, the paper's setup
    {"B200", 1000.0, 180.0}, // the paper's setup
    {"H200", 700.0, 141.0},
    {"A100", 400.0, 80.0},
}};
}  // namespace

const GpuSpec* find_gpu_spec(const std::string& gpu_model) {
  for (const auto& g : kGpus) {
    if (gpu_model == g.name) return &g;
  }
  // Accept full NVML names such as "NVIDIA H100 80GB HBM3".
  for (const auto& g : kGpus) {
    if (gpu_model.find(g.name) != std::string::npos) return &g;
  }
  return nullptr;
}

std::optional<double> power_limit_per_gpu_w(const ConfigRecord& r) {
  if (r.measured.power_limit_watts) return r.measured.power_limit_watts;
  if (const auto* g = find_gpu_spec(r.gpu_model)) return g->tdp_w;
  return std::nullopt;
}

}  // namespace wattlab::diagnose
