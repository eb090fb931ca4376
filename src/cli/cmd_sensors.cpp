// wattlab sensors: the domains found here and each one's sensor model.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <ostream>

#include "cli.h"
#include "device_options.h"

namespace wattlab::cli {
namespace {

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
  auto opts = std::make_shared<DeviceOptions>();
  auto* sub = app.add_subcommand("sensors", "List the domains found here and each one's sensor model");
  add_device_options(*sub, *opts);
  sub->callback([opts, &action] { action = [opts](Io& io) { return list_sensors(*opts, io); }; });
}

}  // namespace wattlab::cli
