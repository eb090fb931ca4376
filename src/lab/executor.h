// What runs a GEMM point: a small interface so the protocol and the sweep runner are tested in CI
// on the SIMULATED executor (sim_executor.h) and run on the GPU with cuBLASLt (cuda_executor.h).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wattlab/core/clock.h"
#include "wattlab/core/error.h"
#include "lab/engine.h"
#include "wattlab/meter/meter.h"
#include "wattlab/store/run_record.h"

namespace wattlab::lab {

// The controls of the study (X1-X3) run no GEMM.
enum class Control {
  none,    // a GEMM point
  idle,    // X3: nothing runs (a CUDA context is held)
  rest,    // X1: a buffer of `rest_bytes` filled with `fill_byte` sits in memory, no kernel
  toggle,  // X2: a kernel XORs every byte of the buffer with a mask of `toggle_bits` ones
};

// One GEMM configuration: engine, shape, operand recipes (recipe.h language) or files, and seed.
struct GemmSpec {
  Control control = Control::none;
  uint64_t rest_bytes = 0;
  int fill_byte = 0;
  int toggle_bits = 0;
  bool hold_context = true;  // X3: false measures idle after this process released its CUDA context
  Engine engine = Engine::bf16;
  int64_t m = 0, n = 0, k = 0;
  std::string recipe_a, recipe_b;
  // An operand read from a .npy file (npy.h) instead of generated: its path, and the SHA-256 of
  // the file when the point was planned (operand_file.h: the executor refuses a file that changed
  // since). recipe_a / recipe_b then hold the file's label ("file:<path> sha256:<16 hex>").
  std::string file_a, file_b;
  std::string file_sha256_a, file_sha256_b;
  uint64_t seed = 1;
  // Fidelity mode (docs/gemm-lab.md): the original's synchronized loop instead of a graph.
  bool fidelity = false;
};

// What prepare() learned: the graph's size, its duration, and the inputs' check.
struct Prepared {
  int64_t gemms_per_replay = 0;  // GEMMs captured in one graph replay
  double replay_s = 0;           // duration of one replay (measured, or modelled on the sim)
  std::optional<double> rel_error;  // spot check of C against the float64 reference
  double nonfinite_fraction = 0;    // share of C entries that are inf or NaN after one GEMM
  std::map<std::string, double> input_stats;  // bit statistics of A and B ("a_popcount_frac", ...)
  // Host wall time of each preparation step, s ("generate", "stats", "check", "capture"): where a
  // point's time goes besides warm-up and window (stored as counts prepare_<step>_s).
  std::map<std::string, double> step_s;
};

class GemmExecutor {
 public:
  virtual ~GemmExecutor() = default;
  virtual bool simulated() const = 0;
  virtual std::string description() const = 0;  // device, library versions; "SIMULATED ..." on the sim
  virtual Meter& meter() = 0;
  virtual Clock& clock() = 0;
  virtual std::vector<DeviceProperties> devices() const = 0;
  // Generates A and B on the device (or copies them from their files), checks them, captures a
  // graph of back-to-back GEMMs and calibrates its size so that one replay lasts about
  // `target_replay_s`.
  virtual Result<Prepared> prepare(const GemmSpec& spec, double target_replay_s) = 0;
  // Enqueues `replays` graph replays back to back and returns (the device works on).
  virtual Status launch(int64_t replays) = 0;
  // Waits until everything launched has finished (sim: moves the virtual clock through it).
  virtual Status synchronize() = 0;
  // The final result of a closed meter window (sim: first lets the timeline cover its end).
  virtual WindowResult window_result(WindowId id) = 0;
};

}  // namespace wattlab::lab
