#!/usr/bin/env bash
# wattlab sensors --characterize on the H200. About 75 s for one GPU:
# idle settle (2-10 s) + 2 s idle, 2 s back-to-back polling per reading (~20 readings), a 10 s FMA
# kernel load. Run from the repo root after `cmake --preset cuda && cmake --build --preset cuda`,
# with build/cuda carried. Writes $OUT/nvidia-smi-q.txt, $OUT/char.db, $OUT/characterize.json and
# prints the table. Changes no GPU setting.
set -euo pipefail
OUT=${OUT:?set OUT to an empty folder}
BIN=build/cuda/src/cli/wattlab
nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1 || echo "nvidia-smi -q failed (rc $?)"
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,persistence_mode,power.limit,temperature.gpu --format=csv || true
# GPU 0 only keeps it under 2 minutes; every reading of gpu:0 and gpu:0/memory is characterized.
rc=0
timeout 170 "$BIN" sensors --characterize --device nvml --gpus 0 --db "$OUT/char.db" --json "$OUT/characterize.json" || rc=$?
echo "wattlab rc=$rc"
ls -la "$OUT"
