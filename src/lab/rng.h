// Philox4x32-10 (Salmon et al., SC11), a counter-based RNG: the same (key, counter) gives the same
// four words on the host and on the device, so generators need no state and no order.
#pragma once
#include <cstdint>

#include "lab/hd.h"

namespace wattlab::lab::rng {

struct Words4 {
  uint32_t w[4];
};

WATTLAB_HD inline uint32_t mulhi32(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
}

WATTLAB_HD inline Words4 philox4x32_10(uint64_t key, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Words4{{c0, c1, c2, c3}};
}

// Stream of one stage of one operand: (operand << 24) | (stage << 8) | sub. The counter is
// (index low, index high, stream, word / 4); word j of element `index` is word j % 4 of that call.
WATTLAB_HD inline uint32_t stream_id(uint32_t operand, uint32_t stage, uint32_t sub) {
  return (operand << 24) | ((stage & 0xFFFFu) << 8) | (sub & 0xFFu);
}

WATTLAB_HD inline uint32_t word(uint64_t seed, uint32_t stream, uint64_t index, uint32_t j) {
  const Words4 r = philox4x32_10(seed, static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), stream, j >> 2);
  return r.w[j & 3u];
}

// Words 0 and 1 as one 64-bit value (word 1 high).
WATTLAB_HD inline uint64_t word64(uint64_t seed, uint32_t stream, uint64_t index) {
  const Words4 r = philox4x32_10(seed, static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), stream, 0);
  return (static_cast<uint64_t>(r.w[1]) << 32) | r.w[0];
}

// Uniform in (0, 1): the top 53 bits of word64, plus one half, times 2^-53 (exact in float64).
WATTLAB_HD inline double uniform_open01(uint64_t bits64) {
  return (static_cast<double>(bits64 >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// A uniform integer in [0, range) from one word (Lemire's multiply-high; bias <= range / 2^32).
WATTLAB_HD inline uint32_t below(uint32_t w, uint32_t range) { return mulhi32(w, range); }

}  // namespace wattlab::lab::rng
