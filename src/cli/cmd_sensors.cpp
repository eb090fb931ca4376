// wattlab sensors: the domains found here and each one's sensor model; --characterize measures them
// into a recorded run (wattlab::Recording without a meter: characterize() reads the sensors).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <ostream>

#include "cli.h"
#include "device_options.h"
#include "stop_signal.h"
#include "core/units.h"
#include "lab/gpu_load.h"
#include "wattlab/record/recording.h"
#include "report/characterize.h"
#include "report/sensors_text.h"
#include "sensors/characterize.h"
#include "store/characterize_record.h"

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

std::string property(const Sensor& s, const std::string& key) {
  for (const auto& [k, v] : s.properties())
    if (k == key) return v;
  return "";
}

// What each domain is characterized with: the CUDA kernel on an NVML GPU, the scripted load on
// the simulated one, nothing inside another domain or on RAPL (then the reason).
std::vector<CharacterizeTarget> characterize_targets(std::vector<SensorPtr>& sensors, const SensorsOptions& o,
                                                     std::vector<std::unique_ptr<DeviceLoad>>& loads,
                                                     std::vector<std::string>& notes, Io& io) {
  std::vector<CharacterizeTarget> targets;
  for (auto& sensor : sensors) {
    for (std::size_t i = 0; i < sensor->domains().size(); ++i) {
      const Domain& d = sensor->domains()[i];
      CharacterizeTarget t{sensor.get(), i, nullptr, ""};
      if (!d.parent.empty()) {
        t.no_load_reason = "inside " + d.parent + ": the load runs there, and this domain has no energy counter";
      } else if (sensor->backend() == "sim") {
        loads.push_back(make_sim_load(*sensor, i, o.sim_load));
      } else if (sensor->backend() == "nvml") {
        auto k = lab::FmaLoad::open(d.uuid, property(*sensor, d.id + ".pci_bus_id"));
        if (k) loads.push_back(std::move(*k));
        else t.no_load_reason = "no load available: " + k.error().what;
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
    }
  }
  return targets;
}

int characterize_sensors(const SensorsOptions& o, Io& io) {
  CharacterizeOptions co;
  co.load_ns = s_to_ns(o.load_s);
  co.idle_max_ns = s_to_ns(o.idle_s);
  co.poll_ns = s_to_ns(o.poll_s);
  // The simulated GPU runs on a virtual clock (from now on the monotonic clock): fast, deterministic.
  VirtualClock virtual_clock(MonotonicClock::instance().now_ns());
  RecordingOptions ro;
  ro.devices = o.dev.backend();
  const bool sim = o.dev.device == "sim";
  if (sim) ro.devices.clock = &virtual_clock;
  // Idle is idle on the sim too, unless a workload was given: the scripted load comes on top.
  if (sim && ro.devices.sim_workload.empty()) ro.devices.sim_workload = "idle 3600s";
  ro.use_meter = false;  // characterize() reads the sensors itself
  ro.db = o.db;
  ro.command = {"wattlab", "sensors", "--characterize"};
  ro.tags = {{"task", "sensors-characterize"}, {"characterize.load_s", fmt::format("{}", o.load_s)},
             {"characterize.idle_s", fmt::format("{}", o.idle_s)}, {"characterize.poll_s", fmt::format("{}", o.poll_s)}};
  ro.on_note = [&io](std::string_view n) { io.err << "wattlab sensors --characterize: " << n << "\n"; };
  Recording rec(std::move(ro));
  io.err << "wattlab sensors --characterize: " << report::describe_backends(rec.opened());
  if (rec.domain_count() == 0) return kExitFailure;
  const bool simulated = rec.simulated();
  std::vector<std::string> notes;
  if (sim) notes.push_back("SIMULATED: the sim's scripted load '" + o.sim_load + "' stands in for the GPU kernel; "
                           "it runs on a virtual clock, so read costs are the sim's configured costs");
  std::vector<std::unique_ptr<DeviceLoad>> loads;
  const auto targets = characterize_targets(rec.sensors(), o, loads, notes, io);
  rec.start();
  // Ctrl-C or SIGTERM: the run ends with 128 + the signal and what was read so far, then the
  // process ends by the signal as before.
  StopSignal stop([&rec, &io](int sig) { end_by_signal(rec, sig, io.err); });
  CharacterizeHooks hooks;
  hooks.progress = [&](std::string_view line) { io.err << "wattlab sensors --characterize: " << line << "\n"; };
  hooks.record = [&](std::size_t target, const Reading& r) {
    const TimedReading tr{static_cast<uint32_t>(target), r};
    rec.append_readings({&tr, 1});
  };
  const auto result = characterize(targets, rec.clock(), co, hooks);
  for (const auto& w : characterization_windows(result)) rec.store_window(w);
  const nlohmann::json doc = report::characterization_to_json(result, simulated, notes);
  rec.set_tag("characterize.json", doc.dump());
  rec.end(kExitOk);
  if (simulated) io.out << "SIMULATED: every number below comes from wattlab-sim, not hardware\n";
  for (const auto& n : notes) io.out << "note: " << n << "\n";
  report::print_characterization(io.out, result, simulated);
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    f << doc.dump(2) << "\n";
    if (!f) {
      io.err << "wattlab: could not write " << o.json << "\n";
      return kExitFailure;
    }
  }
  io.out << fmt::format("stored as run {} in {} (tag characterize.json, windows characterize:*)\n", rec.run_id(), o.db);
  return kExitOk;
}

int list_sensors(const DeviceOptions& o, Io& io) {
  const OpenedSensors s = open_sensors(o.backend());
  report::print_sensor_list(io.out, s);
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
