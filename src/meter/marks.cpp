// Marks protocol: parsing one line, and the collector that turns marks into windows.
#include "meter/marks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace wattlab::marks {
namespace {

using nlohmann::json;

Error bad(std::string what) { return Error{ErrorKind::parse, std::move(what), "see docs/marks.md for the protocol"}; }

// A label or tag value: strings as they are, numbers and booleans as JSON writes them.
std::optional<std::string> as_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return std::nullopt;
}

std::optional<Error> read_text_map(const json& j, const char* field, std::map<std::string, std::string>& out) {
  if (!j.contains(field)) return std::nullopt;
  const json& m = j[field];
  if (!m.is_object()) return bad(fmt::format("'{}' must be an object of strings or numbers", field));
  for (const auto& [k, v] : m.items()) {
    if (k.empty() || k.rfind("marks.", 0) == 0)
      return bad(fmt::format("'{}' key '{}' is empty or reserved (keys under 'marks.' are wattlab's)", field, k));
    auto t = as_text(v);
    if (!t) return bad(fmt::format("'{}.{}' must be a string, number or boolean, got {}", field, k, v.dump()));
    out[k] = *t;
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(Op op) {
  switch (op) {
    case Op::open: return "open";
    case Op::close: return "close";
    case Op::count: return "count";
    case Op::tag: return "tag";
  }
  return "?";
}

Result<Mark> parse_mark(std::string_view line) {
  if (line.size() > kMaxLineBytes) return bad(fmt::format("line longer than {} bytes", kMaxLineBytes));
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not a JSON object (invalid JSON)");
  if (!j.is_object()) return bad("not a JSON object");
  Mark m;
  if (!j.contains("op") || !j["op"].is_string()) return bad("missing string field 'op' (open, close, count or tag)");
  const std::string op = j["op"].get<std::string>();
  if (op == "open") m.op = Op::open;
  else if (op == "close") m.op = Op::close;
  else if (op == "count") m.op = Op::count;
  else if (op == "tag") m.op = Op::tag;
  else return bad(fmt::format("unknown op '{}' (accepted: open, close, count, tag)", op));
  if (j.contains("name")) {
    if (!j["name"].is_string() || j["name"].get<std::string>().empty() || j["name"].get<std::string>().size() > 200)
      return bad("'name' must be a non-empty string of at most 200 bytes");
    m.name = j["name"].get<std::string>();
  }
  if ((m.op == Op::open || m.op == Op::close) && m.name.empty()) return bad(fmt::format("'{}' needs a 'name'", op));
  if (j.contains("t_ns")) {
    const json& t = j["t_ns"];
    if (!t.is_number_integer() || t.get<int64_t>() < 0)
      return bad(fmt::format("'t_ns' must be a non-negative integer (CLOCK_MONOTONIC ns), got {}", t.dump()));
    m.t_ns = t.get<int64_t>();
  }
  if (j.contains("counts")) {
    const json& c = j["counts"];
    if (!c.is_object()) return bad("'counts' must be an object of numbers");
    for (const auto& [k, v] : c.items()) {
      if (k.empty()) return bad("'counts' has an empty key");
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
        return bad(fmt::format("count '{}' must be a finite number >= 0, got {}", k, v.dump()));
      m.counts[k] = v.get<double>();
    }
  }
  if (m.op == Op::count && m.counts.empty()) return bad("'count' needs a non-empty 'counts' object");
  if (auto e = read_text_map(j, "labels", m.labels)) return *e;
  if (m.op == Op::tag) {
    auto& dest = m.name.empty() ? m.tags : m.labels;
    if (auto e = read_text_map(j, "tags", dest)) return *e;
    if (dest.empty()) return bad("'tag' needs a non-empty 'tags' object");
  }
  return m;
}

std::map<std::string, std::string> MarksReport::as_run_tags() const {
  std::map<std::string, std::string> t = run_tags;
  t["marks.lines"] = std::to_string(lines);
  t["marks.malformed"] = std::to_string(malformed);
  t["marks.windows"] = std::to_string(windows);
  t["marks.unclosed"] = std::to_string(unclosed);
  t["marks.arrival_stamped"] = std::to_string(arrival_stamped);
  if (!malformed_examples.empty()) {
    std::string s;
    for (const auto& e : malformed_examples) s += (s.empty() ? "" : " | ") + e;
    t["marks.malformed_first"] = s;
  }
  return t;
}

MarkCollector::MarkCollector(int64_t run_start_ns, int64_t future_slack_ns)
    : run_start_ns_(run_start_ns), future_slack_ns_(future_slack_ns) {}

void MarkCollector::reject(const std::string& why) {
  ++report_.malformed;
  if (report_.malformed_examples.size() < 5) report_.malformed_examples.push_back(fmt::format("line {}: {}", report_.lines, why));
}

std::optional<int64_t> MarkCollector::stamp(const Mark& m, int64_t arrival_t_ns, bool& from_client) {
  from_client = m.t_ns.has_value();
  if (!m.t_ns) {
    ++report_.arrival_stamped;
    return arrival_t_ns;
  }
  const int64_t t = *m.t_ns;
  if (t < run_start_ns_ || t > arrival_t_ns + future_slack_ns_) {
    reject(fmt::format("t_ns {} lies outside the run ({} .. {}): not CLOCK_MONOTONIC ns? (time.monotonic_ns() in "
                       "Python, clock_gettime(CLOCK_MONOTONIC) in C)",
                       t, run_start_ns_, arrival_t_ns));
    return std::nullopt;
  }
  return t;
}

MarkedWindow MarkCollector::complete(Open o, int64_t t_end_ns, bool from_client) {
  (from_client ? o.client_time : o.arrival_time) = true;
  o.w.t_end_ns = t_end_ns;
  o.w.labels[kLabelTimeSource] = o.client_time && o.arrival_time ? "client+arrival" : o.client_time ? "client" : "arrival";
  ++report_.windows;
  return std::move(o.w);
}

std::vector<MarkedWindow> MarkCollector::feed(std::string_view line, int64_t arrival_t_ns) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.empty()) return {};
  ++report_.lines;
  auto parsed = parse_mark(line);
  if (!parsed) {
    reject(parsed.error().what);
    return {};
  }
  Mark& m = *parsed;
  // The innermost open window of that name, or open_.end().
  auto find = [&](const std::string& name) {
    for (auto it = open_.rbegin(); it != open_.rend(); ++it)
      if (it->w.name == name) return std::prev(it.base());
    return open_.end();
  };
  auto merge = [](MarkedWindow& w, const Mark& mk) {
    for (const auto& [k, v] : mk.counts) w.counts[k] += v;
    for (const auto& [k, v] : mk.labels) w.labels[k] = v;
  };
  // A count that would add up past double's range: the line is rejected, the window keeps its sum.
  auto overflows = [&](const MarkedWindow& w) {
    for (const auto& [k, v] : m.counts)
      if (auto it = w.counts.find(k); it != w.counts.end() && !std::isfinite(it->second + v)) {
        reject(fmt::format("count '{}' of window '{}' would add up past {:g}", k, w.name, it->second));
        return true;
      }
    return false;
  };
  switch (m.op) {
    case Op::open: {
      bool client = false;
      auto t = stamp(m, arrival_t_ns, client);
      if (!t) return {};
      Open o;
      o.w.name = m.name;
      o.w.t_begin_ns = *t;
      (client ? o.client_time : o.arrival_time) = true;
      merge(o.w, m);
      open_.push_back(std::move(o));
      return {};
    }
    case Op::close: {
      auto it = find(m.name);
      if (it == open_.end()) {
        reject(fmt::format("close of window '{}', which is not open", m.name));
        return {};
      }
      bool client = false;
      auto t = stamp(m, arrival_t_ns, client);
      if (!t) return {};
      if (*t < it->w.t_begin_ns) {
        reject(fmt::format("close of '{}' at t_ns {} is before its open at {}", m.name, *t, it->w.t_begin_ns));
        return {};
      }
      if (overflows(it->w)) return {};
      Open o = std::move(*it);
      open_.erase(it);
      merge(o.w, m);
      return {complete(std::move(o), *t, client)};
    }
    case Op::count: {
      if (m.t_ns) {
        bool client = false;
        if (!stamp(m, arrival_t_ns, client)) return {};
      }
      if (!m.name.empty()) {
        auto it = find(m.name);
        if (it == open_.end()) {
          reject(fmt::format("count for window '{}', which is not open", m.name));
          return {};
        }
        if (overflows(it->w)) return {};
        merge(it->w, m);
      } else {
        if (open_.empty()) {
          reject("count without a name while no window is open");
          return {};
        }
        for (const auto& o : open_)
          if (overflows(o.w)) return {};
        for (auto& o : open_) merge(o.w, m);  // an unnamed count belongs to every open window
      }
      return {};
    }
    case Op::tag: {
      if (m.name.empty()) {
        for (const auto& [k, v] : m.tags) report_.run_tags[k] = v;
        return {};
      }
      auto it = find(m.name);
      if (it == open_.end()) {
        reject(fmt::format("tag for window '{}', which is not open", m.name));
        return {};
      }
      if (overflows(it->w)) return {};
      merge(it->w, m);
      return {};
    }
  }
  return {};
}

std::vector<MarkedWindow> MarkCollector::finish(int64_t t_end_ns) {
  std::vector<MarkedWindow> out;
  for (auto& o : open_) {
    o.w.labels[kLabelUnclosed] = "left open by the command; closed by wattlab when it exited";
    ++report_.unclosed;
    // The end is wattlab's own stamp: count it as arrival time.
    const int64_t end = std::max(t_end_ns, o.w.t_begin_ns);
    out.push_back(complete(std::move(o), end, false));
  }
  open_.clear();
  return out;
}

}  // namespace wattlab::marks
