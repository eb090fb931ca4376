// The request set of a serving benchmark: one JSON object per line (docs/serve-bench.md).
#pragma once
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace wattlab::infer {

enum class Api { chat, completions };

struct BenchRequest {
  std::string id;             // from the file, or "line N"
  Api api = Api::completions;  // chat when the line has "messages", completions when "prompt"
  std::string prompt;          // completions
  std::string messages_json;   // chat: the "messages" array as JSON text
  int max_tokens = 0;
  int input_tokens = 0;        // synthetic requests: the prompt's length in words (0: not known)
};

// Parses JSONL: {"prompt": "..."} or {"messages": [...]}, "max_tokens" (integer >= 1), optional "id".
// Blank lines and lines starting with '#' are skipped. Throws UsageError naming the line.
std::vector<BenchRequest> parse_request_set(std::istream& in, std::string_view source);
std::vector<BenchRequest> load_request_set(const std::string& path);

}  // namespace wattlab::infer
