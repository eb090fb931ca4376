// Placeholder until the subcommand lands in this tree; prints that it is not built yet.
#include <CLI/CLI.hpp>
#include <ostream>

#include "cli.h"

namespace wattlab::cli {

void register_diagnose(CLI::App& app, Action& action) {
  auto* sub = app.add_subcommand("diagnose", "(not yet available in this build)");
  sub->callback([&action] {
    action = [](Io& io) {
      io.err << "wattlab: 'diagnose' is not available in this build yet\n";
      return kExitFailure;
    };
  });
}

}  // namespace wattlab::cli
