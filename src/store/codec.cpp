#include "codec.h"

#include <utility>

namespace wattlab::store_json {

Json strings_to_json(const std::vector<std::string>& strings) {
  Json j = Json::array();
  for (const auto& s : strings) j.push_back(s);
  return j;
}

Json devices_to_json(const std::vector<DeviceProperties>& devices) {
  Json j = Json::array();
  for (const auto& d : devices) {
    Json props = Json::object();
    for (const auto& [key, value] : d.properties) props[key] = value;
    j.push_back(Json{{"backend", d.backend}, {"properties", std::move(props)}});
  }
  return j;
}

Json sensor_model_to_json(const SensorModel& model) {
  Json readings = Json::array();
  for (const auto& r : model.readings) {
    readings.push_back(Json{{"kind", std::string(to_string(r.kind))},
                            {"unit", std::string(unit_of(r.kind))},
                            {"update_period_ns", r.update_period_ns},
                            {"averaging_window_ns", r.averaging_window_ns},
                            {"resolution", r.resolution},
                            {"read_cost_ns", r.read_cost_ns},
                            {"max_safe_interval_ns", r.max_safe_interval_ns},
                            {"note", r.note}});
  }
  return Json{{"readings", std::move(readings)},
              {"gain_tolerance", model.gain_tolerance},
              {"unseen_power_w", model.unseen_power_w},
              {"source", model.source}};
}

}  // namespace wattlab::store_json

namespace wattlab::store_detail {
namespace {

Error bad_column(std::string_view column, std::string_view why) {
  return Error{ErrorKind::parse, "stored column " + std::string(column) + " is malformed: " + std::string(why),
               "the database was changed by something other than wattlab; re-record the run"};
}

// nlohmann reports type mismatches with exceptions; they stop here, as Errors.
template <class T, class F>
Result<T> decode(std::string_view text, std::string_view column, F&& f) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad_column(column, "not JSON");
  try {
    return f(j);
  } catch (const Json::exception& e) {
    return bad_column(column, e.what());
  }
}

}  // namespace

Result<std::vector<std::string>> strings_from_json(std::string_view text, std::string_view column) {
  return decode<std::vector<std::string>>(text, column, [](const Json& j) {
    return j.get<std::vector<std::string>>();
  });
}

Result<EstimatorUsed> estimator_from_column(std::string_view text, std::string_view column) {
  if (auto e = parse_estimator(text)) return *e;
  return bad_column(column, "unknown estimator '" + std::string(text) + "'");
}

Result<std::vector<DeviceProperties>> devices_from_json(std::string_view text, std::string_view column) {
  return decode<std::vector<DeviceProperties>>(text, column, [](const Json& j) {
    std::vector<DeviceProperties> out;
    for (const auto& d : j) {
      DeviceProperties p;
      p.backend = d.at("backend").get<std::string>();
      for (const auto& [key, value] : d.at("properties").items()) p.properties.emplace_back(key, value.get<std::string>());
      out.push_back(std::move(p));
    }
    return out;
  });
}

Result<SensorModel> sensor_model_from_json(std::string_view text, std::string_view column) {
  return decode<SensorModel>(text, column, [column](const Json& j) -> Result<SensorModel> {
    SensorModel m;
    for (const auto& r : j.at("readings")) {
      auto kind_name = r.at("kind").get<std::string>();
      auto kind = reading_kind_from_string(kind_name);
      if (!kind) return bad_column(column, "unknown reading kind \"" + kind_name + "\"");
      ReadingModel rm;
      rm.kind = *kind;
      rm.update_period_ns = r.at("update_period_ns").get<int64_t>();
      rm.averaging_window_ns = r.at("averaging_window_ns").get<int64_t>();
      rm.resolution = r.at("resolution").get<double>();
      rm.read_cost_ns = r.at("read_cost_ns").get<int64_t>();
      rm.max_safe_interval_ns = r.at("max_safe_interval_ns").get<int64_t>();
      rm.note = r.at("note").get<std::string>();
      m.readings.push_back(std::move(rm));
    }
    m.gain_tolerance = j.at("gain_tolerance").get<double>();
    m.unseen_power_w = j.at("unseen_power_w").get<double>();
    m.source = j.at("source").get<std::string>();
    return m;
  });
}

}  // namespace wattlab::store_detail
