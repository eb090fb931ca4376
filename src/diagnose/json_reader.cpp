// Reader for the ML.ENERGY leaderboard task files (public/data/tasks/<task>.json).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "row_parser.h"
#include "wattlab/core/error.h"
#include "diagnose/readers.h"

namespace wattlab::diagnose {

std::string read_text_file(const std::string& path);  // csv_reader.cpp

Dataset parse_leaderboard_json(std::string_view text, const std::string& source) {
  const std::string name = std::filesystem::path(source).filename().string();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("{}: not valid JSON at byte {}: {}", source, e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number beyond double's range
    throw UsageError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  if (!doc.is_object())
    throw UsageError(fmt::format("{}: expected a leaderboard task object {{task, configurations: [...]}}, got {}",
                                 source, doc.type_name()));
  if (!doc.contains("configurations") || !doc["configurations"].is_array())
    throw UsageError(fmt::format("{}: field 'configurations' is missing or not an array", source));
  std::string task;
  if (doc.contains("task")) {
    if (!doc["task"].is_string()) throw UsageError(fmt::format("{}: field 'task' is not a string", source));
    task = doc["task"].get<std::string>();
  } else {
    task = std::filesystem::path(source).stem().string();
  }
  std::string arch;
  if (doc.contains("architecture") && doc["architecture"].is_string()) arch = doc["architecture"].get<std::string>();

  std::vector<ConfigRecord> rows;
  const auto& cfgs = doc["configurations"];
  rows.reserve(cfgs.size());
  for (std::size_t i = 0; i < cfgs.size(); ++i) {
    auto r = detail::parse_row(cfgs[i], fmt::format("{}: row {} (configurations[{}])", source, i, i), arch);
    r.source = source;
    r.row_index = i;
    r.task = task;
    rows.push_back(std::move(r));
  }
  Dataset d = make_dataset(source, fmt::format("ML.ENERGY leaderboard v3, {}", name), task, std::move(rows));
  if (doc.contains("task_display_name") && doc["task_display_name"].is_string())
    d.task_display_name = doc["task_display_name"].get<std::string>();
  return d;
}

Dataset read_leaderboard_json(const std::string& path) { return parse_leaderboard_json(read_text_file(path), path); }

}  // namespace wattlab::diagnose
