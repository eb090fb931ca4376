// The GEMM study's points CSV (python/bench/gemm_points_csv.py; docs/gemm-cli.md, "Points as CSV")
// read back into runs, so that `wattlab report --gemm --points FILE` rebuilds the same tables and
// plots as from the store it was exported from. One row is one gemm_point window: run_id,
// window_id, t_begin_ns, t_end_ns, window_s, final, label.* (its labels), count.* (its counts; an
// empty cell: not stored), and the GPU domain's energy_j, uncertainty_j, systematic_j,
// mean_power_w, peak_power_w, available, simulated, readings_used (estimator and issues_json are
// not read back).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/core/error.h"
#include "wattlab/store/run_record.h"

namespace wattlab::report {

// The columns a points CSV must have: the window's identity and edges and every label the
// GemmPointRecord codec needs.
const std::vector<std::string>& gemm_points_csv_required_columns();

// One RunRecord per run_id (ascending), its windows in row order, each row decoded through
// GemmPointRecord (so a point that would not decode from the store does not decode here either).
// A run is simulated when any of its rows says simulated=1 (the domain's flag). Errors (parse),
// naming `source`: a required column missing, or a bad row (its line and what is wrong: the number
// of fields, a value that is not a number, a duplicate (run_id, window_id), a label that does not
// decode).
Result<std::vector<RunRecord>> read_gemm_points_csv(std::string_view text, const std::string& source,
                                                    const std::string& domain_id = "gpu:0");

// The file at `path`; a file that cannot be read is an error (not_found).
Result<std::vector<RunRecord>> load_gemm_points_csv(const std::string& path);

}  // namespace wattlab::report
