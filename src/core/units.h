// Units live in names (energy_j, power_w, t_ns); these constants convert at the boundary only.
#pragma once
#include <cstdint>

namespace wattlab {

inline constexpr int64_t kNsPerUs = 1'000;
inline constexpr int64_t kNsPerMs = 1'000'000;
inline constexpr int64_t kNsPerS = 1'000'000'000;

constexpr double ns_to_s(int64_t t_ns) { return static_cast<double>(t_ns) * 1e-9; }
constexpr int64_t s_to_ns(double t_s) { return static_cast<int64_t>(t_s * 1e9 + (t_s >= 0 ? 0.5 : -0.5)); }
constexpr int64_t ms_to_ns(double t_ms) { return s_to_ns(t_ms * 1e-3); }
constexpr double mj_to_j(double energy_mj) { return energy_mj * 1e-3; }
constexpr double uj_to_j(double energy_uj) { return energy_uj * 1e-6; }
constexpr double mw_to_w(double power_mw) { return power_mw * 1e-3; }

}  // namespace wattlab
