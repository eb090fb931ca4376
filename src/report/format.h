// The output formats of wattlab's reports: one renderer per format (text for the terminal, JSON,
// Markdown, a self-contained HTML page). Commands pick one with `--format NAME` (src/cli/format_option.h).
#pragma once
#include <optional>
#include <string_view>

namespace wattlab::report {

enum class Format { text, json, markdown, html };

// The name `--format` takes: "text", "json", "md", "html".
std::string_view format_name(Format f);

// The format of a `--format` name (exactly one of the names above); nullopt for anything else.
std::optional<Format> parse_format(std::string_view name);

}  // namespace wattlab::report
