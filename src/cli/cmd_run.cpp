// Placeholder until the subcommand lands in this tree; prints that it is not built yet.
#include <CLI/CLI.hpp>
#include <ostream>

#include "cli.h"

namespace wattlab::cli {

void register_run(CLI::App& app, Action& action) {
  auto* sub = app.add_subcommand("run", "(not yet available in this build)");
  sub->callback([&action] {
    action = [](Io& io) {
      io.err << "wattlab: 'run' is not available in this build yet\n";
      return kExitFailure;
    };
  });
}

}  // namespace wattlab::cli
