// What one streamed request did, on the monotonic clock the meter uses.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wattlab::infer {

struct RequestTimeline {
  std::size_t index = 0;    // position in the request set
  std::string id;
  bool ok = false;          // false: failed, `error` says why; excluded from every statistic
  std::string error;        // "HTTP 500", "disconnected mid-stream after 3 chunks", ...
  int http_status = 0;
  int64_t t_send_ns = 0;
  int64_t t_first_token_ns = 0;  // first chunk carrying text
  int64_t t_finish_ns = 0;       // end of the stream ([DONE] or the body's end)
  std::vector<int64_t> token_t_ns;  // arrival of every chunk carrying text (one output token each)
  std::optional<int64_t> usage_completion_tokens;  // the server's own count, when it sent usage
  std::optional<int64_t> usage_prompt_tokens;

  std::size_t output_tokens() const { return token_t_ns.size(); }
};

}  // namespace wattlab::infer
