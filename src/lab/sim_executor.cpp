#include "lab/sim_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "lab/bit_stats.h"
#include "lab/generate.h"
#include "lab/operand_file.h"
#include "lab/recipe.h"
#include "wattlab/sensors/registry.h"

namespace wattlab::lab {
namespace {

constexpr int64_t kNsPerS = 1'000'000'000;
int64_t s_to_ns(double s) { return static_cast<int64_t>(std::llround(s * 1e9)); }

// The operand's statistics on a shape capped at max_elements (K kept where it fits): the sim
// needs the character of the inputs, not every element. An operand from a file: all of it.
Result<BitStats> operand_stats(const GemmSpec& s, Operand which, DType t, int64_t max_elements) {
  OperandShape sh{which, s.m, s.n, s.k, t};
  if (!operand_file(s, which).empty()) {
    auto bytes = load_operand_file(s, sh);
    if (!bytes) return bytes.error();
    return bit_stats_cpu(bytes->data(), sh);
  }
  auto recipe = parse_recipe(which == Operand::A ? s.recipe_a : s.recipe_b);
  if (!recipe) return recipe.error();
  const int64_t kk = std::min<int64_t>(s.k, 256);
  const int64_t outer_max = std::max<int64_t>(2, max_elements / kk);
  sh.K = kk;
  sh.M = std::min<int64_t>(s.m, outer_max);
  sh.N = std::min<int64_t>(s.n, outer_max);
  if (auto st = validate(*recipe, sh); !st) return st.error();
  try {
    const auto bytes = generate_cpu(*recipe, sh, s.seed);
    return bit_stats_cpu(bytes.data(), sh);
  } catch (const UsageError& e) {
    return Error{ErrorKind::invalid_argument, e.what(), ""};
  }
}

// The statistics a point reports of its inputs ("a_zero_fraction", ...), named as the GPU
// executor names them.
void add_stats(std::map<std::string, double>& out, const std::string& operand, const BitStats& s) {
  out[operand + "_popcount_bits"] = s.mean_popcount_bits;
  out[operand + "_zero_fraction"] = s.zero_fraction;
  out[operand + "_distinct_values"] = static_cast<double>(s.distinct_values);
  if (std::isfinite(s.mean_hamming_along_k_bits)) out[operand + "_hamming_k_bits"] = s.mean_hamming_along_k_bits;
  if (std::isfinite(s.mean_hamming_along_mn_bits)) out[operand + "_hamming_mn_bits"] = s.mean_hamming_along_mn_bits;
  out[operand + "_width_bits"] = s.width_bits;
}

double frac(double bits, int width) { return width > 0 && std::isfinite(bits) ? bits / width : 0; }

class SimExecutor final : public GemmExecutor {
 public:
  SimExecutor(std::vector<GemmSpec> planned, std::vector<double> activity,
              std::vector<std::map<std::string, double>> stats, SimExecutorOptions opt)
      : planned_(std::move(planned)),
        activity_(std::move(activity)),
        stats_(std::move(stats)),
        opt_(opt),
        clock_(1'000'000'000) {
    std::string script;
    for (double a : activity_) script += fmt::format("gemm {:.6f} {}ms; ", a, std::llround(opt_.slot_s * 1e3));
    script += "idle 10s";
    BackendOptions b;
    b.device = "sim";
    b.clock = &clock_;
    b.sim_workload = "cap 700W; " + script;
    b.sim_seed = opt_.sim_seed;
    OpenedSensors s = open_sensors(b);
    for (const auto& sen : s.sensors) devices_.push_back({sen->backend(), sen->properties()});
    origin_ns_ = clock_.now_ns();
    meter_ = std::make_unique<Meter>(std::move(s.sensors), clock_);
  }

  bool simulated() const override { return true; }
  std::string description() const override {
    return "SIMULATED GEMM executor on the simulated GPU (wattlab-sim): power from the inputs' bit statistics, "
           "GEMM time from a nominal throughput; not hardware";
  }
  Meter& meter() override { return *meter_; }
  Clock& clock() override { return clock_; }
  std::vector<DeviceProperties> devices() const override { return devices_; }

  Result<Prepared> prepare(const GemmSpec& spec, double target_replay_s) override {
    if (next_ >= planned_.size())
      return Error{ErrorKind::internal, "SIMULATED executor: more points prepared than planned", ""};
    const std::size_t i = next_++;
    const int64_t slot_begin = origin_ns_ + static_cast<int64_t>(i) * s_to_ns(opt_.slot_s);
    advance_to(std::max(slot_begin + kNsPerS / 10, clock_.now_ns()));
    Prepared p;
    const double gemm_s =
        spec.control == Control::none ? gemm_flops(spec.m, spec.n, spec.k) / (spec_of(spec).sim_tflops * 1e12) : 0.001;
    p.gemms_per_replay = std::max<int64_t>(1, std::llround(target_replay_s / gemm_s));
    p.replay_s = static_cast<double>(p.gemms_per_replay) * gemm_s;
    p.input_stats = stats_[i];
    p.input_stats["sim_activity"] = activity_[i];
    replay_s_ = p.replay_s;
    return p;
  }
  Status launch(int64_t replays) override {
    pending_ns_ += s_to_ns(static_cast<double>(replays) * replay_s_or(0.075));
    return {};
  }
  Status synchronize() override {
    advance_to(clock_.now_ns() + pending_ns_);
    pending_ns_ = 0;
    return {};
  }
  WindowResult window_result(WindowId id) override {
    advance_to(clock_.now_ns() + 2 * kNsPerS);
    return meter_->wait_result(id);
  }
 private:
  static const EngineSpec& spec_of(const GemmSpec& s) { return spec(s.engine); }
  double replay_s_or(double d) const { return replay_s_ > 0 ? replay_s_ : d; }
  void advance_to(int64_t t_ns) {
    // The meter's schedule runs in steps so that no sensor update is skipped.
    while (clock_.now_ns() < t_ns) {
      const int64_t step = std::min<int64_t>(t_ns, clock_.now_ns() + kNsPerS / 10);
      meter_->advance_to(step);
      if (clock_.now_ns() < step) clock_.set_ns(step);
    }
  }

  std::vector<GemmSpec> planned_;
  std::vector<double> activity_;
  std::vector<std::map<std::string, double>> stats_;
  SimExecutorOptions opt_;
  VirtualClock clock_;
  std::vector<DeviceProperties> devices_;
  std::unique_ptr<Meter> meter_;
  int64_t origin_ns_ = 0;
  std::size_t next_ = 0;
  int64_t pending_ns_ = 0;
  double replay_s_ = 0;
};

}  // namespace

double sim_activity(double hamming_frac, double popcount_frac) {
  return std::clamp(0.2 + 0.75 * (0.5 * hamming_frac + 0.5 * popcount_frac), 0.0, 1.0);
}

Result<std::unique_ptr<GemmExecutor>> make_sim_executor(std::vector<GemmSpec> planned, SimExecutorOptions opt) {
  std::vector<double> activity;
  std::vector<std::map<std::string, double>> stats(planned.size());
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const GemmSpec& s = planned[i];
    if (s.control != Control::none) {
      activity.push_back(s.control == Control::toggle ? 0.05 + 0.01 * std::min(s.toggle_bits, 8) : 0.0);
      continue;
    }
    const EngineSpec& es = spec(s.engine);
    auto a = operand_stats(s, Operand::A, es.a, opt.max_stats_elements);
    if (!a) return a.error();
    auto b = operand_stats(s, Operand::B, es.b, opt.max_stats_elements);
    if (!b) return b.error();
    add_stats(stats[i], "a", *a);
    add_stats(stats[i], "b", *b);
    auto ham = [](const BitStats& x) {
      return 0.5 * (frac(x.mean_hamming_along_k_bits, x.width_bits) + frac(x.mean_hamming_along_mn_bits, x.width_bits));
    };
    const double h = 0.5 * (ham(*a) + ham(*b));
    const double p = 0.5 * (frac(a->mean_popcount_bits, a->width_bits) + frac(b->mean_popcount_bits, b->width_bits));
    activity.push_back(sim_activity(h, p));
  }
  return std::unique_ptr<GemmExecutor>(
      std::make_unique<SimExecutor>(std::move(planned), std::move(activity), std::move(stats), opt));
}

}  // namespace wattlab::lab
