// What every part of meter_validate shares: the options, the meter, the counter read on the
// caller's thread, the poller, the results log, the loads and the levels measured so far, the
// time budget (a deadline and SIGTERM), and small helpers for edges on counter updates.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "copy_load.h"
#include "direct_counter.h"
#include "gemm_load.h"
#include "mma_load.h"
#include "nvml_poller.h"
#include "window_log.h"
#include "wattlab/meter/meter.h"

namespace wattlab::device {

struct Options {
  std::string half = "a";  // the label of this device command in the CSV
  std::string parts = "levels,short,memory";
  std::string levels = "below,near,cap";
  std::string out_dir = ".";
  double deadline_s = 465;
  uint64_t seed = 1;
  int gemm_n = 8192;
  double unit_ms = 0.5;       // the tensor kernel's unit, tuned at start
  int below_blocks = 0;       // 0: a quarter of the SMs
  int near_blocks = 0;        // 0: chosen by probes
  double near_target = 0.85;  // of the enforced power limit
  double settle_s = 3, idle_s = 4;
  double warm_s = 1.5;        // load before the first edge of a steady phase
  double steady_s = 20;       // steady phase between its first and last edge on counter updates
  std::vector<double> steady_lengths = {0.05, 0.1, 0.25, 0.6, 2, 10};
  int steady_reps = 12;
  bool steady_windows = true;
  std::vector<double> burst_lengths = {0.05, 0.1, 0.25, 0.6, 2};
  int burst_reps = 16;
  int long_burst_reps = 12;  // for lengths of 1 s and more
  double gap_min_s = 0.25, gap_max_s = 0.75;
  int nburst_max = 16;
  int nburst_reps = 1;
  double nburst_busy_s = 0.05, nburst_period_s = 0.1;
  std::vector<double> duty_hz = {1, 5, 20, 50};
  std::vector<double> duty_pct = {10, 30, 50, 70, 90};
  double duty_window_s = 1.0;  // at least two periods
  std::string afterload_levels = "cap";
  int afterload_reps = 3;
  double afterload_load_s = 5, afterload_idle_s = 3;
  std::string split_levels = "below,near,cap";
  std::string shift_levels = "cap,near";
  std::vector<double> shifts_ms = {-100, -50, -20, -10, 0, 10, 20, 50, 100};
  double shift_window_s = 0.5;
  int shift_reps = 1;
  // Chained windows of n counter updates at idle and each level (part "calib").
  std::string calib_levels = "idle,below,near,cap";
  std::vector<int> calib_updates = {1, 2, 3, 6, 20};
  int calib_reps = 16;
  double memory_load_s = 4;
  double copy_mib = 2048;
  double poll_ms = 10;
  // The run's store: the meter's readings and every window (with the CSV row's labels and
  // references) go into one run of a wattlab SQLite store, so `wattlab report --holdout` can
  // re-estimate windows from the readings afterwards. Empty: no store.
  std::string db;
  // The meter's energy-counter interval. At the update period (100 ms) the store holds every
  // counter update, the truth a hold-out check hides and re-estimates (docs/holdout.md).
  double counter_interval_ms = 1000;
};

// An edge on a counter update: the counter read until its value changed.
struct AlignedEdge {
  UpdateEdge e;
  int64_t t_ns() const { return e.before.t_begin_ns + (e.after.t_end_ns - e.before.t_begin_ns) / 2; }
  double half_s() const { return static_cast<double>(e.after.t_end_ns - e.before.t_begin_ns) * 0.5e-9; }
};

// One power level: its load and what its steady phase measured (energy counter on updates).
struct Level {
  std::string name;  // below | near | cap
  UnitLoad* load = nullptr;
  double unit_s_timed = kNaN;  // one unit's GPU time, CUDA events, before the steady phase
  bool measured = false;
  double power_w = kNaN;           // mean over the steady phase
  double p1_w = kNaN, p2_w = kNaN;  // its first and second half
  int64_t t1_ns = 0, t2_ns = 0;    // their midpoints
  double e_unit_j = kNaN, t_unit_s = kNaN, capped_share = kNaN, sm_clock_mhz = kNaN;
  double unit_s() const;
  double power_at(int64_t t_ns) const;  // linear through the two halves
  nlohmann::json to_json() const;
};

struct Loads {
  std::unique_ptr<GemmLoad> cap;
  std::unique_ptr<MmaLoad> below, near_mma;
  std::unique_ptr<GemmLoad> near_gemm;  // made when the probes pick a GEMM on fewer SMs
  std::unique_ptr<CopyLoad> copy;
  int mma_iters = 0;
};

// SIGTERM and SIGINT end the current set early; what was measured is written.
void install_stop_handler();
bool stop_requested();

class Context {
 public:
  // `start_ns`: when the program started; the deadline counts from there.
  Context(const Options& o, Meter& meter, DirectCounter& counter, NvmlPoller& poller, WindowLog& log, Loads& loads,
          int64_t start_ns);

  const Options& opt;
  Meter& meter;
  DirectCounter& counter;
  NvmlPoller& poller;
  WindowLog& log;
  Loads& loads;
  std::map<std::string, Level> levels;
  double idle_w = kNaN;
  double power_limit_w = kNaN;
  nlohmann::json notes = nlohmann::json::object();  // probes, skipped sets

  static constexpr double kReserveS = 15;  // kept for the last results and the files
  double elapsed_s() const;
  // True when `need_s` more still leaves kReserveS before the deadline and no stop was asked.
  bool has_time(double need_s) const;
  void skip(const std::string& what, double need_s);  // notes and prints a set left out
  void progress(const std::string& part, const std::string& level, const std::string& text) const;
  bool selected(const std::string& list, const std::string& level) const;  // in `list` and in --levels

  AlignedEdge aligned() const;
  CounterRead read() const;
  double uniform(double a, double b);
  std::mt19937_64& rng() { return rng_; }
  void sleep_until(int64_t t_ns) const;  // returns at once after SIGTERM/SIGINT: the parts then wind up
  // A window between two edges on counter updates: the counter delta is its exact reference.
  WindowPlan exact(const std::string& part, const std::string& level, const std::string& set, const std::string& role,
                   int repeat, const AlignedEdge& a, const AlignedEdge& b) const;
  static std::string name_of(const WindowPlan& p);
  // A plan with its labels and its name set (edges and measurements still to fill in).
  static WindowPlan labelled(const std::string& part, const std::string& level, const std::string& set,
                             const std::string& role, int repeat);
  // Logs a load phase [t_on, t_off] (role "phase"): wattlab's window over it, and the trace's index.
  void add_phase(const std::string& part, const std::string& level, const std::string& set, int repeat, int64_t t_on,
                 int64_t t_off);

 private:
  int64_t start_ns_, deadline_ns_;
  std::mt19937_64 rng_;
};

std::string fmt_len(double s);  // "0.05", "2", "10": set names
int64_t s_to_ns(double s);

// The parts (validate_*.cpp).
void run_levels(Context& c);
void run_short(Context& c);
void run_memory(Context& c);
void run_edges(Context& c);
void run_shifts(Context& c);
void run_linearity(Context& c);
void run_calib(Context& c);
// Planned seconds of the calib part at idle (`idle`) or at one level.
double calib_need_s(const Options& o, bool idle);
// Planned seconds of each part at each level for these options, as printed up front.
nlohmann::json plan(const Options& o, const std::vector<std::string>& parts, const std::vector<std::string>& levels);

}  // namespace wattlab::device
