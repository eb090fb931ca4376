#include "report/format.h"

#include <array>

namespace wattlab::report {

namespace {
constexpr std::array<Format, 4> kFormats = {Format::text, Format::json, Format::markdown, Format::html};
}  // namespace

std::string_view format_name(Format f) {
  switch (f) {
    case Format::text: return "text";
    case Format::json: return "json";
    case Format::markdown: return "md";
    case Format::html: return "html";
  }
  return "text";
}

std::optional<Format> parse_format(std::string_view name) {
  for (Format f : kFormats)
    if (format_name(f) == name) return f;
  return std::nullopt;
}

}  // namespace wattlab::report
