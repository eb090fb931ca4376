#include "power_shape.h"

#include <algorithm>
#include <cmath>

namespace wattlab {
namespace {

constexpr double kNs = 1e-9;
const double kSqrt3 = std::sqrt(3.0);

bool flat(double a, double b, double tol) { return std::abs(a - b) <= tol; }

// A sample strictly between flat neighbours holds one step; which share of it lies on each side
// follows from its average. Splitting it there puts the step where the sensor says it was.
// A "level" sample is not strictly between its neighbours: a plateau or a turning point.
bool level(const std::vector<PowerPiece>& sl, std::size_t i, double tol) {
  if (i == 0 || i + 1 >= sl.size()) return true;
  const double A = sl[i - 1].power_w, p = sl[i].power_w, C = sl[i + 1].power_w;
  return flat(p, A, tol) || flat(p, C, tol) || (p - A) * (C - p) <= 0;
}

bool single_step(const std::vector<PowerPiece>& sl, std::size_t j, double tol) {
  if (j == 0 || j + 1 >= sl.size() || level(sl, j, tol)) return false;
  if (sl[j - 1].t1_ns != sl[j].t0_ns || sl[j].t1_ns != sl[j + 1].t0_ns) return false;
  // Between two levels: one transition explains it. Between other in-between samples, the
  // power moved more than once per sample and no single split is right.
  return level(sl, j - 1, tol) && level(sl, j + 1, tol);
}

}  // namespace

std::vector<PowerPiece> resolve_steps(const std::vector<PowerPiece>& sl, double tol) {
  std::vector<PowerPiece> out;
  out.reserve(sl.size() + 8);
  for (std::size_t j = 0; j < sl.size(); ++j) {
    if (!single_step(sl, j, tol)) {
      out.push_back(sl[j]);
      continue;
    }
    const double A = sl[j - 1].power_w, p = sl[j].power_w, C = sl[j + 1].power_w;
    const double x = (C - p) / (C - A);  // share of the sample still at A
    const int64_t split = sl[j].t0_ns + static_cast<int64_t>(x * static_cast<double>(sl[j].t1_ns - sl[j].t0_ns));
    out.push_back({sl[j].t0_ns, split, A});
    out.push_back({split, sl[j].t1_ns, C});
  }
  return out;
}

// 1-sigma error of the energy before t that comes from not knowing how power moved inside the
// sample holding t. Flat or single-step samples leave only noise; busy ones up to their range.
double edge_u_j(const std::vector<PowerPiece>& sl, int64_t t, double tol) {
  if (sl.empty()) return 0;
  std::size_t j = 0;
  while (j + 1 < sl.size() && sl[j].t1_ns <= t) ++j;
  const double w = static_cast<double>(sl[j].t1_ns - sl[j].t0_ns);
  if (w <= 0) return 0;
  const double frac_ns = std::max(0.0, static_cast<double>(t - sl[j].t0_ns) * static_cast<double>(sl[j].t1_ns - t) / w);
  const double p = sl[j].power_w;
  // Clean: a level whose neighbours either match it or hold the transition themselves.
  auto explained = [&](std::size_t n) { return flat(p, sl[n].power_w, tol) || single_step(sl, n, tol); };
  const bool clean = level(sl, j, tol) && (j == 0 || explained(j - 1)) && (j + 1 >= sl.size() || explained(j + 1));
  // Noise on a clean sample is counted with the rest of the noise; a resolved step's position
  // moves with the noise of the sample that placed it.
  if (clean) return 0;
  // The split point moves by w * sigma / step, so the energy before t moves by about sigma * w
  // (1.4: three noisy samples place it), largest with t mid-sample.
  if (single_step(sl, j, tol)) return 1.4 * ((tol - 0.5) / 4) * 4 * frac_ns * kNs;
  double lo = p, hi = p;
  for (std::size_t i = j > 0 ? j - 1 : 0; i <= std::min(j + 1, sl.size() - 1); ++i)
    lo = std::min(lo, sl[i].power_w), hi = std::max(hi, sl[i].power_w);
  return (hi - lo) * frac_ns * kNs / kSqrt3;
}

bool PieceSource::covers(int64_t a_ns, int64_t b_ns) const {
  if (pieces.empty()) return false;
  if (pieces.front().t0_ns > a_ns || pieces.back().t1_ns < b_ns) return false;
  // Gaps (missed reads) break coverage; check the pieces overlapping [a, b].
  const long i0 = last_at_or_before(pieces, a_ns, [](const PowerPiece& p) { return p.t0_ns; });
  int64_t reach = a_ns;
  for (std::size_t i = static_cast<std::size_t>(std::max(0L, i0)); i < pieces.size() && pieces[i].t0_ns < b_ns; ++i) {
    if (pieces[i].t0_ns > reach + 1) return false;
    reach = std::max(reach, pieces[i].t1_ns);
  }
  return reach >= b_ns;
}

std::vector<PowerPiece> PieceSource::slice(int64_t a_ns, int64_t b_ns) const {
  std::vector<PowerPiece> out;
  const long i0 = last_at_or_before(pieces, a_ns, [](const PowerPiece& p) { return p.t0_ns; });
  for (std::size_t i = static_cast<std::size_t>(std::max(0L, i0)); i < pieces.size() && pieces[i].t0_ns < b_ns; ++i)
    if (pieces[i].t1_ns > a_ns) out.push_back(pieces[i]);
  return out;
}

void estimate_noise(const PieceSource& src, double& noise_w) {
  // The 10th percentile of |successive difference| over recent readings: for Gaussian noise of
  // sigma it is 0.178 sigma, and it stays there while at least a tenth of the steps are quiet
  // (idle, plateaus). Local estimates fail on periodic load, where every step is a transition.
  const std::size_t n = std::min<std::size_t>(src.pieces.size(), 4096);
  if (n < 16) return;
  std::vector<double> d;
  d.reserve(n);
  for (std::size_t i = src.pieces.size() - n + 1; i < src.pieces.size(); ++i)
    d.push_back(std::abs(src.pieces[i].power_w - src.pieces[i - 1].power_w));
  // First guess from the 10th percentile (0.178 sigma when every step is quiet; an upper bound
  // otherwise), then the median of the quiet cluster, the diffs at or below 3.5 guessed sigmas
  // (|N(0, 2 sigma^2)|, cut at 2.47 of its own sigma: median 0.637 * sqrt 2 sigma).
  // Selection, not a sort: the same order statistics in linear time (this runs on the sampler
  // thread every 256 samples, a dozen times a second on NVML's sample buffer).
  const auto p10 = d.begin() + static_cast<std::ptrdiff_t>(d.size() / 10);
  std::nth_element(d.begin(), p10, d.end());
  const double guess = *p10 / 0.178;
  const double cut = 3.5 * guess;
  const auto end = std::partition(d.begin(), d.end(), [cut](double x) { return x <= cut; });
  const std::size_t quiet = static_cast<std::size_t>(end - d.begin());
  if (quiet < 16) {
    noise_w = guess;
    return;
  }
  const auto mid = d.begin() + static_cast<std::ptrdiff_t>(quiet / 2);
  std::nth_element(d.begin(), mid, end);
  noise_w = *mid / (0.637 * std::sqrt(2.0));
}

}  // namespace wattlab
