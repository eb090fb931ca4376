// A run with a million windows recorded on the simulated GPU and the virtual clock, flushed as
// `wattlab run` flushes: its cost per window, the recording's peak memory and the window results
// it holds until stored, printed at every tenth of the run so that linear cost and bounded memory
// show. Windows are opened in groups of OPEN_AT_ONCE and each group closed within one counter
// period, so a group becomes final together.
// A plain program (its own main): bench_record_windows_bench [WINDOWS] [OPEN_AT_ONCE].
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "wattlab/record/recording.h"

namespace {

constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kMs = 1'000'000;

long peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace wattlab;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines as they come
  const long windows = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  const long open_at_once = argc > 2 ? std::atol(argv[2]) : 1;  // windows open together, closed together
  if (windows <= 0 || open_at_once <= 0) {
    std::fprintf(stderr, "usage: %s [WINDOWS > 0] [OPEN_AT_ONCE > 0]\n", argv[0]);
    return 2;
  }
  const auto dir = std::filesystem::temp_directory_path() / ("wattlab-windows-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  VirtualClock clock(1'000 * kS);
  RecordingOptions o;
  o.devices.device = "sim";
  o.devices.clock = &clock;
  o.devices.sim_workload = "step 400W 1000000s";
  o.db = dir / "bench.db";
  o.on_note = [](std::string_view n) { std::fprintf(stderr, "note: %.*s\n", static_cast<int>(n.size()), n.data()); };
  Recording rec(o);
  rec.start();
  rec.meter().advance_to(clock.now_ns() + kS);
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed_s = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::printf("windows  open_at_once  wall_s  us_per_window  peak_rss_mib  held_max  tracked\n");
  uint64_t held_max = 0;  // results held by the recording until stored, at most
  std::vector<WindowId> open;
  int64_t next_flush_ns = clock.now_ns() + kS / 2;
  for (long i = 0; i < windows;) {
    // A group of windows open at once for 1 ms of virtual time, then closed, 1 ms of virtual time
    // for every 10,000 closes: the group becomes final together, however large
    // (docs/reliability.md, "Many windows").
    for (long k = 0; k < open_at_once && i + k < windows; ++k) open.push_back(rec.open("w"));
    rec.meter().advance_to(clock.now_ns() + kMs);
    for (std::size_t k = 0; k < open.size(); ++k) {
      rec.close(open[k]);
      if (k % 10'000 == 9'999) rec.meter().advance_to(clock.now_ns() + kMs);
    }
    // A group's results become final (a counter period after its end) before the next group opens.
    if (open.size() > 1) rec.meter().advance_to(clock.now_ns() + kS);
    i += static_cast<long>(open.size());
    open.clear();
    if (clock.now_ns() >= next_flush_ns) {  // what the flush thread does every 500 ms
      held_max = std::max<uint64_t>(held_max, rec.store_health().windows_pending);
      if (auto st = rec.flush(); !st) std::fprintf(stderr, "flush: %s\n", st.error().message().c_str());
      next_flush_ns = clock.now_ns() + kS / 2;
    }
    if (i % (windows / 10 > 0 ? windows / 10 : 1) == 0 || i == windows)
      std::printf("%7ld  %12ld  %6.1f  %13.2f  %12ld  %8llu  %7zu\n", i, open_at_once, elapsed_s(),
                  elapsed_s() * 1e6 / static_cast<double>(i), peak_rss_mib(), static_cast<unsigned long long>(held_max),
                  rec.windows_tracked());
  }
  rec.end(0);
  const StoreHealth h = rec.store_health();
  auto s = Store::open(o.db, OpenMode::read_only);
  const auto runs = s->list_runs();
  std::printf("ended after %.1f s; stored windows: %lld of %ld; lost %llu; peak RSS %ld MiB\n", elapsed_s(),
              static_cast<long long>(runs->back().window_count), windows, static_cast<unsigned long long>(h.windows_lost),
              peak_rss_mib());
  std::filesystem::remove_all(dir);
  return runs->back().window_count == windows ? 0 : 1;
}
