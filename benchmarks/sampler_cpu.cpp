// How much of one core the meter's sampler uses at the default MeterOptions rates, over real time,
// on the sim device (SIMULATED H200: every read spins for the H200's read cost on the thread that
// reads, which is the sampler), for 1, 2, 4 and 8 GPUs (each held to <= 1 % of one core) and, to
// show how it grows, 16 and 64 (not held to it). Each GPU count runs a meter of its own, one after
// another, over the whole life of its sampler (the counter grid's start-up probe included).
//
//   bench_sampler_cpu [--seconds N] [--gpus N[,N...]] [--budget-step-cpu]
//     defaults: 60 s each, --gpus 1,2,4,8,16,64
//   --budget-step-cpu: MeterOptions::budget_counts_step_cpu (the budget also charges wake-ups and bookkeeping)
//
// Prints, per GPU count, the sampler thread's CPU (getrusage RUSAGE_THREAD, via
// Meter::sampler_cpu_ns), the time spent inside sensor reads, the process CPU (getrusage
// RUSAGE_SELF), the reads per domain and reading kind, the energy counter's reads in the first
// second (the start-up probe), and PASS or FAIL; then one summary line per GPU count. Exit 0 when
// every GPU count up to 8 passes, 1 when one fails, 2 on bad arguments.
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "wattlab/core/clock.h"
#include "wattlab/meter/meter.h"
#include "wattlab/sensors/registry.h"

namespace {

int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t process_cpu_ns(int64_t* user_ns, int64_t* sys_ns) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  *user_ns = static_cast<int64_t>(ru.ru_utime.tv_sec) * 1'000'000'000 + ru.ru_utime.tv_usec * 1'000;
  *sys_ns = static_cast<int64_t>(ru.ru_stime.tv_sec) * 1'000'000'000 + ru.ru_stime.tv_usec * 1'000;
  return *user_ns + *sys_ns;
}

// Forwards every read to the real sensor and counts it. read() runs only on the sampler thread;
// the counts are read after Meter::stop() has joined that thread.
class CountingSensor final : public wattlab::Sensor {
 public:
  struct Count {
    uint64_t reads = 0, failures = 0, readings = 0;
    uint64_t first_second_reads = 0;  // reads that started in the sampler's first second
    int64_t wall_ns = 0;  // time spent inside read() (vDSO clock: cheap, so it barely adds to the sampler)
  };
  explicit CountingSensor(wattlab::SensorPtr inner) : inner_(std::move(inner)) {}
  // Set before the sampler starts: reads before t_ns count as the first second's.
  void set_first_second_end(int64_t t_ns) { first_second_end_ns_ = t_ns; }
  std::string backend() const override { return inner_->backend(); }
  const std::vector<wattlab::Domain>& domains() const override { return inner_->domains(); }
  std::vector<std::pair<std::string, std::string>> properties() const override { return inner_->properties(); }
  wattlab::Status read(std::size_t domain_index, wattlab::ReadingKind kind,
                       std::vector<wattlab::Reading>& out) override {
    const std::size_t before = out.size();
    // CLOCK_THREAD_CPUTIME_ID would be a system call per read on the sampler thread, inflating what
    // is measured; the sim's reads spin, so their wall time is their CPU time unless preempted.
    const int64_t t0 = clock_ns(CLOCK_MONOTONIC);
    wattlab::Status st = inner_->read(domain_index, kind, out);
    Count& c = counts_[{domain_index, kind}];
    c.wall_ns += clock_ns(CLOCK_MONOTONIC) - t0;
    ++c.reads;
    if (t0 < first_second_end_ns_) ++c.first_second_reads;
    if (!st.ok()) ++c.failures;
    c.readings += out.size() - before;
    return st;
  }
  const std::map<std::pair<std::size_t, wattlab::ReadingKind>, Count>& counts() const { return counts_; }

 private:
  wattlab::SensorPtr inner_;
  int64_t first_second_end_ns_ = 0;
  std::map<std::pair<std::size_t, wattlab::ReadingKind>, Count> counts_;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "bench_sampler_cpu: %s\nusage: bench_sampler_cpu [--seconds N] [--gpus N[,N...]] [--budget-step-cpu]\n", why.c_str());
  std::exit(2);
}

long parse_positive(std::string_view flag, const char* text, long max) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1 || v > max)
    usage(std::string(flag) + " '" + text + "' is not a whole number in 1.." + std::to_string(max));
  return v;
}

// Up to this many GPUs the sampler is held to 1 % of one core; above, the runs show how it grows.
constexpr int kHeldGpus = 8;

struct Figures {
  int gpus = 0;
  double sampler_pct = 0, in_reads_pct = 0, process_pct = 0;
  double counter_reads_per_gpu_s = 0, counter_first_second_per_gpu = 0, sample_reads_per_gpu_s = 0;
  bool pass = false;
};

// One meter over `gpus` simulated GPUs for `seconds`: prints its details, returns its figures.
Figures run_one(int gpus, long seconds, bool step_cpu) {
  wattlab::BackendOptions o;
  o.device = "sim";
  o.sim_gpus = gpus;
  wattlab::OpenedSensors opened = wattlab::open_sensors(o);
  std::vector<wattlab::SensorPtr> sensors;
  std::vector<CountingSensor*> counters;
  for (auto& s : opened.sensors) {
    auto c = std::make_unique<CountingSensor>(std::move(s));
    counters.push_back(c.get());
    sensors.push_back(std::move(c));
  }
  wattlab::MeterOptions options;
  options.budget_counts_step_cpu = step_cpu;
  wattlab::Meter meter(std::move(sensors), wattlab::MonotonicClock::instance(), options);
  const wattlab::MeterOptions& opt = meter.options();
  std::printf("bench_sampler_cpu: SIMULATED device (sim, %d GPU(s), H200 read costs spun on the sampler thread)\n", gpus);
  std::printf("MeterOptions: counter every %.3f s, power every %.3f s (at least a field's refresh beside a sample "
              "buffer, and for an averaged field), samples every %.3f s, "
              "telemetry every %.3f s\n",
              static_cast<double>(opt.counter_interval_ns) * 1e-9, static_cast<double>(opt.power_interval_ns) * 1e-9,
              static_cast<double>(opt.samples_interval_ns) * 1e-9,
              static_cast<double>(opt.telemetry_interval_ns) * 1e-9);
  std::printf("MeterOptions CPU budget: counter <= %.2f %%, each other reading <= %.2f %%, all reads <= %.2f %% of one core; "
              "violation counters every %.3f s; budget counts %s\n",
              100 * opt.counter_cpu_share, 100 * opt.reading_cpu_share, 100 * opt.sampler_cpu_share,
              static_cast<double>(opt.violation_interval_ns) * 1e-9,
              opt.budget_counts_step_cpu ? "each step's whole CPU (--budget-step-cpu)" : "the reads only (default)");

  // The whole life of the sampler is measured, start-up (the counter grid's probing) included.
  int64_t user0_ns = 0, sys0_ns = 0, user1_ns = 0, sys1_ns = 0;
  const int64_t proc0_ns = process_cpu_ns(&user0_ns, &sys0_ns);
  const int64_t t0_ns = clock_ns(CLOCK_MONOTONIC);
  // The sampler's first second: the counter grid's start-up probe.
  for (CountingSensor* c : counters) c->set_first_second_end(t0_ns + 1'000'000'000);
  meter.start();
  // Drain the readings every 500 ms, as the store's flusher does, so the export queue stays small.
  std::vector<wattlab::TimedReading> drained;
  uint64_t exported = 0;
  const int64_t end_ns = t0_ns + static_cast<int64_t>(seconds) * 1'000'000'000;
  while (clock_ns(CLOCK_MONOTONIC) < end_ns) {
    const int64_t left_ns = end_ns - clock_ns(CLOCK_MONOTONIC);
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(left_ns, 500'000'000)));
    drained.clear();
    exported += meter.drain_readings(drained);
  }
  meter.stop();
  const int64_t t1_ns = clock_ns(CLOCK_MONOTONIC);
  const int64_t proc1_ns = process_cpu_ns(&user1_ns, &sys1_ns);
  drained.clear();
  exported += meter.drain_readings(drained);

  const double wall_s = static_cast<double>(t1_ns - t0_ns) * 1e-9;
  const double sampler_s = static_cast<double>(meter.sampler_cpu_ns()) * 1e-9;
  const double proc_s = static_cast<double>(proc1_ns - proc0_ns) * 1e-9;
  int64_t in_reads_ns = 0;
  for (const CountingSensor* c : counters)
    for (const auto& [key, n] : c->counts()) in_reads_ns += n.wall_ns;
  const double sampler_pct = 100.0 * sampler_s / wall_s;

  std::printf("wall time (CLOCK_MONOTONIC): %.3f s, sampler start to stop\n", wall_s);
  std::printf("sampler thread CPU (getrusage RUSAGE_THREAD, 1 us resolution): %.4f s = %.3f %% of one core\n",
              sampler_s, sampler_pct);
  std::printf("  inside sensor reads (wall time around each read; the sim spins, so ~CPU): %.4f s = %.3f %% of one core\n",
              static_cast<double>(in_reads_ns) * 1e-9, 100.0 * static_cast<double>(in_reads_ns) * 1e-9 / wall_s);
  std::printf("  the rest (meter's bookkeeping, sleeping and waking): %.4f s = %.3f %% of one core\n",
              sampler_s - static_cast<double>(in_reads_ns) * 1e-9,
              100.0 * (sampler_s - static_cast<double>(in_reads_ns) * 1e-9) / wall_s);
  std::printf("process CPU (getrusage RUSAGE_SELF, all threads, draining included): %.4f s "
              "(user %.4f s, sys %.4f s) = %.3f %% of one core\n",
              proc_s, static_cast<double>(user1_ns - user0_ns) * 1e-9, static_cast<double>(sys1_ns - sys0_ns) * 1e-9,
              100.0 * proc_s / wall_s);
  std::printf("readings exported to the flusher queue: %llu\n", static_cast<unsigned long long>(exported));
  const wattlab::MeterSnapshot snap = meter.snapshot();
  std::printf("reads put off by the CPU budget: %llu of %llu; time inside reads by the meter's own count: %.4f s\n",
              static_cast<unsigned long long>(snap.sampler.stretched_reads),
              static_cast<unsigned long long>(snap.sampler.reads), static_cast<double>(snap.sampler.read_ns) * 1e-9);
  std::printf("thread CPU governor (target %.2f %% of one core for the whole thread): outside paid reads %.3f %%, "
              "so all reads may use %.3f %% (configured %.2f %%)\n",
              100.0 * meter.options().sampler_thread_cpu_share, 100.0 * snap.sampler.rest_cpu_share,
              100.0 * snap.sampler.read_cpu_share, 100.0 * meter.options().sampler_cpu_share);

  std::printf("reads per domain and reading kind over %.3f s:\n", wall_s);
  std::printf("  %-10s %-26s %8s %9s %8s %10s %12s %12s %12s\n", "domain", "kind", "reads", "reads/s", "failed",
              "readings", "ms_in_reads", "us_per_read", "model_us");
  for (const CountingSensor* c : counters)
    for (const auto& [key, n] : c->counts()) {
      const wattlab::Domain& d = c->domains().at(key.first);
      const wattlab::ReadingModel* m = d.model.find(key.second);
      std::printf("  %-10s %-26s %8llu %9.2f %8llu %10llu %12.3f %12.1f %12.1f\n", d.id.c_str(),
                  std::string(wattlab::to_string(key.second)).c_str(), static_cast<unsigned long long>(n.reads),
                  static_cast<double>(n.reads) / wall_s, static_cast<unsigned long long>(n.failures),
                  static_cast<unsigned long long>(n.readings), static_cast<double>(n.wall_ns) * 1e-6,
                  n.reads ? static_cast<double>(n.wall_ns) * 1e-3 / static_cast<double>(n.reads) : 0.0,
                  m ? static_cast<double>(m->read_cost_ns) * 1e-3 : 0.0);
    }

  Figures f;
  f.gpus = gpus;
  f.sampler_pct = sampler_pct;
  f.in_reads_pct = 100.0 * static_cast<double>(in_reads_ns) * 1e-9 / wall_s;
  f.process_pct = 100.0 * proc_s / wall_s;
  uint64_t counter_reads = 0, counter_first = 0, sample_reads = 0;
  for (const CountingSensor* c : counters)
    for (const auto& [key, n] : c->counts()) {
      if (key.second == wattlab::ReadingKind::energy_counter_j) {
        counter_reads += n.reads;
        counter_first += n.first_second_reads;
      } else if (key.second == wattlab::ReadingKind::power_sample_w) {
        sample_reads += n.reads;
      }
    }
  f.counter_reads_per_gpu_s = static_cast<double>(counter_reads) / gpus / wall_s;
  f.counter_first_second_per_gpu = static_cast<double>(counter_first) / gpus;
  f.sample_reads_per_gpu_s = static_cast<double>(sample_reads) / gpus / wall_s;
  const bool held = gpus <= kHeldGpus;
  f.pass = sampler_pct <= 1.0;
  std::printf("result: %s (sampler %.3f %% of one core, target <= 1 %%%s)\n\n", f.pass ? "PASS" : "FAIL", sampler_pct,
              held ? "" : "; not held to it above 8 GPUs");
  std::fflush(stdout);  // one GPU count at a time, when the output goes to a file
  return f;
}

// Parses "1,2,4,8": whole numbers in 1..64.
std::vector<int> parse_gpus(const char* text) {
  std::vector<int> out;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string one(rest.substr(0, comma));
    out.push_back(static_cast<int>(parse_positive("--gpus", one.c_str(), 64)));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  long seconds = 60;
  std::vector<int> gpu_counts = {1, 2, 4, 8, 16, 64};
  bool step_cpu = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--budget-step-cpu") {
      step_cpu = true;
    } else if (a == "--seconds" && i + 1 < argc) {
      seconds = parse_positive(a, argv[++i], 86'400);
    } else if (a == "--gpus" && i + 1 < argc) {
      gpu_counts = parse_gpus(argv[++i]);
    } else {
      usage("unknown argument '" + std::string(a) + "'");
    }
  }
  std::vector<Figures> all;
  for (int g : gpu_counts) all.push_back(run_one(g, seconds, step_cpu));

  std::printf("summary over %ld s each (SIMULATED H200s; target: the sampler thread <= 1 %% of one core for up to %d GPUs)\n",
              seconds, kHeldGpus);
  std::printf("  %5s %11s %12s %12s %18s %19s %16s  %s\n", "GPUs", "sampler_%", "in_reads_%", "process_%",
              "counter_reads/s/GPU", "probe_reads/GPU(1s)", "samples/s/GPU", "result");
  bool ok = true;
  for (const Figures& f : all) {
    const bool held = f.gpus <= kHeldGpus;
    if (held && !f.pass) ok = false;
    std::printf("  %5d %11.3f %12.3f %12.3f %18.3f %19.1f %16.2f  %s\n", f.gpus, f.sampler_pct, f.in_reads_pct,
                f.process_pct, f.counter_reads_per_gpu_s, f.counter_first_second_per_gpu, f.sample_reads_per_gpu_s,
                held ? (f.pass ? "PASS" : "FAIL") : "(how it grows; not held)");
  }
  return ok ? 0 : 1;
}
