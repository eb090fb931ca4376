// meter_validate's planned duration per part and level, from the options, printed before the
// work starts so a device command can be sized. The figures follow the schedules in
// validate_*.cpp: loads, idle gaps (their mean), edges on counter updates (about 0.1 s each).
#include <algorithm>
#include <numeric>

#include "validate_context.h"

namespace wattlab::device {
namespace {

constexpr double kSetupS = 15;   // CUDA and cuBLAS start, matrix fill, the meter's first reads
constexpr double kAlignS = 0.1;  // one edge on a counter update (reads until it changes)

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<std::string> split_list(const std::string& csv) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : csv + ",") {
    if (ch == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  return out;
}

}  // namespace

nlohmann::json plan(const Options& o, const std::vector<std::string>& parts, const std::vector<std::string>& levels) {
  nlohmann::json p = nlohmann::json::object();
  const double mean_gap = (o.gap_min_s + o.gap_max_s) / 2;
  auto level_sets = [&](const std::string& list) {
    std::vector<std::string> out;
    for (const auto& l : split_list(list))
      if (has(levels, l)) out.push_back(l);
    return out;
  };
  p["setup"] = kSetupS;
  nlohmann::json lv = {{"idle", o.settle_s + o.idle_s + 2 * kAlignS}};
  for (const auto& l : levels)
    lv[l] = o.warm_s + o.steady_s + 3 * kAlignS + 0.3 + (l == "near" && o.near_blocks == 0 ? 4 * 2.0 : 0.0);
  p["levels"] = lv;
  if (has(parts, "short")) {
    double per = 2 * kAlignS + o.gap_min_s;
    for (double len : o.burst_lengths) per += (len >= 1.0 ? o.long_burst_reps : o.burst_reps) * (len + mean_gap + 0.03);
    for (const auto& l : levels) p["short"][l] = per;
  }
  if (has(parts, "memory")) p["memory"]["hbm-copy"] = 2 + 0.5 + o.memory_load_s + 3 + 5 * kAlignS + 1;
  if (has(parts, "edges")) {
    for (const auto& l : level_sets(o.afterload_levels))
      p["edges"]["afterload-" + l] = o.afterload_reps * (1 + o.afterload_load_s + o.afterload_idle_s + 2 * kAlignS + 0.05);
    for (const auto& l : level_sets(o.split_levels)) p["edges"]["split-" + l] = 1 + 4 + 2 + 2 * kAlignS + 0.05;
    for (const auto& l : level_sets(o.shift_levels))
      p["edges"]["shift-" + l] = o.shift_reps * static_cast<double>(o.shifts_ms.size()) * (1.0 + 1.5 + 1.2 + 2 * kAlignS + 0.1);
  }
  if (has(parts, "linearity")) {
    double nb = 0;
    for (int n = 1; n <= o.nburst_max; ++n) nb += n * o.nburst_period_s + 0.45 + 0.02;
    nb *= o.nburst_reps;
    double du = 0;
    for (double hz : o.duty_hz) du += static_cast<double>(o.duty_pct.size()) * (std::max(o.duty_window_s, 2.0 / hz) + 0.45 + 0.02);
    for (const auto& l : levels) p["linearity"][l] = nb + du;
  }
  if (has(parts, "calib")) {
    if (("," + o.calib_levels + ",").find(",idle,") != std::string::npos) p["calib"]["idle"] = calib_need_s(o, true);
    for (const auto& l : level_sets(o.calib_levels)) p["calib"][l] = calib_need_s(o, false);
  }
  p["final_wait"] = Context::kReserveS;
  double total = 0;
  for (const auto& [k, v] : p.items()) {
    if (v.is_number()) {
      total += v.get<double>();
    } else {
      for (const auto& [k2, v2] : v.items()) total += v2.get<double>();
    }
  }
  p["total_s"] = total;
  return p;
}

}  // namespace wattlab::device
