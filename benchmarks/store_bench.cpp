// How fast the flusher can store readings: append_readings in batches (one transaction each).
// The CLI needs well over 200k readings/s so a flush every 500 ms never falls behind.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "wattlab/store/store.h"

namespace {

void BM_AppendReadings(benchmark::State& state) {
  using namespace wattlab;
  const auto path = std::filesystem::temp_directory_path() /
                    ("wattlab-store-bench-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  {
    auto store = Store::open(path);
    if (!store) {
      state.SkipWithError(store.error().message().c_str());
      return;
    }
    RunId run = *store->begin_run(RunInfo{});
    Domain d;
    d.id = "gpu:0";
    std::vector<Domain> domains(4, d);
    (void)store->add_domains(run, domains);
    const auto batch_size = static_cast<std::size_t>(state.range(0));
    std::vector<TimedReading> batch(batch_size);
    int64_t t_ns = 0;
    for (auto _ : state) {
      for (std::size_t i = 0; i < batch_size; ++i) {
        auto kind = i % 4 == 3 ? ReadingKind::sm_clock_mhz : ReadingKind::power_instant_w;
        batch[i] = {static_cast<uint32_t>(i % 4), Reading{t_ns++, kind, 300.0, 2'000}};
      }
      if (auto s = store->append_readings(run, batch); !s) state.SkipWithError(s.error().message().c_str());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}
BENCHMARK(BM_AppendReadings)->Arg(100)->Arg(1'000)->Arg(10'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
