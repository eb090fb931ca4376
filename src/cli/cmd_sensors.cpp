// wattlab sensors: the domains found here and each one's sensor model.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <ostream>
#include <unistd.h>

#include "characterize_output.h"
#include "cli.h"
#include "device_options.h"
#include "gpu_load.h"
#include "wattlab/core/units.h"
#include "wattlab/sensors/characterize.h"
#include "wattlab/store/store.h"

namespace wattlab::cli {
namespace {

struct SensorsOptions {
  DeviceOptions dev;
  bool characterize = false;
  double load_s = 10;
  double idle_s = 10;
  double poll_s = 2;
  std::string json;
  std::string db = "wattlab.db";
  std::string sim_load = "step 600W 3600s";
};

// The CUDA kernel seen as a DeviceLoad.
class KernelLoad final : public DeviceLoad {
 public:
  explicit KernelLoad(std::unique_ptr<gpu_load::FmaLoad> k) : k_(std::move(k)) {}
  std::string describe() const override { return k_->describe(); }
  bool simulated() const override { return false; }
  Status prepare() override { return wrap(k_->prepare(error_)); }
  Status start(int64_t dur_ns) override { return wrap(k_->start(dur_ns, error_)); }
  Status finish(std::string& report) override { return wrap(k_->finish(report, error_)); }

 private:
  Status wrap(bool ok) const { return ok ? Status{} : Status{Error{ErrorKind::unavailable, error_}}; }
  std::unique_ptr<gpu_load::FmaLoad> k_;
  std::string error_;
};

std::string property(const Sensor& s, const std::string& key) {
  for (const auto& [k, v] : s.properties())
    if (k == key) return v;
  return "";
}

int characterize_sensors(const SensorsOptions& o, Io& io) {
  CharacterizeOptions co;
  co.load_ns = s_to_ns(o.load_s);
  co.idle_max_ns = s_to_ns(o.idle_s);
  co.poll_ns = s_to_ns(o.poll_s);
  // The simulated GPU runs on a virtual clock (from now on the monotonic clock): fast, deterministic.
  VirtualClock virtual_clock(MonotonicClock::instance().now_ns());
  BackendOptions bo = o.dev.backend();
  const bool sim = o.dev.device == "sim";
  if (sim) bo.clock = &virtual_clock;
  // Idle is idle on the sim too, unless a workload was given: the scripted load comes on top.
  if (sim && bo.sim_workload.empty()) bo.sim_workload = "idle 3600s";
  Clock& clock = sim ? static_cast<Clock&>(virtual_clock) : MonotonicClock::instance();
  OpenedSensors opened = open_sensors(bo);
  io.err << "wattlab sensors --characterize: " << describe(opened);
  if (opened.domain_count() == 0) return kExitFailure;
  std::vector<std::string> notes;
  if (sim) notes.push_back("SIMULATED: the sim's scripted load '" + o.sim_load + "' stands in for the GPU kernel; "
                           "it runs on a virtual clock, so read costs are the sim's configured costs");
  std::vector<std::unique_ptr<DeviceLoad>> loads;
  std::vector<CharacterizeTarget> targets;
  std::vector<Domain> domains;
  for (auto& sensor : opened.sensors) {
    for (std::size_t i = 0; i < sensor->domains().size(); ++i) {
      const Domain& d = sensor->domains()[i];
      CharacterizeTarget t{sensor.get(), i, nullptr, ""};
      if (!d.parent.empty()) {
        t.no_load_reason = "inside " + d.parent + ": the load runs there, and this domain has no energy counter";
      } else if (sensor->backend() == "sim") {
        loads.push_back(make_sim_load(*sensor, i, o.sim_load));
      } else if (sensor->backend() == "nvml") {
        std::string error;
        auto k = gpu_load::FmaLoad::open(d.uuid, property(*sensor, d.id + ".pci_bus_id"), error);
        if (k) loads.push_back(std::make_unique<KernelLoad>(std::move(k)));
        else t.no_load_reason = "no load available: " + error;
      } else {
        t.no_load_reason = "no built-in load for " + sensor->backend() + " domains";
      }
      if (t.no_load_reason.empty() && !loads.empty()) t.load = loads.back().get();
      if (!t.no_load_reason.empty() && d.parent.empty()) {
        const std::string n = d.id + ": " + t.no_load_reason +
                              "; skipped: counter/integrated-power agreement under load (idle power, update periods, "
                              "read costs and sample-buffer spacing are still measured)";
        io.err << "wattlab sensors --characterize: " << n << "\n";
        notes.push_back(n);
      }
      targets.push_back(t);
      domains.push_back(d);
    }
  }
  auto store = Store::open(o.db);
  if (!store) {
    io.err << "wattlab: " << store.error().message() << "\n";
    return kExitFailure;
  }
  RunInfo info;
  info.command = {"wattlab", "sensors", "--characterize"};
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  info.host = host;
  info.start_utc = utc_iso8601(std::chrono::system_clock::now());
  info.start_t_ns = clock.now_ns();
  info.simulated = opened.simulated();
  info.device_selection = o.dev.device;
  info.tags = {{"task", "sensors-characterize"}, {"characterize.load_s", fmt::format("{}", o.load_s)},
               {"characterize.idle_s", fmt::format("{}", o.idle_s)}, {"characterize.poll_s", fmt::format("{}", o.poll_s)}};
  for (const auto& s : opened.sensors) info.devices.push_back({s->backend(), s->properties()});
  auto run_id = store->begin_run(info);
  if (!run_id) {
    io.err << "wattlab: " << run_id.error().message() << "\n";
    return kExitFailure;
  }
  if (auto st = store->add_domains(*run_id, domains); !st) io.err << "wattlab: " << st.error().message() << "\n";
  std::vector<TimedReading> pending;
  CharacterizeHooks hooks;
  hooks.progress = [&](std::string_view line) { io.err << "wattlab sensors --characterize: " << line << "\n"; };
  hooks.record = [&](std::size_t target, const Reading& r) {
    pending.push_back({static_cast<uint32_t>(target), r});
    if (pending.size() >= 20000) {  // keep memory bounded and the data safe if we are killed
      store->append_readings(*run_id, pending);
      pending.clear();
    }
  };
  const auto result = characterize(targets, clock, co, hooks);
  store->append_readings(*run_id, pending);
  // Where it lands: one window per domain and phase, the numbers as window counts/labels, the
  // whole document as the run tag characterize.json (docs/sensors-characterize.md).
  WindowId wid = 1;
  for (const auto& d : result) {
    if (d.idle.measured) {
      WindowResult w;
      w.id = wid++;
      w.name = "characterize:idle " + d.domain_id;
      w.t_begin_ns = d.idle.t_begin_ns;
      w.t_end_ns = d.idle.t_end_ns;
      w.final = true;
      w.labels = {{"domain", d.domain_id}, {"reading", std::string(to_string(d.idle.power_kind))},
                  {"settled", d.idle.settled ? "yes" : "no"}};
      w.counts = {{"idle_power_w", d.idle.power_w}, {"idle_power_sd_w", d.idle.power_sd_w},
                  {"waited_s", static_cast<double>(d.idle.waited_ns) * 1e-9}};
      if (d.idle.counter_power_w) w.counts["counter_power_w"] = *d.idle.counter_power_w;
      store->add_window(*run_id, w);
    }
    for (const auto& r : d.readings) {
      WindowResult w;
      w.id = wid++;
      w.name = "characterize:reading " + d.domain_id + " " + std::string(to_string(r.kind));
      w.final = true;
      w.labels = {{"domain", d.domain_id}, {"reading", std::string(to_string(r.kind))}};
      if (!r.first_error.empty()) w.labels["first_error"] = r.first_error;
      w.counts = {{"reads", static_cast<double>(r.reads)}, {"failed_reads", static_cast<double>(r.failed_reads)},
                  {"changes", static_cast<double>(r.changes)}};
      if (r.read_cost_ns.n) {
        w.counts["read_cost_median_us"] = r.read_cost_ns.median * 1e-3;
        w.counts["read_cost_p99_us"] = r.read_cost_ns.p99 * 1e-3;
      }
      if (r.update_period_ns.n) {
        w.counts["update_period_median_ms"] = r.update_period_ns.median * 1e-6;
        w.counts["update_period_p10_ms"] = r.update_period_ns.p10 * 1e-6;
        w.counts["update_period_p90_ms"] = r.update_period_ns.p90 * 1e-6;
      }
      if (r.sample_spacing_ns.n) {
        w.counts["sample_spacing_median_ms"] = r.sample_spacing_ns.median * 1e-6;
        w.counts["sample_spacing_p10_ms"] = r.sample_spacing_ns.p10 * 1e-6;
        w.counts["sample_spacing_p90_ms"] = r.sample_spacing_ns.p90 * 1e-6;
        w.counts["buffer_depth_samples"] = static_cast<double>(r.depth_samples);
      }
      store->add_window(*run_id, w);
    }
    if (d.load.ran && d.load.skipped.empty()) {
      WindowResult w;
      w.id = wid++;
      w.name = "characterize:load " + d.domain_id;
      w.t_begin_ns = d.load.t_a_ns;
      w.t_end_ns = d.load.t_b_ns;
      w.final = true;
      DomainEnergy e;
      e.domain_id = d.domain_id;
      e.simulated = d.simulated;
      e.available = true;
      e.energy_j = d.load.counter_j;
      e.mean_power_w = d.load.counter_power_w;
      e.estimator = Estimator::counter;
      for (const auto& a : d.load.rows)
        if (a.kind == ReadingKind::power_instant_w && a.available) {
          e.cross_check_j = a.integrated_j;
          e.cross_check_estimator = Estimator::integrated_power_instant_w;
        }
      w.domains.push_back(e);
      w.labels = {{"domain", d.domain_id}, {"load", d.load.load}, {"load_report", d.load.load_report}};
      for (const auto& a : d.load.rows)
        if (a.available) {
          const std::string k(to_string(a.kind));
          w.counts[k + ".ratio"] = a.ratio;
          w.counts[k + ".diff_pct"] = a.diff_pct;
          w.counts[k + ".uncertainty_pct"] = a.uncertainty_pct;
        }
      store->add_window(*run_id, w);
    }
  }
  const nlohmann::json doc = characterization_to_json(result, opened.simulated(), notes);
  store->set_run_tag(*run_id, "characterize.json", doc.dump());
  store->end_run(*run_id, clock.now_ns(), 0);
  if (opened.simulated()) io.out << "SIMULATED: every number below comes from wattlab-sim, not hardware\n";
  for (const auto& n : notes) io.out << "note: " << n << "\n";
  print_characterization(io.out, result, opened.simulated());
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    f << doc.dump(2) << "\n";
    if (!f) {
      io.err << "wattlab: could not write " << o.json << "\n";
      return kExitFailure;
    }
  }
  io.out << fmt::format("stored as run {} in {} (tag characterize.json, windows characterize:*)\n", *run_id, o.db);
  return kExitOk;
}

int list_sensors(const DeviceOptions& o, Io& io) {
  const OpenedSensors s = open_sensors(o.backend());
  io.out << describe(s);
  for (const auto& sensor : s.sensors) {
    for (const auto& d : sensor->domains()) {
      io.out << fmt::format("{}  {} {}{}  scope {}{}\n", d.id, d.vendor, d.name, d.uuid.empty() ? "" : " (" + d.uuid + ")",
                            d.scope, d.parent.empty() ? "" : ", inside " + d.parent);
      io.out << fmt::format("  gain tolerance ±{:.0f}%, unseen power {:.1f} W; model from {}\n",
                            100 * d.model.gain_tolerance, d.model.unseen_power_w, d.model.source);
      io.out << fmt::format("  {:<24} {:>10} {:>10} {:>10}  {}\n", "reading", "update ms", "window ms", "cost us", "note");
      for (const auto& r : d.model.readings)
        io.out << fmt::format("  {:<24} {:>10.1f} {:>10.1f} {:>10.1f}  {}\n", to_string(r.kind),
                              static_cast<double>(r.update_period_ns) * 1e-6,
                              static_cast<double>(r.averaging_window_ns) * 1e-6,
                              static_cast<double>(r.read_cost_ns) * 1e-3, r.note);
    }
    for (const auto& [k, v] : sensor->properties()) io.out << fmt::format("  {}: {}\n", k, v);
  }
  return s.domain_count() > 0 ? kExitOk : kExitFailure;
}

}  // namespace

void register_sensors(CLI::App& app, Action& action) {
  auto opts = std::make_shared<SensorsOptions>();
  auto* sub = app.add_subcommand("sensors", "List the domains found here and each one's sensor model");
  add_device_options(*sub, opts->dev);
  auto* ch = sub->add_flag("--characterize", opts->characterize,
                           "measure each reading's update period, read cost, buffer spacing, idle power and "
                           "counter/power agreement under a load (docs/sensors-characterize.md)");
  sub->add_option("--load-s", opts->load_s, "characterize: seconds of load for the agreement")
      ->check(CLI::Range(2.0, 600.0))->capture_default_str()->needs(ch);
  sub->add_option("--idle-s", opts->idle_s, "characterize: longest wait, in s, for idle power to settle")
      ->check(CLI::Range(2.0, 600.0))->capture_default_str()->needs(ch);
  sub->add_option("--poll-s", opts->poll_s, "characterize: seconds of back-to-back polling per reading")
      ->check(CLI::Range(0.1, 60.0))->capture_default_str()->needs(ch);
  sub->add_option("--json", opts->json, "characterize: also write the result as JSON")->needs(ch);
  sub->add_option("--db", opts->db, "characterize: SQLite database the result is stored in")
      ->capture_default_str()->needs(ch);
  sub->add_option("--sim-load", opts->sim_load, "characterize, --device sim: the scripted load standing in for the kernel")
      ->capture_default_str()->needs(ch);
  sub->callback([opts, &action] {
    action = [opts](Io& io) { return opts->characterize ? characterize_sensors(*opts, io) : list_sensors(opts->dev, io); };
  });
}

}  // namespace wattlab::cli
