#!/usr/bin/env bash
# The main job on a fresh machine: dependencies, an optimized build of the wattlab binary alone (the
# `main` preset: no tests, no benchmarks), then the energy of a short workload. On a machine with an
# NVIDIA GPU it measures the GPU; without one, the simulated GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh >&2
cmake --preset main >&2
cmake --build --preset main >&2
W=./build/main/src/cli/wattlab
if $W sensors --device nvml >/dev/null 2>&1; then
  echo "wattlab main job: measuring the NVIDIA GPU(s) found here"
  exec $W run --device auto --db wattlab.db --json wattlab-run.json -- sleep 5
else
  echo "wattlab main job: no NVIDIA GPU here, so this measures the SIMULATED GPU (not hardware)"
  exec $W run --device sim --db wattlab.db --json wattlab-run.json -- sleep 5
fi
