// wattlab gemm run|sweep|study|check|fit|predict: the GEMM input-power lab (docs/gemm-cli.md).
#include <CLI/CLI.hpp>

#include "cli.h"
#include "gemm_commands.h"

namespace wattlab::cli {

void register_gemm(CLI::App& app, Action& action) {
  auto* gemm = app.add_subcommand("gemm", "GEMM energy vs. input data: one point, sweeps, the study, accuracy check, the energy model");
  gemm->require_subcommand(1);
  register_gemm_run(*gemm, action);
  register_gemm_sweep(*gemm, action);
  register_gemm_check(*gemm, action);
  register_gemm_fit(*gemm, action);
  register_gemm_predict(*gemm, action);
}

}  // namespace wattlab::cli
