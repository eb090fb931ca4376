// The --format convention of the commands that print reports, in one place:
//   --format NAME   one of the command's renderers (report::Format): text, json, md, html
//   --json          short for --format json, registered when the command has JSON
// A command declares which formats it has; a name outside them is a parse error (exit 2) that
// names the value and lists the accepted ones, and so is --json together with another --format.
//
// Use (a command's register function, its options struct holding a FormatChoice):
//   add_format_option(sub, opts->format, {report::Format::text, report::Format::json});
//   ... later, in the action: if (opts->format.format == report::Format::json) ...
#pragma once
#include <string>
#include <vector>

#include "report/format.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace wattlab::cli {

struct FormatChoice {
  report::Format format = report::Format::text;  // the command's default until the command line picks one
  bool given = false;                              // --format or --json was on the command line
};

// Registers --format on `app` (and --json when `allowed` has json), writing into `choice`, which
// must outlive the parse. choice.format as it is now is the default --help names; `note` is appended
// to --format's description ("with --gemm: text or md"). Returns the --format option.
CLI::Option* add_format_option(CLI::App* app, FormatChoice& choice, const std::vector<report::Format>& allowed,
                               const std::string& note = "");

// "text, json or md": the names of `formats`, for messages.
std::string format_list(const std::vector<report::Format>& formats);

}  // namespace wattlab::cli
