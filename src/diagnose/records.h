// Configuration records: one measured configuration of an LLM or diffusion workload, with the
// ML.ENERGY leaderboard's fields and units (docs/joules-framework.md §6), plus the extras that
// wattlab's own measured runs can carry (CPU energy, clocks, GPM activity, utilization).
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wattlab::diagnose {

enum class Workload { llm, diffusion };
const char* to_string(Workload w);

// LLM (and MLLM) row fields; names and units are the leaderboard's.
struct LlmMetrics {
  int tensor_parallel = 1;
  int expert_parallel = 1;
  int data_parallel = 1;
  int max_num_seqs = 0;             // server batch cap B
  double avg_batch_size = 0;        // B_eff: mean running requests in the steady window
  double avg_output_len = 0;        // tokens
  double energy_per_token_joules = 0;    // J per output token, all GPUs
  double energy_per_request_joules = 0;  // J (apportioned: J/token x avg_output_len)
  double output_throughput_tokens_per_sec = 0;
  double median_itl_ms = 0;
  std::optional<double> p90_itl_ms, p95_itl_ms, p99_itl_ms;
};

// Diffusion row fields (image or video).
struct DiffusionMetrics {
  bool video = false;  // energy_per_video_joules / throughput_videos_per_sec / video_* fields
  int ulysses_degree = 1;
  int ring_degree = 1;
  int batch_size = 0;
  int inference_steps = 0;
  int height = 0;  // image_height or video_height (pixels)
  int width = 0;   // image_width or video_width (pixels)
  std::optional<int> num_frames;
  std::optional<double> fps;
  double batch_latency_s = 0;
  double throughput_per_sec = 0;       // throughput_images_per_sec or throughput_videos_per_sec
  double energy_per_generation_joules = 0;  // energy_per_image_joules or energy_per_video_joules
};

// What wattlab itself measured on the energy timeline and the leaderboard lacks. All optional:
// rules use a value only when it is present and say so in the finding.
struct MeasuredExtras {
  std::optional<double> cpu_energy_per_unit_joules;  // CPU package + DRAM (RAPL) per token / generation
  std::optional<double> sm_clock_mhz;                // mean SM clock in the window
  std::optional<double> sm_activity;                 // GPM SM activity, 0..1
  std::optional<double> tensor_activity;             // GPM tensor-pipe activity, 0..1
  std::optional<double> dram_activity;               // GPM DRAM bandwidth activity, 0..1
  std::optional<double> gpu_utilization;             // NVML utilization.gpu, 0..1
  std::optional<double> power_limit_watts;           // enforced power limit per GPU, W
  std::optional<double> kv_cache_usage;              // vLLM KV-cache use at the steady window, 0..1
  std::optional<double> cpu_utilization;             // host CPU busy share, 0..1
  bool any() const;
};

struct ConfigRecord {
  Workload workload = Workload::llm;
  // Provenance: which file and which row (0-based index into `configurations` or CSV data rows).
  std::string source;
  std::size_t row_index = 0;
  std::string task;  // the file's `task` (e.g. "lm-arena-chat")

  std::string model_id, nickname, architecture, weight_precision, gpu_model;
  double total_params_billions = 0;
  double activated_params_billions = 0;
  int num_gpus = 1;
  double avg_power_watts = 0;  // W, summed over the configuration's GPUs

  std::optional<LlmMetrics> llm;
  std::optional<DiffusionMetrics> diffusion;
  MeasuredExtras measured;
  // Fields the reader did not model, kept as JSON text so --json output can re-emit them.
  std::map<std::string, std::string> extra_json;

  // Uniform accessors over both workloads.
  int batch() const;                       // max_num_seqs or batch_size
  double energy_per_unit_j() const;        // J per token (LLM) or per image/video (diffusion)
  double energy_per_response_j() const;    // J per request (LLM) or per image/video
  double latency_ms() const;               // median ITL (LLM) or batch latency (diffusion), ms
  double throughput_per_sec() const;       // tokens/s or images (videos)/s
  double throughput_per_watt() const;      // units/s/W = 1 / energy_per_unit_j
  const char* unit() const;                // "token", "image", "video"
  const char* latency_name() const;        // "median ITL" or "batch latency"
  std::string label() const;               // "Qwen/Qwen3-8B B200x1 batch 64 bfloat16"
  std::string where() const;               // "gpqa.json row 12"
};

// One invariant a row breaks (docs/joules-framework.md §6: exact to 1e-6 relative).
struct InvariantViolation {
  std::string source;
  std::size_t row_index = 0;
  std::string invariant;  // "energy_per_request_joules = energy_per_token_joules x avg_output_len"
  double expected = 0;    // right-hand side
  double actual = 0;      // left-hand side as stored
  double rel_error = 0;
  std::string message() const;
};

inline constexpr double kInvariantRelTolerance = 1e-6;

// Checks every row invariant that applies to `r`; returns the violations (empty when clean).
std::vector<InvariantViolation> check_invariants(const ConfigRecord& r,
                                                 double rel_tol = kInvariantRelTolerance);

// A row a reader could not turn into a record (a stored window that lacks a count or a tag),
// with the reason: reported, never dropped silently.
struct RejectedRow {
  std::string source;  // the file
  std::string where;   // "run.db run 3 window 'b8'"
  std::string reason;  // "no 'batch' tag (the batch size or server batch cap)"
  std::string message() const { return where + ": not used: " + reason; }
};

// The rows of one task file (or of one store query), with what was found on load.
struct Dataset {
  std::string source;            // file path, or "store:..." for measured runs
  std::string source_label;      // "ML.ENERGY leaderboard v3, gpqa.json"
  std::string task;
  std::string task_display_name;
  std::vector<ConfigRecord> rows;
  std::vector<InvariantViolation> violations;
  std::vector<RejectedRow> rejected;  // the store reader's windows that are not records, and why
};

// Builds a Dataset from records already in memory (a measured run, a test) and checks invariants.
Dataset make_dataset(std::string source, std::string source_label, std::string task,
                     std::vector<ConfigRecord> rows);

// Known GPU specifications used by the rules (TDP as in the paper's setup).
struct GpuSpec {
  const char* name;
  double tdp_w;
  double memory_gib;
};
// nullptr when the GPU is not in the table (rules then need a measured power limit).
const GpuSpec* find_gpu_spec(const std::string& gpu_model);
// The per-GPU power limit for a record: the measured enforced limit, else the table's TDP.
std::optional<double> power_limit_per_gpu_w(const ConfigRecord& r);

}  // namespace wattlab::diagnose
