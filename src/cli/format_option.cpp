#include "format_option.h"

#include <CLI/CLI.hpp>
#include <algorithm>

namespace wattlab::cli {
namespace {

// "diagnose summary": the subcommand's words under the program's name.
std::string command_path(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a && a->get_parent(); a = a->get_parent())
    path = path.empty() ? a->get_name() : a->get_name() + " " + path;
  return path;
}

}  // namespace

std::string format_list(const std::vector<report::Format>& formats) {
  std::string s;
  for (std::size_t i = 0; i < formats.size(); ++i) {
    if (i > 0) s += i + 1 == formats.size() ? " or " : ", ";
    s += report::format_name(formats[i]);
  }
  return s;
}

CLI::Option* add_format_option(CLI::App* app, FormatChoice& choice, const std::vector<report::Format>& allowed,
                               const std::string& note) {
  const bool has_json = std::find(allowed.begin(), allowed.end(), report::Format::json) != allowed.end();
  // Defined before --format: CLI11 runs option callbacks in definition order, so --format sees it.
  if (has_json)
    app->add_flag_callback(
        "--json",
        [&choice] {
          choice.format = report::Format::json;
          choice.given = true;
        },
        "JSON output: short for --format json");
  std::string help = "output format: " + format_list(allowed);
  help += " (default " + std::string(report::format_name(choice.format)) + ")";
  if (!note.empty()) help += "; " + note;
  auto* opt = app->add_option_function<std::string>(
      "--format",
      [&choice, allowed, app](const std::string& name) {
        const auto f = report::parse_format(name);
        if (!f || std::find(allowed.begin(), allowed.end(), *f) == allowed.end())
          throw CLI::ValidationError("--format", "'" + name + "' is not a format of '" + command_path(app) +
                                                     "'; give " + format_list(allowed));
        if (choice.given && *f != choice.format)
          throw CLI::ValidationError("--format", "'" + name + "' contradicts --json (short for --format json); give one");
        choice.format = *f;
        choice.given = true;
      },
      help);
  opt->type_name("FORMAT");
  return opt;
}

}  // namespace wattlab::cli
