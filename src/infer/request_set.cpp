#include "infer/request_set.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "wattlab/core/error.h"

namespace wattlab::infer {

std::vector<BenchRequest> parse_request_set(std::istream& in, std::string_view source) {
  std::vector<BenchRequest> out;
  std::string line;
  int no = 0;
  auto bad = [&](const std::string& why) {
    return UsageError(fmt::format("{} line {}: {} (expected {{\"prompt\": \"...\" or \"messages\": [...], "
                                  "\"max_tokens\": N, optional \"id\"}}; docs/serve-bench.md)",
                                  source, no, why));
  };
  while (std::getline(in, line)) {
    ++no;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw bad(fmt::format("not JSON ({})", e.what()));
    }
    if (!j.is_object()) throw bad("not a JSON object");
    BenchRequest r;
    const bool has_prompt = j.contains("prompt"), has_messages = j.contains("messages");
    if (has_prompt == has_messages) throw bad("needs exactly one of \"prompt\" and \"messages\"");
    if (has_prompt) {
      if (!j["prompt"].is_string()) throw bad("\"prompt\" is not a string");
      r.api = Api::completions;
      r.prompt = j["prompt"].get<std::string>();
    } else {
      const auto& m = j["messages"];
      if (!m.is_array() || m.empty()) throw bad("\"messages\" is not a non-empty array");
      for (const auto& msg : m)
        if (!msg.is_object() || !msg.contains("role") || !msg.contains("content"))
          throw bad("each message needs \"role\" and \"content\"");
      r.api = Api::chat;
      r.messages_json = m.dump();
    }
    if (!j.contains("max_tokens") || !j["max_tokens"].is_number_integer() || j["max_tokens"].get<int64_t>() < 1 ||
        j["max_tokens"].get<int64_t>() > 10'000'000)
      throw bad("\"max_tokens\" must be an integer >= 1");
    r.max_tokens = j["max_tokens"].get<int>();
    if (j.contains("id")) {
      if (j["id"].is_string()) r.id = j["id"].get<std::string>();
      else if (j["id"].is_number_integer()) r.id = std::to_string(j["id"].get<int64_t>());
      else throw bad("\"id\" is neither a string nor an integer");
    } else {
      r.id = fmt::format("line {}", no);
    }
    out.push_back(std::move(r));
  }
  if (out.empty()) throw UsageError(fmt::format("{}: no requests (one JSON object per line)", source));
  return out;
}

std::vector<BenchRequest> load_request_set(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw UsageError(fmt::format("--requests {}: cannot open the file", path));
  return parse_request_set(f, path);
}

}  // namespace wattlab::infer
