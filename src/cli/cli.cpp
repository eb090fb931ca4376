#include "cli.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <ostream>
#include <vector>

#include "build_commit.h"
#include "wattlab/core/error.h"

namespace wattlab::cli {

int run(std::span<const std::string_view> args, Io& io) {
  CLI::App app{"wattlab: where the joules go on your GPUs", "wattlab"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "wattlab 0.1.0 (commit " WATTLAB_BUILD_COMMIT ")");
  Action action;
  register_sensors(app, action);
  register_run(app, action);
  register_report(app, action);
  register_diagnose(app, action);
  register_serve(app, action);
  register_monitor(app, action);
  register_infer(app, action);
  register_gemm(app, action);
  register_holdout(app, action);

  // CLI11 wants argv order reversed for its vector overload.
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::CallForHelp& e) {
    io.out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp& e) {
    io.out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    io.out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    io.err << "wattlab: " << e.what() << "\n";
    io.err << "Run 'wattlab --help' for usage.\n";
    return kExitUsage;
  }
  if (!action) {
    io.err << "wattlab: no subcommand chosen\n";
    return kExitUsage;
  }
  try {
    return action(io);
  } catch (const UsageError& e) {
    io.err << "wattlab: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    io.err << "wattlab: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace wattlab::cli
