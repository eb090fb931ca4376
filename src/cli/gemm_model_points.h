// The GEMM study's points CSV (docs/gemm-cli.md, "Points as CSV") read as training points of the
// GEMM model (docs/gemm-model.md, "Which points train it"): the rows it can learn from, and every
// other row with why it is left out.
#pragma once
#include <string>
#include <vector>

#include "wattlab/core/error.h"
#include "lab/gemm_model.h"

namespace wattlab::cli {

struct GemmModelPoints {
  int rows = 0;                             // data rows in the CSV
  std::vector<lab::GemmModelPoint> points;  // the rows the model learns from
  std::vector<std::string> excluded;        // "line N (label): why", one per other row
};

// Errors (invalid_argument, naming `source`): not CSV, a column the model needs missing, a cell
// that is not a number where one is needed (its line and column).
Result<GemmModelPoints> read_gemm_model_points(const std::string& text, const std::string& source);

}  // namespace wattlab::cli
