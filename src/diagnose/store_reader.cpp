// The store reader (wattlab's own measured runs -> configuration records) and the
// reader-by-extension dispatch. Tag names and the mapping: docs/diagnose.md, docs/marks.md.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <variant>

#include "wattlab/core/error.h"
#include "diagnose/readers.h"
#include "store/serve_bench_record.h"
#include "wattlab/store/store.h"

namespace wattlab::diagnose {
namespace {

// A window's configuration: its labels over the run's tags (a sweep run tags the model once and
// labels each window with its batch). The steady-window fields (batch, ITLs, tokens, ...) are
// read through their codec (src/store/serve_bench_record.h); the rest are the tags of
// docs/marks.md.
class Facts {
 public:
  Facts(const RunRecord& run, const WindowResult& w) : w_(w), labels_(run.info.tags) {
    for (const auto& [k, v] : w.labels) labels_[k] = v;
  }
  const std::map<std::string, std::string>& labels() const { return labels_; }
  std::optional<std::string> text(const std::string& key) const {
    if (auto it = labels_.find(key); it != labels_.end()) return it->second;
    return std::nullopt;
  }
  // A number, or why not: a present but unreadable value is an error, never a silent default.
  std::optional<double> number(const std::string& key, std::string& error) const {
    auto t = text(key);
    if (!t) return std::nullopt;
    try {
      std::size_t used = 0;
      const double v = std::stod(*t, &used);
      if (used == t->size() && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
    error = fmt::format("tag '{}' = '{}' is not a number", key, *t);
    return std::nullopt;
  }
  std::optional<double> count(const std::string& key) const {
    auto it = w_.counts.find(key);
    if (it == w_.counts.end()) return std::nullopt;
    return it->second;
  }

 private:
  const WindowResult& w_;
  std::map<std::string, std::string> labels_;
};

bool is_gpu_domain(const std::string& id) { return std::regex_match(id, std::regex(R"(gpu:\d+)")); }
bool is_cpu_domain(const std::string& id) { return std::regex_match(id, std::regex(R"(cpu:\d+/(package|dram))")); }

// "NVIDIA H200" -> "H200"; the simulated board -> "SIM".
std::string gpu_model_of(const RunRecord& run) {
  for (const auto& d : run.domains) {
    if (!is_gpu_domain(d.id)) continue;
    if (d.simulated) return "SIM";
    std::string n = d.name;
    for (const char* p : {"NVIDIA ", "AMD "})
      if (n.rfind(p, 0) == 0) n = n.substr(std::string(p).size());
    if (auto sp = n.find(' '); sp != std::string::npos) n = n.substr(0, sp);  // "H100 80GB HBM3" -> "H100"
    return n;
  }
  return "";
}

struct Energy {
  double energy_j = 0, uncertainty_j = 0, systematic_j = 0;
  int domains = 0;
  std::vector<const DomainEnergy*> parts;
};

// Sums the domains that match; an unavailable one makes the sum unusable (returns its issue).
std::optional<std::string> sum_energy(const WindowResult& w, bool (*match)(const std::string&), Energy& e) {
  double var = 0;
  for (const auto& d : w.domains) {
    if (!match(d.domain_id)) continue;
    if (!d.available)
      return fmt::format("{} has no energy estimate ({})", d.domain_id, d.issues.empty() ? "no reason given" : d.issues[0]);
    e.energy_j += d.energy_j;
    var += d.uncertainty_j * d.uncertainty_j;  // boards' window errors are independent
    e.systematic_j += d.systematic_j;          // gain biases: added, the conservative bound
    ++e.domains;
    e.parts.push_back(&d);
  }
  e.uncertainty_j = std::sqrt(var);
  return std::nullopt;
}

// Mean of one telemetry field over the GPU domains that have it.
template <class F>
std::optional<double> mean_over(const Energy& gpus, F field) {
  double s = 0;
  int n = 0;
  for (const auto* d : gpus.parts)
    if (auto v = field(d->telemetry)) {
      s += *v;
      ++n;
    }
  if (n == 0) return std::nullopt;
  return s / n;
}

std::string num_json(double v) { return fmt::format("{:.17g}", v); }
// A JSON string for any bytes: a store's text (a window's name, a path) need not be UTF-8, and
// bytes that are not become U+FFFD, so the record stays valid JSON.
std::string str_json(const std::string& s) {
  return nlohmann::ordered_json(s).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// One window -> one record, or the reason it cannot be one.
std::variant<ConfigRecord, std::string> to_record(const RunRecord& run, const WindowResult& w,
                                                  const SteadyWindowRecord& steady) {
  const Facts f(run, w);
  std::string err;
  if (!w.final) return std::string("the window's result is provisional (the timeline never covered its end)");
  if (w.labels.count("marks.unclosed")) return std::string("the window was left open by the command and closed at exit");
  const auto& tokens = steady.tokens;
  const auto images = f.count("images"), videos = f.count("videos");
  const std::string workload = f.text("workload").value_or(tokens ? "llm" : (images || videos) ? "diffusion" : "");
  if (workload != "llm" && workload != "diffusion")
    return workload.empty() ? std::string("no 'tokens', 'images' or 'videos' count")
                            : fmt::format("tag 'workload' = '{}' (accepted: llm, diffusion)", workload);
  ConfigRecord r;
  r.workload = workload == "llm" ? Workload::llm : Workload::diffusion;
  auto model = f.text("model");
  if (!model || model->empty()) return std::string("no 'model' tag");
  auto task = f.text("task");
  if (!task || task->empty()) return std::string("no 'task' tag");
  r.model_id = *model;
  r.task = *task;
  r.nickname = f.text("nickname").value_or(r.model_id);
  r.architecture = f.text("architecture").value_or("");
  r.weight_precision = f.text("precision").value_or("unknown");

  Energy gpu, cpu;
  if (auto e = sum_energy(w, is_gpu_domain, gpu)) return *e;
  if (gpu.domains == 0) return std::string("no GPU domain (gpu:N) in the window");
  if (auto e = sum_energy(w, is_cpu_domain, cpu)) cpu = Energy{};  // CPU energy is an extra: absent if unusable
  const double dur_s = w.dur_s();
  if (!(dur_s > 0)) return std::string("the window has zero duration");

  r.gpu_model = f.text("gpu").value_or(gpu_model_of(run));
  if (r.gpu_model.empty()) return std::string("no 'gpu' tag and no GPU name in the run's domains");
  const auto gpus = f.number("gpus", err);
  if (gpus && *gpus < 1) return fmt::format("tag 'gpus' = {} (at least 1)", *gpus);
  r.num_gpus = gpus ? static_cast<int>(*gpus) : gpu.domains;
  const auto total = f.number("total_params_b", err), active = f.number("active_params_b", err);
  r.total_params_billions = total.value_or(0);
  r.activated_params_billions = active.value_or(total.value_or(0));
  const auto& batch = steady.batch;
  if (!err.empty()) return err;
  if (!batch || *batch < 1) return std::string("no 'batch' tag (the batch size or server batch cap)");
  r.avg_power_watts = gpu.energy_j / dur_s;

  double units = 0;
  if (r.workload == Workload::llm) {
    if (!tokens || *tokens <= 0) return std::string("the 'tokens' count is 0");
    units = *tokens;
    LlmMetrics m;
    m.max_num_seqs = static_cast<int>(*batch);
    m.tensor_parallel = static_cast<int>(f.number("tp", err).value_or(1));
    m.expert_parallel = static_cast<int>(f.number("ep", err).value_or(1));
    m.data_parallel = static_cast<int>(f.number("dp", err).value_or(1));
    m.avg_batch_size = steady.avg_batch_size.value_or(*batch);
    const auto& requests = steady.requests;
    const auto out_len = f.number("output_len", err);
    if (requests && *requests > 0) m.avg_output_len = *tokens / *requests;
    else if (out_len && *out_len > 0) m.avg_output_len = *out_len;
    else return std::string("no 'requests' count and no 'output_len' tag (needed for energy per request)");
    m.energy_per_token_joules = gpu.energy_j / units;
    m.energy_per_request_joules = m.energy_per_token_joules * m.avg_output_len;
    m.output_throughput_tokens_per_sec = units / dur_s;
    if (const auto& itl = steady.median_itl_ms) {
      m.median_itl_ms = *itl;
    } else {
      // Decode steps = tokens per sequence: the window's time per step (prefill included).
      m.median_itl_ms = dur_s * 1000 / (units / m.avg_batch_size);
      r.extra_json["median_itl_ms_source"] = str_json("derived: window duration / (tokens / avg_batch_size)");
    }
    m.p90_itl_ms = steady.p90_itl_ms;
    m.p95_itl_ms = steady.p95_itl_ms;
    m.p99_itl_ms = steady.p99_itl_ms;
    r.llm = m;
  } else {
    DiffusionMetrics d;
    d.video = workload == "diffusion" && videos.has_value() && !images;
    units = d.video ? *videos : images.value_or(0);
    if (units <= 0) return std::string("the 'images'/'videos' count is 0");
    d.batch_size = static_cast<int>(*batch);
    d.inference_steps = static_cast<int>(f.number("steps", err).value_or(0));
    d.height = static_cast<int>(f.number("height", err).value_or(0));
    d.width = static_cast<int>(f.number("width", err).value_or(0));
    if (auto n = f.number("num_frames", err)) d.num_frames = static_cast<int>(*n);
    d.fps = f.number("fps", err);
    d.batch_latency_s = dur_s / (units / d.batch_size);
    d.throughput_per_sec = units / dur_s;
    d.energy_per_generation_joules = gpu.energy_j / units;
    r.diffusion = d;
  }
  if (!err.empty()) return err;

  auto& x = r.measured;
  if (cpu.domains > 0) x.cpu_energy_per_unit_joules = cpu.energy_j / units;
  x.sm_clock_mhz = mean_over(gpu, [](const TelemetrySummary& t) { return t.mean_sm_clock_mhz; });
  auto share = [&](auto field) -> std::optional<double> {
    auto v = mean_over(gpu, field);
    if (v) return std::clamp(*v / 100.0, 0.0, 1.0);
    return std::nullopt;
  };
  x.sm_activity = share([](const TelemetrySummary& t) { return t.mean_sm_activity_pct; });
  x.tensor_activity = share([](const TelemetrySummary& t) { return t.mean_tensor_activity_pct; });
  x.dram_activity = share([](const TelemetrySummary& t) { return t.mean_dram_bw_pct; });
  x.gpu_utilization = share([](const TelemetrySummary& t) { return t.mean_utilization_gpu_pct; });
  x.power_limit_watts = mean_over(gpu, [](const TelemetrySummary& t) { return t.power_limit_w; });
  if (const auto& kv = steady.kv_cache_usage) x.kv_cache_usage = std::clamp(*kv, 0.0, 1.0);
  if (auto cpu_s = f.count("host_cpu_s")) {
    // Host CPU seconds of the workload over the window: cores kept busy; the share is of one core.
    x.cpu_utilization = std::clamp(*cpu_s / dur_s, 0.0, 1.0);
    r.extra_json["host_cpu_cores_busy"] = num_json(*cpu_s / dur_s);
  }
  if (auto pc = mean_over(gpu, [](const TelemetrySummary& t) { return t.power_capped_fraction; }))
    r.extra_json["power_capped_fraction"] = num_json(*pc);
  const char* per = r.workload == Workload::llm ? "token" : r.diffusion->video ? "video" : "image";
  r.extra_json[fmt::format("energy_per_{}_uncertainty_joules", per)] = num_json(gpu.uncertainty_j / units);
  r.extra_json[fmt::format("energy_per_{}_systematic_joules", per)] = num_json(gpu.systematic_j / units);
  r.extra_json["window_dur_s"] = num_json(dur_s);
  r.extra_json["wattlab_run"] = std::to_string(run.run_id);
  r.extra_json["wattlab_window"] = str_json(w.name);
  if (run.info.simulated) r.extra_json["simulated"] = "true";
  for (const char* k : {"path", "gpu_name"})
    if (auto v = f.text(k)) r.extra_json[k] = str_json(*v);
  return r;
}

}  // namespace

Dataset read_store(const std::string& db_path, const std::string& task_filter) {
  if (!std::filesystem::exists(db_path)) throw UsageError(fmt::format("{}: no such file (a wattlab store .db)", db_path));
  auto store = Store::open(db_path, OpenMode::read_only);
  if (!store) throw UsageError(fmt::format("{}: {}", db_path, store.error().message()));
  auto runs = store->list_runs();
  // A damaged file is bad input (exit 2), as one that is not a store; a failing disk is not.
  if (!runs && (runs.error().kind == ErrorKind::parse || runs.error().kind == ErrorKind::schema))
    throw UsageError(fmt::format("{}: {}", db_path, runs.error().message()));
  if (!runs) throw WattlabError(runs.error());
  std::vector<ConfigRecord> rows;
  std::vector<RejectedRow> rejected;
  std::set<std::string> tasks;
  bool simulated = false;
  const std::string file = std::filesystem::path(db_path).filename().string();
  for (const auto& s : *runs) {
    auto run = store->load_run(s.run_id);
    if (!run) {
      rejected.push_back({db_path, fmt::format("{} run {}", file, s.run_id), run.error().message()});
      continue;
    }
    std::size_t candidates = 0, filtered = 0;
    for (const auto& w : run->windows) {
      // Windows without counts (the whole-command window "run", a plain region) describe no
      // configuration; a window labelled phase=warmup (anything but steady) is left out on purpose.
      if (w.counts.empty()) continue;
      const Facts f(*run, w);
      if (auto t = f.text("task"); !task_filter.empty() && t && *t != task_filter) {
        ++filtered;
        continue;  // another task: not asked for, not a rejection
      }
      ++candidates;
      const std::string where = fmt::format("{} run {} window '{}'", file, run->run_id, w.name);
      const auto steady = SteadyWindowRecord::decode(f.labels(), w.counts);
      if (!steady) {
        rejected.push_back({db_path, where, steady.error().what});
        continue;
      }
      if (const auto& phase = steady->phase; phase && *phase != SteadyWindowRecord::kSteady) {
        rejected.push_back({db_path, where, fmt::format("phase '{}' is not a steady-state window (skipped)", *phase)});
        continue;
      }
      auto rec = to_record(*run, w, *steady);
      if (auto* why = std::get_if<std::string>(&rec)) {
        rejected.push_back({db_path, where, *why});
        continue;
      }
      auto& r = std::get<ConfigRecord>(rec);
      r.source = db_path;
      r.row_index = rows.size();
      tasks.insert(r.task);
      simulated = simulated || run->info.simulated;
      rows.push_back(std::move(r));
    }
    if (candidates == 0 && filtered == 0)
      rejected.push_back({db_path, fmt::format("{} run {}", file, run->run_id),
                          "no window with counts (run it with --marks and report tokens, images or videos)"});
  }
  const std::string task = !task_filter.empty() ? task_filter : tasks.size() == 1 ? *tasks.begin() : "";
  Dataset d = make_dataset(db_path,
                           fmt::format("wattlab store {}{}", file, simulated ? " (SIMULATED runs included)" : ""),
                           task, std::move(rows));
  d.rejected = std::move(rejected);
  return d;
}

namespace {

enum class Kind { json, csv, store };

class FileReader final : public RecordReader {
 public:
  FileReader(std::string path, Kind kind) : path_(std::move(path)), kind_(kind) {}
  Dataset read() override {
    switch (kind_) {
      case Kind::json: return read_leaderboard_json(path_);
      case Kind::csv: return read_csv(path_);
      case Kind::store: return read_store(path_);
    }
    return {};
  }
  std::string describe() const override {
    const char* k = kind_ == Kind::json ? "ML.ENERGY leaderboard JSON" : kind_ == Kind::csv ? "CSV" : "wattlab store";
    return fmt::format("{} {}", k, path_);
  }

 private:
  std::string path_;
  Kind kind_;
};

}  // namespace

std::unique_ptr<RecordReader> reader_for(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".json") return std::make_unique<FileReader>(path, Kind::json);
  if (ext == ".csv") return std::make_unique<FileReader>(path, Kind::csv);
  if (ext == ".db" || ext == ".sqlite" || ext == ".sqlite3") return std::make_unique<FileReader>(path, Kind::store);
  throw UsageError(fmt::format("{}: unknown data format '{}' (accepted: .json leaderboard task file, .csv, .db store)",
                               path, ext));
}

Dataset read_any(const std::string& path) { return reader_for(path)->read(); }

}  // namespace wattlab::diagnose
