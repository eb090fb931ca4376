// The study's recipes per dtype (docs/input-dependent-power.md §3, §7 "New-dtype grids").
#include "lab/study_recipes.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

namespace wattlab::lab {
namespace {

std::string pow2_text(int e) { return fmt::format("2^{}", e); }

StudySweep sweep(std::string id, std::string title, std::string parameter, std::string note = {}) {
  StudySweep s;
  s.id = std::move(id);
  s.title = std::move(title);
  s.parameter = std::move(parameter);
  s.note = std::move(note);
  return s;
}

void add(StudySweep& s, std::string text, double value, std::string a, std::string b) {
  s.points.push_back({std::move(text), value, std::move(a), std::move(b)});
}

// Both operands get the same recipe text; A and B still differ (separate RNG streams).
void add_same(StudySweep& s, std::string text, double value, const std::string& r) { add(s, std::move(text), value, r, r); }

std::string num(double v) { return fmt::format("{}", v); }

}  // namespace

std::string baseline_recipe(DType dtype) {
  switch (dtype) {
    case DType::i8: return "normal(mean=0, std=32)";
    case DType::f8_e4m3:
    case DType::f8_e5m2: return "normal(mean=0, std=64)";
    default: return "normal(mean=0, std=1024)";
  }
}

std::vector<StudySweep> study_sweeps(DType dtype) {
  const std::string base = baseline_recipe(dtype);
  const bool i8 = dtype == DType::i8;
  const bool fp8 = dtype == DType::f8_e4m3 || dtype == DType::f8_e5m2;
  const int width = bits(dtype);
  std::vector<StudySweep> out;

  {  // E1: N(0, sigma)
    StudySweep s = sweep("E1", "N(0, std): spread of the values", "std",
                         fp8 ? "FP8 grid 2^-5..2^8 (H200 new-dtype grid)" : "");
    const int lo = i8 ? 0 : -5, hi = i8 ? 6 : fp8 ? 8 : 10;
    for (int e = lo; e <= hi; ++e) add_same(s, pow2_text(e), std::ldexp(1.0, e), fmt::format("normal(mean=0, std={})", num(std::ldexp(1.0, e))));
    out.push_back(std::move(s));
  }
  const int mu_hi = i8 ? 6 : fp8 ? 8 : 14;
  const double mu_std = i8 ? 8 : 1;
  {  // E2: N(mu, 1), INT8 N(mu, 8)
    StudySweep s = sweep("E2", "N(mean, 1): offset of the values (INT8: std 8)", "mean");
    for (int e = 0; e <= mu_hi; ++e)
      add_same(s, pow2_text(e), std::ldexp(1.0, e), fmt::format("normal(mean={}, std={})", num(std::ldexp(1.0, e)), num(mu_std)));
    out.push_back(std::move(s));
  }
  {  // E3: n distinct values
    StudySweep s = sweep("E3", "n distinct values drawn from the baseline, each element picks one", "n");
    for (int n = 1; n <= 512; n *= 2) add_same(s, std::to_string(n), n, fmt::format("{} | distinct(n={})", base, n));
    out.push_back(std::move(s));
  }
  const char* bit_ids[3][2] = {{"E4", "flip"}, {"E5", "randomize_low"}, {"E6", "randomize_high"}};
  const char* bit_titles[3] = {"a constant from the baseline, n random distinct bits flipped per element",
                               "a constant from the baseline, its n least significant bits randomized",
                               "a constant from the baseline, its n most significant bits randomized"};
  for (int b = 0; b < 3; ++b) {
    StudySweep s = sweep(bit_ids[b][0], bit_titles[b], "n",
                         dtype == DType::f32 ? "FP32: all 32 bits (H200 grid; the paper stopped at 16)" : "");
    for (int n = 0; n <= width; ++n)
      add_same(s, std::to_string(n), n, fmt::format("{} | distinct(n=1) | {}(n={})", base, bit_ids[b][1], n));
    out.push_back(std::move(s));
  }
  {  // E7: N(mu, 1) fully sorted
    StudySweep s = sweep("E7", "N(mean, 1), fully sorted (runs along M in A, N in B)", "mean",
                         i8 ? "INT8 uses std 8 as in E2" : "");
    for (int e = 0; e <= mu_hi; ++e)
      add_same(s, pow2_text(e), std::ldexp(1.0, e),
               fmt::format("normal(mean={}, std={}) | sort(fraction=1, along=MN)", num(std::ldexp(1.0, e)), num(mu_std)));
    out.push_back(std::move(s));
  }
  struct FracSweep {
    const char* id;
    const char* title;
    std::function<std::string(const std::string&)> a, b;
  };
  const std::vector<FracSweep> fracs = {
      {"E8", "baseline, the smallest fraction sorted to the start, runs along M in A and N in B",
       [&](const std::string& p) { return fmt::format("{} | sort(fraction={}, along=MN)", base, p); },
       [&](const std::string& p) { return fmt::format("{} | sort(fraction={}, along=MN)", base, p); }},
      {"E9", "as E8 with runs along K in both",
       [&](const std::string& p) { return fmt::format("{} | sort(fraction={}, along=K)", base, p); },
       [&](const std::string& p) { return fmt::format("{} | sort(fraction={}, along=K)", base, p); }},
      {"E10", "the smallest fraction sorted within each column of A (each row of B), along M / N",
       [&](const std::string& p) { return fmt::format("{} | sort(fraction={}, along=MN, scope=line)", base, p); },
       [&](const std::string& p) { return fmt::format("{} | sort(fraction={}, along=MN, scope=line)", base, p); }},
      {"E11", "baseline with exactly round(fraction * elements) random zeros (dense kernel)",
       [&](const std::string& p) { return fmt::format("{} | zero(fraction={})", base, p); },
       [&](const std::string& p) { return fmt::format("{} | zero(fraction={})", base, p); }},
      {"E12", "fully sorted, then random zeros",
       [&](const std::string& p) { return fmt::format("{} | sort(fraction=1, along=MN) | zero(fraction={})", base, p); },
       [&](const std::string& p) { return fmt::format("{} | sort(fraction=1, along=MN) | zero(fraction={})", base, p); }},
      {"E13", "as E8 without the B transpose: runs along M in A and along K in B",
       [&](const std::string& p) { return fmt::format("{} | sort(fraction={}, along=M)", base, p); },
       [&](const std::string& p) { return fmt::format("{} | sort(fraction={}, along=K)", base, p); }},
  };
  for (const FracSweep& f : fracs) {
    StudySweep s = sweep(f.id, f.title, "fraction");
    for (int t = 0; t <= 10; ++t) {
      const std::string p = num(t / 10.0);
      add(s, p, t / 10.0, f.a(p), f.b(p));
    }
    out.push_back(std::move(s));
  }
  const char* zb[2][3] = {{"E14", "zero_low", "baseline, its n least significant bits zeroed"},
                          {"E15", "zero_high", "baseline, its n most significant bits zeroed (sign first)"}};
  for (auto& z : zb) {
    StudySweep s = sweep(z[0], z[2], "n");
    for (int n = 0; n <= width; ++n) add_same(s, std::to_string(n), n, fmt::format("{} | {}(n={})", base, z[1], n));
    out.push_back(std::move(s));
  }
  {
    StudySweep s = sweep("X1", "stored bits at rest: a buffer of 0x00 bytes against 0xFF bytes, no kernel", "fill",
                         "one buffer (recipe_a) of >= 4 GiB; recipe_b unused");
    s.kind = SweepKind::buffer_at_rest;
    const uint32_t ones = width == 32 ? 0xFFFFFFFFu : ((1u << width) - 1u);
    add(s, "0x00", 0, "constant(value=0)", "");
    add(s, "0xFF", 255, fmt::format("constant(value=0) | xor_bits(mask=0x{:X})", ones), "");
    out.push_back(std::move(s));
  }
  {
    StudySweep s = sweep("X2", "toggle kernel: every launch XORs each byte of a zero buffer with a mask of n ones", "n",
                         "the buffer is recipe_a; the mask is the kernel's (n > 8 acts like 8 per byte)");
    s.kind = SweepKind::toggle_kernel;
    for (int n = 0; n <= 32; ++n) add(s, std::to_string(n), n, "constant(value=0)", "");
    out.push_back(std::move(s));
  }
  {
    StudySweep s = sweep("X3", "idle power, without and with a CUDA context", "context");
    s.kind = SweepKind::idle;
    add(s, "without", 0, "", "");
    add(s, "with", 1, "", "");
    out.push_back(std::move(s));
  }
  if (dtype == DType::f32) {
    StudySweep s = sweep("TF32", "TF32 control: zeroing the 13 LSBs that TF32 ignores must change nothing", "n",
                         "run on E-TC-TF32");
    add_same(s, "0", 0, base + " | zero_low(n=0)");
    add_same(s, "13", 13, base + " | zero_low(n=13)");
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<StudySweep> find_sweep(DType dtype, std::string_view id) {
  for (StudySweep& s : study_sweeps(dtype))
    if (s.id == id) return s;
  return std::nullopt;
}

}  // namespace wattlab::lab
