// Multiplicative decomposition of the energy ratio of two configurations
// (docs/joules-framework.md §4): E_resp = L_out x P x ITL / B_eff x rho, so
//   E_b / E_a = (L_b/L_a) x (P_b/P_a) x (ITL_b/ITL_a) / (Beff_b/Beff_a) x (rho_b/rho_a).
// rho = measured E_tok / (P x ITL / B_eff) is the share of work outside steady decode.
// Diffusion: E_gen = P x batch latency / batch (exact), so the factors are P, latency, 1/batch and
// a residual that is 1 up to rounding.
#pragma once
#include <string>
#include <vector>

#include "diagnose/records.h"

namespace wattlab::diagnose {

struct Factor {
  std::string name;      // "output length", "power", "median ITL", "1 / batch", "residual rho"
  std::string field;     // leaderboard field behind it ("avg_output_len", ...)
  double value_a = 0;    // the term in config a (in its unit)
  double value_b = 0;
  std::string unit;
  double ratio = 0;      // multiplicative contribution to E_b / E_a
  double log_share = 0;  // ln(ratio) / ln(total), the share of the log change (0 when total = 1)
};

struct Decomposition {
  const ConfigRecord* a = nullptr;
  const ConfigRecord* b = nullptr;
  double energy_a_j = 0;  // energy per response (request or image/video)
  double energy_b_j = 0;
  double total_ratio = 0;  // energy_b / energy_a; equals the product of the factors
  std::vector<Factor> factors;
};

// rho for an LLM row: E_tok / (P x ITL / B_eff).
double steady_decode_residual(const ConfigRecord& r);

// Throws UsageError when a and b are different workloads (LLM against diffusion).
Decomposition decompose(const ConfigRecord& a, const ConfigRecord& b);

}  // namespace wattlab::diagnose
