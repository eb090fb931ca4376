// `wattlab run`'s per-process part: the options, a ProcessSampler over the recording's GPUs whose
// process tree root is this process (so the command and its descendants are the command's tree),
// and the split of the run window's GPU energy. Nothing happens on devices without processes (the
// simulated GPU): no thread, no output.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "meter/process_split.h"
#include "wattlab/meter/window.h"
#include "record/process_sampler.h"
#include "wattlab/record/recording.h"

namespace wattlab::cli {

struct ProcessOptions {
  std::optional<double> idle_power_w;
  double idle_power_u95_w = 0;
  int interval_ms = 500;
  double forget_s = 300;  // serve: a process's series is dropped after this long without energy
};

// --idle-power-w, --idle-power-u95-w, --process-interval-ms; with `serve`, --process-forget-s.
void add_process_options(CLI::App& sub, ProcessOptions& o, bool serve = false);

class RunProcesses {
 public:
  // Before rec.start(): the sensors move into the meter there, and their addresses stay.
  RunProcesses(Recording& rec, const ProcessOptions& o);
  void start();  // after rec.start()
  void stop();   // after the command ended, before rec.end()
  // The split of each GPU of `w` on which some process was seen; empty otherwise. A GPU whose
  // split fails is left out, with a note.
  std::vector<GpuAttribution> attribute(const WindowResult& w);
  // Why a GPU has no split, and the first error each GPU's process query returned.
  std::vector<std::string> notes() const;

 private:
  Recording& rec_;
  ProcessOptions opt_;
  std::vector<Sensor*> sensors_;
  std::unique_ptr<ProcessSampler> sampler_;
  std::vector<std::string> notes_;
};

}  // namespace wattlab::cli
