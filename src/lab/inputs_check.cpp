// Device self-check (CUDA builds): every study recipe, for every dtype, on small shapes, generated
// on the GPU and compared byte for byte with the CPU reference, and the GPU bit statistics and A-B
// agreement compared with the CPU ones. Prints PASS/FAIL per recipe; exits 1 on any mismatch.
// Then times the GPU generator and stats on one large operand (informational).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <tuple>
#include <string>
#include <vector>

#include "lab/bit_stats.h"
#include "lab/bit_stats_gpu.h"
#include "lab/generate.h"
#include "lab/generate_gpu.h"
#include "lab/study_recipes.h"

using namespace wattlab::lab;
using wattlab::Status;

namespace {

bool same_stats(const BitStats& a, const BitStats& b) {
  return a.elements == b.elements && a.popcount_sum == b.popcount_sum && a.zero_count == b.zero_count &&
         a.hamming_k_sum == b.hamming_k_sum && a.hamming_mn_sum == b.hamming_mn_sum &&
         a.distinct_values == b.distinct_values && a.hamming_k_pairs == b.hamming_k_pairs &&
         a.hamming_mn_pairs == b.hamming_mn_pairs;
}

struct Check {
  int pass = 0, fail = 0;
};

// One recipe pair on one shape; returns a one-word verdict and why.
std::string check_one(const std::string& ra, const std::string& rb, DType t, int64_t M, int64_t N, int64_t K,
                      uint64_t seed, bool& ok) {
  ok = false;
  OperandShape sa{Operand::A, M, N, K, t}, sb{Operand::B, M, N, K, t};
  std::vector<std::pair<std::string, OperandShape>> ops = {{ra, sa}};
  if (!rb.empty()) ops.push_back({rb, sb});
  std::vector<std::vector<std::byte>> cpu;
  std::vector<void*> dev;
  std::string why;
  for (auto& [text, shape] : ops) {
    auto r = parse_recipe(text);
    if (!r) return "parse: " + r.error().message();
    cpu.push_back(generate_cpu(*r, shape, seed));
    void* d = nullptr;
    if (cudaMalloc(&d, storage_bytes(shape)) != cudaSuccess) return "cudaMalloc failed";
    dev.push_back(d);
    if (Status st = generate_gpu(*r, shape, seed, d, nullptr); !st) why = "generate_gpu: " + st.error().message();
    if (!why.empty()) break;
    std::vector<std::byte> got(storage_bytes(shape));
    cudaMemcpy(got.data(), d, got.size(), cudaMemcpyDeviceToHost);
    if (got != cpu.back()) {
      std::size_t i = 0;
      while (got[i] == cpu.back()[i]) ++i;
      why = fmt::format("operand {}: bytes differ from byte {} (gpu {:02x}, cpu {:02x})", to_string(shape.which), i,
                        static_cast<int>(got[i]), static_cast<int>(cpu.back()[i]));
      break;
    }
    auto gs = bit_stats_gpu(d, shape, nullptr);
    const BitStats cs = bit_stats_cpu(cpu.back().data(), shape);
    if (!gs) {
      why = "bit_stats_gpu: " + gs.error().message();
      break;
    }
    if (!same_stats(*gs, cs)) {
      why = fmt::format("operand {}: bit stats differ (popcount {} vs {}, zeros {} vs {}, distinct {} vs {}, hk {} vs {}, hmn {} vs {})",
                        to_string(shape.which), gs->popcount_sum, cs.popcount_sum, gs->zero_count, cs.zero_count,
                        gs->distinct_values, cs.distinct_values, gs->hamming_k_sum, cs.hamming_k_sum,
                        gs->hamming_mn_sum, cs.hamming_mn_sum);
      break;
    }
  }
  if (why.empty() && dev.size() == 2) {
    auto g = ab_bit_agreement_gpu(dev[0], sa, dev[1], sb, nullptr);
    const double c = ab_bit_agreement_cpu(cpu[0].data(), sa, cpu[1].data(), sb);
    if (!g) why = "ab_bit_agreement_gpu: " + g.error().message();
    else if (std::memcmp(&*g, &c, sizeof c) != 0) why = fmt::format("A-B agreement differs: gpu {} cpu {}", *g, c);
  }
  for (void* d : dev) cudaFree(d);
  if (!why.empty()) return why;
  ok = true;
  return "";
}

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    fmt::print(stderr, "no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  fmt::print("device: {}\n", prop.name);
  Check total;
  // Small shapes: M != N, odd outer sizes, K divisible by 4 (sparse24); a medium one for multi-block sorts.
  const int64_t M = 24, N = 40, K = 64;
  const uint64_t seed = 3;
  std::vector<std::string> extra = {
      "uniform(low=-3, high=5)", "uniform(low=0, high=1) | distinct(n=7)", "constant(value=1.5)",
      "normal(mean=0, std=1024) | sparse24(keep=random)", "normal(mean=0, std=1024) | sparse24(keep=largest)",
      "normal(mean=0, std=1024) | sort(fraction=0.3, along=K, scope=line)",
      "normal(mean=0, std=1024) | sort(fraction=0.7, along=MN, scope=line) | zero(fraction=0.25) | flip(n=2) | xor_bits(mask=0x3)",
      "normal(mean=0, std=8) | zero(fraction=0.5) | sparse24 | randomize_low(n=3) | zero_high(n=1)"};
  for (DType t : all_dtypes) {
    for (const StudySweep& sw : study_sweeps(t)) {
      for (const StudyPoint& p : sw.points) {
        if (p.recipe_a.empty()) continue;
        bool ok = false;
        const std::string why = check_one(p.recipe_a, p.recipe_b, t, M, N, K, seed, ok);
        ok ? ++total.pass : ++total.fail;
        fmt::print("{} {} {} {}={} | A: {} | B: {}{}\n", ok ? "PASS" : "FAIL", to_string(t), sw.id, sw.parameter,
                   p.value_text, p.recipe_a, p.recipe_b.empty() ? "-" : p.recipe_b, ok ? "" : "  <- " + why);
      }
    }
    for (const std::string& r : extra) {
      for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{M, N, K}, {300, 260, 512}}) {
        bool ok = false;
        const std::string why = check_one(r, r, t, m, n, k, seed, ok);
        ok ? ++total.pass : ++total.fail;
        fmt::print("{} {} extra {}x{}x{} | {}{}\n", ok ? "PASS" : "FAIL", to_string(t), m, n, k, r, ok ? "" : "  <- " + why);
      }
    }
  }
  // Medium shape for the sweeps that sort or zero (multi-block radix sorts), bf16 and f32.
  for (DType t : {DType::bf16, DType::f32}) {
    for (const char* id : {"E8", "E9", "E10", "E12", "E13"}) {
      const auto sw = find_sweep(t, id);
      for (std::size_t i = 0; i < sw->points.size(); i += 3) {
        bool ok = false;
        const std::string why = check_one(sw->points[i].recipe_a, sw->points[i].recipe_b, t, 512, 384, 256, seed + 1, ok);
        ok ? ++total.pass : ++total.fail;
        fmt::print("{} {} {} 512x384x256 fraction={}{}\n", ok ? "PASS" : "FAIL", to_string(t), id,
                   sw->points[i].value_text, ok ? "" : "  <- " + why);
      }
    }
  }
  fmt::print("summary: {} PASS, {} FAIL\n", total.pass, total.fail);

  // Timing on an 8192 x 8192 bf16 operand (informational; wall time of one call incl. sync).
  const OperandShape big{Operand::A, 8192, 8192, 8192, DType::bf16};
  void* d = nullptr;
  if (cudaMalloc(&d, storage_bytes(big)) == cudaSuccess) {
    for (const char* text : {"normal(mean=0, std=1024)", "normal(mean=0, std=1024) | sort(fraction=0.5, along=MN)",
                             "normal(mean=0, std=1024) | zero(fraction=0.9)"}) {
      const auto r = parse_recipe(text).value();
      const auto t0 = std::chrono::steady_clock::now();
      const Status st = generate_gpu(r, big, 1, d, nullptr);
      const auto t1 = std::chrono::steady_clock::now();
      auto bs = bit_stats_gpu(d, big, nullptr);
      const auto t2 = std::chrono::steady_clock::now();
      fmt::print("timing bf16 8192x8192 '{}': generate {:.1f} ms, bit stats {:.1f} ms (wall, one call){}\n", text,
                 std::chrono::duration<double, std::milli>(t1 - t0).count(),
                 std::chrono::duration<double, std::milli>(t2 - t1).count(),
                 st && bs ? fmt::format("; popcount {:.4f} bits/element, zero fraction {:.4f}, distinct {}",
                                        bs->mean_popcount_bits, bs->zero_fraction, bs->distinct_values)
                          : "; FAILED");
    }
    cudaFree(d);
  }
  return total.fail == 0 ? 0 : 1;
}
