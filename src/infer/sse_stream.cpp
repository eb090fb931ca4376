#include "infer/sse_stream.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace wattlab::infer {

int SseStream::feed(std::string_view bytes) {
  if (!error_.empty() || done_) return 0;
  buf_.append(bytes);
  int tokens = 0;
  std::size_t start = 0;
  for (;;) {
    const auto nl = buf_.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view l(buf_.data() + start, nl - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    tokens += line(l);
    start = nl + 1;
    if (!error_.empty() || done_) break;
  }
  buf_.erase(0, start);
  return tokens;
}

int SseStream::line(std::string_view l) {
  ++lines_;
  if (l.empty() || l.front() == ':') return 0;
  for (std::string_view f : {"event:", "id:", "retry:"})
    if (l.substr(0, f.size()) == f) return 0;
  if (l.substr(0, 5) != "data:") {
    error_ = fmt::format("malformed SSE line {}: '{}'", lines_, std::string(l.substr(0, 80)));
    return 0;
  }
  std::string_view payload = l.substr(5);
  if (!payload.empty() && payload.front() == ' ') payload.remove_prefix(1);
  if (payload == "[DONE]") {
    done_ = true;
    return 0;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(payload);
  } catch (const nlohmann::json::exception&) {
    error_ = fmt::format("malformed SSE data on line {}: not JSON: '{}'", lines_, std::string(payload.substr(0, 80)));
    return 0;
  }
  if (!j.is_object()) {
    error_ = fmt::format("malformed SSE data on line {}: not a JSON object", lines_);
    return 0;
  }
  if (j.contains("error")) {
    error_ = "server error in stream: " + j["error"].dump().substr(0, 200);
    return 0;
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    if (auto c = u->find("completion_tokens"); c != u->end() && c->is_number_integer()) usage_completion_ = c->get<int64_t>();
    if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer()) usage_prompt_ = p->get<int64_t>();
  }
  auto ch = j.find("choices");
  if (ch == j.end() || !ch->is_array()) {
    if (j.contains("usage")) return 0;  // the usage-only chunk of stream_options.include_usage
    error_ = fmt::format("malformed SSE data on line {}: no \"choices\"", lines_);
    return 0;
  }
  int tokens = 0;
  for (const auto& c : *ch) {
    if (!c.is_object()) continue;
    if (auto fr = c.find("finish_reason"); fr != c.end() && !fr->is_null()) finish_seen_ = true;
    const nlohmann::json* text = nullptr;
    if (api_ == Api::chat) {
      if (auto d = c.find("delta"); d != c.end() && d->is_object())
        if (auto t = d->find("content"); t != d->end()) text = &*t;
    } else if (auto t = c.find("text"); t != c.end()) {
      text = &*t;
    }
    // A chunk carrying non-empty text is one output token, as the study counts.
    if (text && text->is_string() && !text->get_ref<const std::string&>().empty()) ++tokens;
  }
  chunks_ += tokens;
  return tokens;
}

}  // namespace wattlab::infer
