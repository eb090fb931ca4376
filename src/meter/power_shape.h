// The power shape between counter points: power readings held as pieces (a value over the span it
// describes), where one sample holds a single power step and where it splits, how uncertain an
// edge inside a sample is, and the readings' noise.
#pragma once
#include <cstdint>
#include <vector>

#include "core/energy_math.h"
#include "core/ring_buffer.h"

namespace wattlab {

// Index of the last element with key(el) <= t in a time-sorted ring, or -1.
template <class T, class Key>
long last_at_or_before(const RingBuffer<T>& r, int64_t t, Key key) {
  long lo = 0, hi = static_cast<long>(r.size()) - 1, ans = -1;
  while (lo <= hi) {
    const long mid = (lo + hi) / 2;
    if (key(r[static_cast<std::size_t>(mid)]) <= t) {
      ans = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return ans;
}

// One power reading's pieces (sample buffer or instant power), oldest first.
struct PieceSource {
  RingBuffer<PowerPiece> pieces;
  int64_t spacing_ns = 0;  // typical width of a piece
  explicit PieceSource(std::size_t cap) : pieces(cap) {}
  bool covers(int64_t a_ns, int64_t b_ns) const;
  std::vector<PowerPiece> slice(int64_t a_ns, int64_t b_ns) const;  // pieces overlapping [a, b]
};

// Samples that each hold one step between two levels, split where their average puts the step.
// tol: the power difference (W) under which two readings count as the same level.
std::vector<PowerPiece> resolve_steps(const std::vector<PowerPiece>& sl, double tol);
// 1-sigma error (J) of the energy before t from not knowing how power moved inside the sample holding t.
double edge_u_j(const std::vector<PowerPiece>& sl, int64_t t, double tol);
// The reading noise (1 sigma, W) of the newest pieces; noise_w is left as it is with fewer than 16.
void estimate_noise(const PieceSource& src, double& noise_w);

}  // namespace wattlab
