#!/usr/bin/env bash
# Meter overhead on the H200 host, one command:
#  (1) bench_sampler_cpu --seconds 60: the sampler on the sim device (SIMULATED H200 read costs,
#      spun on the sampler thread) over 60 s of real time; target <= 1% of one core;
#  (2) bench_meter_window: open+close on the caller's thread (sim device, sampler running);
#      target <= 1 us median (p50 of BM_OpenClosePercentiles);
#  (3) 60 s of BF16 GEMM (8192^3, cublasGemmEx) under `wattlab run --device nvml --marks`, six 10 s
#      marks windows on counter updates: the sampler's CPU on the real GPU (target <= 1% of one
#      core), and each window against the NVML counter read directly (within 1%), by
#      python/bench/nvml_check.py.
# Takes about 2.5 minutes: (1) 61 s, (2) ~5 s (4 s on the 2-core dev box), (3) ~80 s plus start-up;
# each part has a timeout (90 s, 120 s, 150 s), so at most 6 minutes. Changes no GPU setting.
#
#   (here)   cmake --preset cuda && cmake --build --preset cuda -j2
#            (builds the benchmarks too and copies Google Benchmark's shared library to build/cuda/lib)
#   (device) LD_LIBRARY_PATH=$PWD/build/cuda/lib OUT=... bash scripts/device/overhead_h200.sh
# Outputs under $OUT: nvidia-smi-q.txt, sampler-sim.txt, window-sim.txt, run.json, load.json,
# run.log, summary.txt (the PASS/FAIL lines), overhead.db.gz (the store of part 3). Knobs: WATTLAB, LOAD, BENCH, SAMPLER_S.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/wattlab-overhead-out}"
mkdir -p "$OUT"
WATTLAB="${WATTLAB:-build/cuda/src/cli/wattlab}"
LOAD="${LOAD:-build/cuda/benchmarks/device/nvml_check_load}"
BENCH="${BENCH:-build/cuda/benchmarks}"
SAMPLER_S="${SAMPLER_S:-60}"
S="$OUT/summary.txt"
missing=0
for b in "$WATTLAB" "$LOAD" "$BENCH/bench_sampler_cpu" "$BENCH/bench_meter_window"; do
  if [[ ! -x "$b" ]]; then
    echo "no $b: build here with cmake --preset cuda && cmake --build --preset cuda -j2, and carry build/cuda" >&2
    missing=1
  elif ldd "$b" | grep -q "not found"; then
    echo "$b: shared libraries not found (set LD_LIBRARY_PATH=\$PWD/build/cuda/lib):" >&2
    ldd "$b" | grep "not found" >&2
    missing=1
  fi
done
[[ $missing == 0 ]] || exit 2
TMP="$(mktemp -d)"
t_start=$(date +%s)
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  # The binaries' own commit: the device's copy of the tree may carry other git metadata.
  echo "build: $("$WATTLAB" --version 2>&1)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
  echo "load before (/proc/loadavg): $(cat /proc/loadavg)"
} | tee "$S"
nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,power.limit,pstate,clocks.sm,temperature.gpu,power.draw --format=csv 2>&1 | tee -a "$S"

echo "== (1) sampler CPU on the sim device: $BENCH/bench_sampler_cpu --seconds $SAMPLER_S" | tee -a "$S"
timeout $((SAMPLER_S + 30)) "$BENCH/bench_sampler_cpu" --seconds "$SAMPLER_S" > "$OUT/sampler-sim.txt" 2>&1
rc1=$?
cat "$OUT/sampler-sim.txt"
v1=$(grep -E "^result:" "$OUT/sampler-sim.txt" || echo "result: FAIL (no result line, exit $rc1)")
echo "(1) sim sampler CPU (target <= 1% of one core): $v1" | tee -a "$S"

echo "== (2) window open+close on the caller's thread (sim device)" | tee -a "$S"
timeout 120 "$BENCH/bench_meter_window" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  > "$OUT/window-sim.txt" 2>&1
rc2=$?
cat "$OUT/window-sim.txt"
grep -E "^open\+close p50" "$OUT/window-sim.txt" | sed 's/^/(2) /' | tee -a "$S"
v2=$(grep -E "^result:" "$OUT/window-sim.txt" || echo "result: FAIL (no result line, exit $rc2)")
echo "(2) window open+close (target <= 1 us median): $v2" | tee -a "$S"
grep -E "^sampler CPU during the benchmarks" "$OUT/window-sim.txt" | sed 's/^/(2) /' | tee -a "$S"

echo "== (3) 60 s BF16 GEMM under wattlab run on the H200 (real NVML)" | tee -a "$S"
echo "load before (3) (/proc/loadavg): $(cat /proc/loadavg)" | tee -a "$S"
timeout 150 "$WATTLAB" run --device nvml --marks --db "$TMP/overhead.db" --json "$OUT/run.json" -- \
  "$LOAD" --phases steady --windows 6 --window-s 10 --warmup-s 3 --results "$OUT/load.json" > "$OUT/run.log" 2>&1
echo "(3) wattlab run: exit $?" | tee -a "$S"
grep -E "GEMM|direct counter|wattlab CPU" "$OUT/run.log"
cpu_line=$(grep -m1 "wattlab CPU: sampler thread" "$OUT/run.log")
pct=$(sed -n 's/.*sampler thread [0-9.]* s = \([0-9.]*\)% of one core.*/\1/p' <<<"$cpu_line")
if [[ -n "$pct" ]]; then
  verdict=$(awk -v p="$pct" 'BEGIN { print (p <= 1.0) ? "PASS" : "FAIL" }')
  echo "(3) H200 sampler CPU: $pct% of one core, target <= 1%: $verdict ($cpu_line)" | tee -a "$S"
else
  echo "(3) H200 sampler CPU: FAIL (no 'wattlab CPU' line in run.log)" | tee -a "$S"
fi
python3 python/bench/nvml_check.py "$OUT/run.json" "$OUT/load.json" 2>&1 | sed 's/^/(3) /' | tee -a "$S"
echo "(3) nvml_check: exit ${PIPESTATUS[0]}" | tee -a "$S"
nvidia-smi --query-gpu=pstate,clocks.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1 | sed 's/^/after: /' | tee -a "$S"
echo "== verdicts (wall time $(( $(date +%s) - t_start )) s)" | tee -a "$S"
grep -E "^\((1|2|3)\) .*(target|nvml_check: exit|overall)" "$S" | grep -v "^== "
# The run's store, for the reads per kind and their costs (readings and telemetry carry read_dur_ns).
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" \
  "$TMP/overhead.db" && gzip -c "$TMP/overhead.db" > "$OUT/overhead.db.gz"
rm -rf "$TMP"
exit 0
