#!/usr/bin/env bash
# On the H200: wattlab's NVML energy against the NVML counter read directly.
#  (a) 60 s BF16 GEMM load (8192^3, cublasGemmEx, FP32 accumulation), six 10 s marks windows whose
#      edges sit on counter updates; the load reads the counter itself at each edge: per window
#      wattlab J ± U vs direct J (must agree within 1%), and the sampler's CPU (target <= 1% of a core);
#  (b) caller's cost of one window: 1000 marks open+close pairs, 1000 in-process Meter pairs, 1000
#      pairs of counter reads at both edges (a separate run, so its 1000 windows do not load (a)'s sampler);
#  (c) 30 windows of 100 ms over a step (50 ms GEMM burst, then idle): energy ± U per window, mean U vs std.
# Takes about 2.5 minutes (a+c ~85 s, b ~15 s, start-up and matrix fill ~20 s). Changes no GPU setting.
#
#   (here)   cmake --preset cuda && cmake --build --preset cuda -j2
#   (device) run(command="bash scripts/device/nvml_h200.sh", carry=["build/cuda"], timeout_s=600)
# Outputs under $OUT: nvidia-smi-q.txt, run-a.json, load-a.json, load-b.json, run-a.log, run-b.log
# (tail), summary.txt. Knobs: WATTLAB, LOAD, PAIRS, STEP_REPS.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/wattlab-nvml-out}"
mkdir -p "$OUT"
WATTLAB="${WATTLAB:-build/cuda/src/cli/wattlab}"
LOAD="${LOAD:-build/cuda/benchmarks/device/nvml_check_load}"
PAIRS="${PAIRS:-1000}"
STEP_REPS="${STEP_REPS:-30}"
for b in "$WATTLAB" "$LOAD"; do
  if [[ ! -x "$b" ]]; then
    echo "no $b: build here with cmake --preset cuda && cmake --build --preset cuda -j2, and carry build/cuda" >&2
    exit 2
  fi
done
TMP="$(mktemp -d)"
date -u +"date %Y-%m-%dT%H:%M:%SZ" | tee "$OUT/summary.txt"
nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,power.limit,pstate,clocks.sm,temperature.gpu,power.draw --format=csv 2>&1 |
  tee -a "$OUT/summary.txt"

echo "== (a)+(c): steady windows and step windows, one run" | tee -a "$OUT/summary.txt"
"$WATTLAB" run --device nvml --marks --db "$TMP/nvml.db" --json "$OUT/run-a.json" -- \
  "$LOAD" --phases steady,step --windows 6 --window-s 10 --warmup-s 3 --step-reps "$STEP_REPS" \
  --results "$OUT/load-a.json" > "$OUT/run-a.log" 2>&1
echo "run a: exit $?" | tee -a "$OUT/summary.txt"
grep -E "GEMM|direct counter|wattlab CPU|^step" "$OUT/run-a.log"

echo "== (b): window cost" | tee -a "$OUT/summary.txt"
"$WATTLAB" run --device nvml --marks --db "$TMP/nvml.db" --json "$TMP/run-b.json" -- \
  "$LOAD" --phases cost --pairs "$PAIRS" --results "$OUT/load-b.json" > "$TMP/run-b.log" 2>&1
echo "run b: exit $?" | tee -a "$OUT/summary.txt"
# The cost run holds $PAIRS windows: keep only the log's head and tail, and not its JSON.
{ head -n 20 "$TMP/run-b.log"; echo "..."; tail -n 30 "$TMP/run-b.log"; } > "$OUT/run-b.log"

echo "== comparison (python/bench/nvml_check.py)" | tee -a "$OUT/summary.txt"
python3 python/bench/nvml_check.py "$OUT/run-a.json" "$OUT/load-a.json" \
  --cost-load "$OUT/load-b.json" --cost-run "$TMP/run-b.json" 2>&1 | tee -a "$OUT/summary.txt"
echo "nvml_check: exit ${PIPESTATUS[0]}" | tee -a "$OUT/summary.txt"
nvidia-smi --query-gpu=pstate,clocks.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1 | sed 's/^/after: /' |
  tee -a "$OUT/summary.txt"
rm -rf "$TMP"
exit 0
