// The wattlab command line: one file per subcommand (cmd_<name>.cpp), each with a register
// function that adds its CLI11 subcommand and binds a plain options struct, and a run function
// that takes that struct. Parsing and running are tested apart.
#pragma once
#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace wattlab::cli {

// Exit codes (DESIGN.md): 0 success, 1 runtime failure, 2 bad usage or bad input.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Where a subcommand writes. Tests pass string streams.
struct Io {
  std::ostream& out;
  std::ostream& err;
};

// A subcommand's action, run after a successful parse; returns the exit code.
using Action = std::function<int(Io&)>;

// Each cmd_<name>.cpp defines one of these; cli.cpp calls them in order.
void register_sensors(CLI::App& app, Action& action);
void register_run(CLI::App& app, Action& action);
void register_report(CLI::App& app, Action& action);
void register_diagnose(CLI::App& app, Action& action);
void register_serve(CLI::App& app, Action& action);
void register_monitor(CLI::App& app, Action& action);
void register_infer(CLI::App& app, Action& action);
void register_gemm(CLI::App& app, Action& action);
void register_holdout(CLI::App& app, Action& action);

// Parses argv (without argv[0]) and runs the chosen subcommand.
int run(std::span<const std::string_view> args, Io& io);

}  // namespace wattlab::cli
