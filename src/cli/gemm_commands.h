// The subcommands of `wattlab gemm` (cmd_gemm.cpp adds the parent): one file each.
#pragma once
#include "cli.h"

namespace wattlab::cli {

void register_gemm_run(CLI::App& gemm, Action& action);     // cmd_gemm_run.cpp
void register_gemm_sweep(CLI::App& gemm, Action& action);   // cmd_gemm_sweep.cpp: sweep and study
void register_gemm_check(CLI::App& gemm, Action& action);   // cmd_gemm_check.cpp
void register_gemm_fit(CLI::App& gemm, Action& action);     // cmd_gemm_fit.cpp
void register_gemm_predict(CLI::App& gemm, Action& action); // cmd_gemm_predict.cpp

}  // namespace wattlab::cli
