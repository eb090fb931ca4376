// The exported run JSON. Its shape is a promise to users: docs/json-output.md describes each key.
#include "report/run_json.h"

#include "store/column_json.h"

namespace wattlab::report {
namespace {

using store_json::Json;

template <class T>
Json opt(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json telemetry_json(const TelemetrySummary& t) {
  Json j = Json::object();
  for (const auto& f : store_json::kTelemetryFields) j[f.name] = opt(t.*(f.member));
  j[store_json::kClockEventReasonsField] = opt(t.clock_event_reasons_seen);
  return j;
}

// An unavailable estimate prints null, never 0 J: `issues` says why.
Json domain_energy_json(const DomainEnergy& d) {
  auto when = [&](double v) { return d.available ? Json(v) : Json(nullptr); };
  Json cross = nullptr;
  if (d.cross_check_j) cross = Json{{"energy_j", *d.cross_check_j}, {"estimator", to_string(d.cross_check_estimator)}};
  return Json{{"domain_id", d.domain_id},
              {"simulated", d.simulated},
              {"available", d.available},
              {"energy_j", when(d.energy_j)},
              {"uncertainty_j", when(d.uncertainty_j)},
              {"systematic_j", when(d.systematic_j)},
              {"estimator", to_string(d.estimator)},
              {"mean_power_w", when(d.mean_power_w)},
              {"peak_power_w", when(d.peak_power_w)},
              {"cross_check", std::move(cross)},
              {"readings_used", d.readings_used},
              {"issues", store_json::strings_to_json(d.issues)},
              {"telemetry", telemetry_json(d.telemetry)}};
}

Json window_json(const WindowResult& w) {
  Json domains = Json::array();
  for (const auto& d : w.domains) domains.push_back(domain_energy_json(d));
  return Json{{"id", w.id},
              {"name", w.name},
              {"t_begin_ns", w.t_begin_ns},
              {"t_end_ns", w.t_end_ns},
              {"dur_s", w.dur_s()},
              {"final", w.final},
              {"counts", w.counts},
              {"labels", w.labels},
              {"domains", std::move(domains)}};
}

Json domain_json(std::size_t index, const Domain& d) {
  return Json{{"index", index},
              {"id", d.id},
              {"vendor", d.vendor},
              {"name", d.name},
              {"uuid", d.uuid},
              {"scope", d.scope},
              {"parent", d.parent.empty() ? Json(nullptr) : Json(d.parent)},
              {"simulated", d.simulated},
              {"sensor_model", store_json::sensor_model_to_json(d.model)}};
}

Json event_json(const MeterEvent& e) {
  return Json{{"t_ns", e.t_ns}, {"domain_id", e.domain_id}, {"reading", e.reading}, {"kind", e.kind},
              {"message", e.message}};
}

}  // namespace

nlohmann::ordered_json run_to_json(const RunRecord& run) {
  Json domains = Json::array();
  for (std::size_t i = 0; i < run.domains.size(); ++i) domains.push_back(domain_json(i, run.domains[i]));
  Json windows = Json::array();
  for (const auto& w : run.windows) windows.push_back(window_json(w));
  Json events = Json::array();
  for (const auto& e : run.events) events.push_back(event_json(e));
  const RunInfo& info = run.info;
  return Json{{"schema", kRunJsonSchema},
              {"run_id", run.run_id},
              {"wattlab_version", run.wattlab_version},
              {"simulated", info.simulated},
              {"state", std::string(run.state())},
              {"command", store_json::strings_to_json(info.command)},
              {"host", info.host},
              {"start_utc", info.start_utc},
              {"start_t_ns", info.start_t_ns},
              {"end_t_ns", opt(run.end_t_ns)},
              {"dur_s", opt(run.dur_s())},
              {"exit_status", opt(run.exit_status)},
              {"device_selection", info.device_selection},
              {"devices", store_json::devices_to_json(info.devices)},
              {"tags", info.tags},
              {"domains", std::move(domains)},
              {"windows", std::move(windows)},
              {"events", std::move(events)},
              {"counts",
               Json{{"readings", run.reading_count},
                    {"telemetry", run.telemetry_count},
                    {"windows", run.windows.size()},
                    {"events", run.events.size()}}}};
}

std::string run_to_json_string(const RunRecord& run, int indent) {
  // replace: a malformed UTF-8 string (a command line argument) must not abort the export.
  return run_to_json(run).dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace wattlab::report
