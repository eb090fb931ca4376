// Server-sent events of an OpenAI-compatible stream, parsed as bytes arrive (pure, no I/O).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "infer/request_set.h"

namespace wattlab::infer {

// What the stream said so far. A malformed line (not "data: ...", a data payload that is not JSON
// or lacks "choices"/"usage") ends the request as failed; a comment line (":...") and "event:",
// "id:", "retry:" fields are ignored, as SSE says.
class SseStream {
 public:
  explicit SseStream(Api api) : api_(api) {}
  // Feed bytes; returns how many text-carrying chunks (tokens) the complete lines held.
  int feed(std::string_view bytes);
  bool done() const { return done_; }            // "data: [DONE]" seen
  const std::string& error() const { return error_; }  // non-empty: malformed
  int chunks() const { return chunks_; }
  std::optional<int64_t> usage_completion_tokens() const { return usage_completion_; }
  std::optional<int64_t> usage_prompt_tokens() const { return usage_prompt_; }
  bool finish_seen() const { return finish_seen_; }

 private:
  int line(std::string_view l);
  Api api_;
  std::string buf_;
  bool done_ = false;
  bool finish_seen_ = false;
  std::string error_;
  int chunks_ = 0;
  int lines_ = 0;
  std::optional<int64_t> usage_completion_, usage_prompt_;
};

}  // namespace wattlab::infer
