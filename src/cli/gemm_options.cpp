#include "gemm_options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "device_options.h"
#include "lab/npy.h"
#include "lab/recipe.h"

namespace wattlab::cli {
namespace {

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t c = list.find(',', pos);
    std::string item = list.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    out.push_back(item);
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return out;
}

// The 2-D shape of an operand file's array.
std::vector<int64_t> operand_file_dims(const char* flag, const std::string& path) {
  lab::NpyHeader h;
  try {
    h = lab::read_npy_header(path);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", flag, e.what()));
  }
  if (h.shape.size() != 2)
    throw UsageError(fmt::format("{}: {}: holds a {}-D array; an operand is 2-D ({})", flag, path, h.shape.size(),
                                 std::string_view(flag) == "--a" ? "M x K" : "K x N"));
  return h.shape;
}

}  // namespace

void add_gemm_device_options(CLI::App& sub, GemmDeviceOptions& o) {
  sub.add_option("--device", o.device,
                 "auto (the GPU executor when this build has CUDA and a GPU opens, else SIMULATED), sim "
                 "(the SIMULATED executor) or nvml (the GPU executor, or fail)")
      ->check(CLI::IsMember({"auto", "sim", "nvml"}))
      ->capture_default_str();
  sub.add_option("--cuda-device", o.cuda_device, "CUDA ordinal the GEMMs run on (after CUDA_VISIBLE_DEVICES)")
      ->check(CLI::Range(0, 63))
      ->capture_default_str();
  sub.add_option("--gpus", o.gpus, "GPUs the meter reads: NVML indices or UUIDs (overrides CUDA_VISIBLE_DEVICES)")
      ->delimiter(',');
  sub.add_option("--sim-seed", o.sim_seed, "seed of the SIMULATED board (gain, noise)")
      ->check(sim_seed_check())
      ->capture_default_str();
}

void add_gemm_protocol_options(CLI::App& sub, GemmProtocolFlags& o, bool sweep) {
  sub.add_option("--window-s", o.window_s, "measurement window per point, s")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  if (sweep) {
    sub.add_option("--warmup-s", o.warmup_min_s, "minimum warm-up of each point after the first, s")
        ->check(CLI::Range(0.0, 3600.0))
        ->capture_default_str();
    sub.add_option("--first-warmup-s", o.first_warmup_min_s, "minimum warm-up of the first point of a run, s")
        ->check(CLI::Range(0.0, 3600.0))
        ->capture_default_str();
  } else {
    // One point is the first of its run: its minimum is the first point's.
    sub.add_option("--warmup-min-s", o.first_warmup_min_s, "minimum warm-up, s")
        ->check(CLI::Range(0.0, 3600.0))
        ->capture_default_str();
  }
  sub.add_option("--warmup-max-s", o.warmup_max_s, "longest warm-up of a point (the first point: at least its minimum): stop waiting for a steady temperature, s")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  sub.add_option("--max-drift-c", o.max_drift_c, "steady: the temperature moved less than this over 10 s, degC")
      ->check(CLI::Range(0.01, 100.0))
      ->capture_default_str();
  sub.add_flag("--fidelity", o.fidelity,
               "the original paper's setup: 2048^3, a synchronized GEMM loop instead of graphs, no warm-up; "
               "engine default fp16acc16 (docs/gemm-cli.md)");
}

lab::ProtocolOptions protocol_options(const GemmProtocolFlags& f) {
  lab::ProtocolOptions p;
  p.window_s = f.window_s;
  p.warmup_min_s = f.warmup_min_s;
  p.first_warmup_min_s = f.first_warmup_min_s;
  p.warmup_max_s = std::max(f.warmup_max_s, f.warmup_min_s);  // the first point: its own minimum (protocol.h)
  p.max_drift_c = f.max_drift_c;
  p.warmup = !f.fidelity;
  return p;
}

lab::TimeModel time_model(const GemmProtocolFlags& f) {
  lab::TimeModel m;
  m.window_s = f.window_s;
  m.warmup_s = f.fidelity ? 0 : f.warmup_min_s;
  m.first_warmup_s = f.fidelity ? 0 : f.first_warmup_min_s;
  return m;
}

void throw_error(const Error& e, const std::string& context) {
  const std::string msg = (context.empty() ? "" : context + ": ") + e.what + (e.hint.empty() ? "" : "\n  " + e.hint);
  if (e.kind == ErrorKind::invalid_argument) throw UsageError(msg);
  throw WattlabError(Error{e.kind, (context.empty() ? "" : context + ": ") + e.what, e.hint, e.vendor_code});
}

std::vector<lab::Engine> parse_engines(const std::string& list) {
  if (list == "all") {
    std::vector<lab::Engine> all;
    for (const auto& s : lab::all_engines()) all.push_back(s.engine);
    return all;
  }
  return usage_or_value(lab::parse_engine_list(list), "--engines");
}

std::vector<lab::Shape> parse_shapes(const std::string& list) { return usage_or_value(lab::parse_shape_list(list), "--shapes"); }

std::vector<uint64_t> parse_seeds(const std::string& list) {
  std::vector<uint64_t> out;
  for (const auto& s : split_commas(list)) {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
      throw UsageError(fmt::format("--seeds: '{}' in '{}' is not a non-negative integer", s, list));
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

std::vector<std::string> parse_experiments(const std::string& list) {
  const auto known = lab::study_experiment_ids();
  if (list == "all") return known;
  std::vector<std::string> out;
  for (auto s : split_commas(list)) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      std::string ids;
      for (const auto& k : known) ids += (ids.empty() ? "" : ", ") + k;
      throw UsageError(fmt::format("--experiment: '{}' is not an experiment of the study\n  use one of: {}", s, ids));
    }
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

void check_shape(lab::Engine engine, const lab::Shape& shape) {
  if (auto why = lab::shape_problem(engine, shape.m, shape.n, shape.k))
    throw UsageError(fmt::format("shape {} for engine {}: {}", lab::to_string(shape), lab::to_string(engine), *why));
}

void check_recipe(const std::string& text, bool a_operand, lab::Engine engine, const lab::Shape& shape) {
  const char* flag = a_operand ? "--recipe-a" : "--recipe-b";
  auto r = lab::parse_recipe(text);
  if (!r) throw_error(r.error(), flag);
  const lab::EngineSpec& es = lab::spec(engine);
  lab::OperandShape sh{a_operand ? lab::Operand::A : lab::Operand::B, shape.m, shape.n, shape.k, a_operand ? es.a : es.b};
  if (auto st = lab::validate(*r, sh); !st)
    throw_error(st.error(), fmt::format("{} '{}' on {} operand of {} {}", flag, text, a_operand ? "the A" : "the B",
                                        es.name, lab::to_string(shape)));
}

lab::Shape shape_from_operand_files(const std::string& file_a, const std::string& file_b) {
  lab::Shape sh;
  if (!file_a.empty()) {
    const auto a = operand_file_dims("--a", file_a);
    sh.m = a[0];
    sh.k = a[1];
  }
  if (!file_b.empty()) {
    const auto b = operand_file_dims("--b", file_b);
    if (!file_a.empty() && b[0] != sh.k)
      throw UsageError(fmt::format("--a {} is M x K = {} x {} but --b {} is K x N = {} x {}: their K differ", file_a,
                                   sh.m, sh.k, file_b, b[0], b[1]));
    sh.k = b[0];
    sh.n = b[1];
  }
  if (file_a.empty()) sh.m = sh.n;
  if (file_b.empty()) sh.n = sh.m;
  return sh;
}

void attach_operand_files(lab::GemmSpec& spec, const std::string& file_a, const std::string& file_b) {
  const lab::EngineSpec& es = lab::spec(spec.engine);
  for (const bool is_a : {true, false}) {
    const std::string& path = is_a ? file_a : file_b;
    if (path.empty()) continue;
    const lab::OperandShape shape{is_a ? lab::Operand::A : lab::Operand::B, spec.m, spec.n, spec.k, is_a ? es.a : es.b};
    lab::NpyOperand op;
    try {
      op = lab::load_npy_operand(path, shape);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{} (engine {}): {}", is_a ? "--a" : "--b", es.name, e.what()));
    }
    (is_a ? spec.file_a : spec.file_b) = path;
    (is_a ? spec.file_sha256_a : spec.file_sha256_b) = op.file_sha256;
    (is_a ? spec.recipe_a : spec.recipe_b) = lab::npy_operand_label(path, op.file_sha256);
  }
}

}  // namespace wattlab::cli
