// The GEMM model's features (docs/gemm-model.md, "Features"): each operand's bit statistics
// normalised by the dtype's width, their mean over A and B, the A-B agreement, and products of
// two of them. Every feature is a fraction in [0, 1], so engines of different widths share one scale.
#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "lab/gemm_model.h"

namespace wattlab::lab {
namespace {

using Getter = std::function<double(const OperandBitStats&)>;

double frac(double bits, double width) { return width > 0 ? bits / width : std::nan(""); }

// The per-operand statistics, each as a fraction of the width.
const std::vector<std::pair<std::string, Getter>>& operand_features() {
  static const std::vector<std::pair<std::string, Getter>> f = {
      {"popcount_frac", [](const OperandBitStats& s) { return frac(s.popcount_bits, s.width_bits); }},
      {"zero_frac", [](const OperandBitStats& s) { return s.zero_fraction; }},
      {"log2_distinct_frac",
       [](const OperandBitStats& s) { return frac(std::log2(std::max(s.distinct_values, 1.0)), s.width_bits); }},
      {"hamming_k_frac", [](const OperandBitStats& s) { return frac(s.hamming_k_bits, s.width_bits); }},
      {"hamming_mn_frac", [](const OperandBitStats& s) { return frac(s.hamming_mn_bits, s.width_bits); }},
  };
  return f;
}

// Products of two mean features: the toggling along K counts only where the values are not zero,
// the two Hamming directions together, and the toggling against the set bits.
const std::vector<std::pair<std::string, std::string>>& interactions() {
  static const std::vector<std::pair<std::string, std::string>> f = {
      {"hamming_k_frac", "zero_frac"},
      {"hamming_k_frac", "hamming_mn_frac"},
      {"hamming_k_frac", "popcount_frac"},
      {"popcount_frac", "zero_frac"},
  };
  return f;
}

std::string interaction_name(const std::pair<std::string, std::string>& p) { return p.first + "*" + p.second; }

double mean_feature(const GemmBitStats& s, const Getter& g) { return 0.5 * (g(s.a) + g(s.b)); }

std::optional<double> base_feature(const GemmBitStats& s, std::string_view name) {
  if (name == "ab_agreement") return s.ab_bit_agreement;
  for (const auto& [n, g] : operand_features()) {
    if (name == n) return mean_feature(s, g);
    if (name == "a_" + n) return g(s.a);
    if (name == "b_" + n) return g(s.b);
  }
  return std::nullopt;
}

}  // namespace

OperandBitStats operand_bit_stats(const BitStats& s) {
  OperandBitStats o;
  o.width_bits = s.width_bits;
  o.popcount_bits = s.mean_popcount_bits;
  o.zero_fraction = s.zero_fraction;
  o.distinct_values = static_cast<double>(s.distinct_values);
  o.hamming_k_bits = s.mean_hamming_along_k_bits;
  o.hamming_mn_bits = s.mean_hamming_along_mn_bits;
  return o;
}

const std::vector<std::string>& gemm_feature_catalogue() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [n, g] : operand_features()) v.push_back(n);
    v.emplace_back("ab_agreement");
    for (const auto& [n, g] : operand_features()) v.push_back("a_" + n);
    for (const auto& [n, g] : operand_features()) v.push_back("b_" + n);
    for (const auto& p : interactions()) v.push_back(interaction_name(p));
    return v;
  }();
  return names;
}

const std::vector<std::string>& gemm_default_features() {
  static const std::vector<std::string> names = {"popcount_frac",  "zero_frac",       "log2_distinct_frac",
                                                 "hamming_k_frac", "hamming_mn_frac", "ab_agreement"};
  return names;
}

Result<double> gemm_feature(const GemmBitStats& s, std::string_view name) {
  if (auto v = base_feature(s, name)) return *v;
  for (const auto& p : interactions())
    if (name == interaction_name(p)) return *base_feature(s, p.first) * *base_feature(s, p.second);
  std::string known;
  for (const auto& n : gemm_feature_catalogue()) known += (known.empty() ? "" : ", ") + n;
  return Error{ErrorKind::invalid_argument, fmt::format("unknown feature '{}'", name), "features: " + known};
}

Status check_gemm_features(const std::vector<std::string>& names) {
  if (names.empty()) return Error{ErrorKind::invalid_argument, "no feature given", ""};
  const GemmBitStats probe;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (auto r = gemm_feature(probe, names[i]); !r) return r.error();
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i))
      return Error{ErrorKind::invalid_argument, fmt::format("feature '{}' is given twice", names[i]), ""};
  }
  return Status::success();
}

std::string_view to_string(GemmTarget t) {
  switch (t) {
    case GemmTarget::energy_per_gemm_j: return "energy_per_gemm_j";
    case GemmTarget::mean_power_w: return "mean_power_w";
    case GemmTarget::mean_sm_clock_mhz: return "mean_sm_clock_mhz";
  }
  return "?";
}

std::string_view target_title(GemmTarget t) {
  switch (t) {
    case GemmTarget::energy_per_gemm_j: return "energy per GEMM";
    case GemmTarget::mean_power_w: return "mean power";
    case GemmTarget::mean_sm_clock_mhz: return "SM clock (mean)";
  }
  return "?";
}

std::string_view target_unit(GemmTarget t) {
  switch (t) {
    case GemmTarget::energy_per_gemm_j: return "J";
    case GemmTarget::mean_power_w: return "W";
    case GemmTarget::mean_sm_clock_mhz: return "MHz";
  }
  return "?";
}

}  // namespace wattlab::lab
