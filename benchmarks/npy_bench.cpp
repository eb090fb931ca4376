// What an operand from a .npy file costs before its point runs: reading it into the storage
// layout (the file's order, or a transpose), its SHA-256, and the CPU bit statistics the
// SIMULATED executor reports. Sizes in elements of bf16 (2 bytes); throughput in bytes of operand.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lab/bit_stats.h"
#include "lab/npy.h"
#include "core/sha256.h"

namespace {

using namespace wattlab::lab;

// A square bf16 operand of side `n` with varied bits.
std::vector<uint16_t> operand_bits(int64_t n) {
  std::vector<uint16_t> v(static_cast<std::size_t>(n * n));
  uint32_t x = 12345;
  for (auto& e : v) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<uint16_t>(0x3C00 + (x >> 22));
  }
  return v;
}

// Reads an A operand of side range(0) written in C order (range(1) = 0: no transpose) or
// Fortran order (1: a transpose).
void BM_ReadNpyOperand(benchmark::State& state) {
  const int64_t n = state.range(0);
  const bool fortran = state.range(1) != 0;
  const auto path = std::filesystem::temp_directory_path() / ("wattlab-npy-bench-" + std::to_string(::getpid()) + ".npy");
  const auto bits = operand_bits(n);
  write_npy(path, "<u2", {n, n}, bits.data(), bits.size() * 2, fortran);
  const OperandShape shape{Operand::A, n, n, n, DType::bf16};
  for (auto _ : state) benchmark::DoNotOptimize(load_npy_operand(path, shape));
  std::filesystem::remove(path);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bits.size() * 2));
}
BENCHMARK(BM_ReadNpyOperand)->Args({4096, 0})->Args({4096, 1})->Unit(benchmark::kMillisecond);

void BM_Sha256(benchmark::State& state) {
  const std::vector<unsigned char> data(static_cast<std::size_t>(state.range(0)), 0x5A);
  for (auto _ : state) benchmark::DoNotOptimize(wattlab::sha256_hex(data.data(), data.size()));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Sha256)->Arg(32 << 20)->Unit(benchmark::kMillisecond);

void BM_BitStatsCpu(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto bits = operand_bits(n);
  const OperandShape shape{Operand::A, n, n, n, DType::bf16};
  for (auto _ : state) benchmark::DoNotOptimize(bit_stats_cpu(reinterpret_cast<const std::byte*>(bits.data()), shape));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bits.size() * 2));
}
BENCHMARK(BM_BitStatsCpu)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
