#!/usr/bin/env bash
# The meter's validation on the H200 (docs/results/meter-validation-h200.md), in two halves, each
# one device command of at most 8.5 minutes:
#   a: levels (idle; below, near and at the power cap: steady phases with windows of 0.05-10 s
#      inside), short (isolated bursts of 0.05-2 s), memory (HBM copies: the memory domain);
#   b: levels (again: this machine's reference rates), edges (an idle window right after 5 s of
#      load, split phases, windows shifted across transitions), linearity (N bursts, duty cycles);
#   c: the short mode for the hold-out check and the memory domain (about 5 minutes): idle 20 s,
#      steady phases of 40 s at the three levels (windows of 0.05-10 s inside), idle<->load
#      transitions (one after-load window, split phases, three shifts at the cap), an 8 s HBM copy
#      phase; the meter reads the energy counter at every update (100 ms) and everything goes
#      into a wattlab store, meter-c.db (gzipped), for `wattlab report --holdout` here;
#   d: the calibration run (about 5 minutes): levels with 10 s steady phases and no windows inside,
#      then windows of 1, 2, 3, 6 and 20 counter updates chained through a steady phase at idle and
#      at each level, 16 of each, every edge on a counter update: the exact truth for short windows.
# benchmarks/device/meter_validate prints its plan first (about 365 s for a, 400 s for b) and starts
# no new work that would end past DEADLINE_S (465 s); `timeout` stops it at 490 s (SIGTERM: it writes
# what it has) and kills it 10 s later (c: plan about 270 s, deadline 330 s; d: plan about 300 s,
# deadline 400 s). Changes no GPU setting: clocks, power limit and persistence
# are only read.
#
#   (here)   cmake --preset cuda && cmake --build --preset cuda -j2 --target meter_validate
#            (also copies libfmt, which the GPU machine lacks, to build/cuda/lib)
#   (device) run(command="bash scripts/device/meter_validate_h200.sh a", timeout_s=540,
#                carry=["build/cuda/benchmarks/device/meter_validate", "build/cuda/lib"])
#            then the same with "b" (or "c" or "d", timeout_s=460).
# Outputs under $OUT (6 files; c: 7, with meter-c.db.gz): windows-H.csv, state-H.json, trace-H.csv, run-H.log,
# nvidia-smi-q-H.txt, summary-H.md (python/bench/meter_validate.py's tables of this half; run it
# on both halves' files together for the whole page). Knobs: BIN, DEADLINE_S, EXTRA (more flags).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
HALF="${1:-}"
OUT="${OUT:-/tmp/wattlab-meter-validate-out}"
MODE_FLAGS=()
DB=""
case "$HALF" in
  a) PARTS=levels,short,memory ;;
  b) PARTS=levels,edges,linearity ;;
  c)
    PARTS=levels,memory,edges
    DB="$OUT/meter-c.db"
    MODE_FLAGS=(--db "$DB" --counter-interval-ms 100 --idle-s 20 --steady-s 40 --memory-load-s 8
                --afterload-reps 1 --shift-levels cap --shifts-ms=-50,0,50)
    ;;
  d)
    PARTS=levels,calib
    MODE_FLAGS=(--steady-s 10 --no-steady-windows)
    ;;
  *)
    echo "usage: $0 a|b|c|d   (a: levels,short,memory; b: levels,edges,linearity; c: short hold-out and memory run;" \
      "d: calibration on chained windows)" >&2
    exit 2
    ;;
esac
mkdir -p "$OUT"
BIN="${BIN:-build/cuda/benchmarks/device/meter_validate}"
case "$HALF" in
  c) DEADLINE_S="${DEADLINE_S:-330}" ;;
  d) DEADLINE_S="${DEADLINE_S:-400}" ;;
  *) DEADLINE_S="${DEADLINE_S:-465}" ;;
esac
EXTRA="${EXTRA:-}"
export LD_LIBRARY_PATH="$PWD/build/cuda/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
if [[ ! -x "$BIN" ]]; then
  echo "no $BIN: build here with cmake --preset cuda && cmake --build --preset cuda -j2 --target meter_validate," \
    "and carry it and build/cuda/lib" >&2
  exit 2
fi
if ldd "$BIN" | grep -q "not found"; then
  echo "$BIN: shared libraries not found (LD_LIBRARY_PATH=$LD_LIBRARY_PATH):" >&2
  ldd "$BIN" | grep "not found" >&2
  exit 2
fi
S="$OUT/summary-$HALF.md"
t_start=$(date +%s)
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  # The binary's own commit: the device's copy of the tree may carry other git metadata.
  echo "build: $("$BIN" --version 2>&1)"
  echo "half $HALF: parts $PARTS, deadline ${DEADLINE_S} s${EXTRA:+, extra flags: $EXTRA}"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$S"
nvidia-smi -q > "$OUT/nvidia-smi-q-$HALF.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,power.limit,pstate,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee -a "$S"

# shellcheck disable=SC2086  # EXTRA is a list of flags
[[ -n "$DB" ]] && rm -f "$DB" "$DB-wal" "$DB-shm"
timeout -k 10 $((DEADLINE_S + 25)) "$BIN" --half "$HALF" --parts "$PARTS" --out "$OUT" --deadline-s "$DEADLINE_S" \
  "${MODE_FLAGS[@]}" $EXTRA \
  2>&1 | tee "$OUT/run-$HALF.log"
rc=${PIPESTATUS[0]}
echo "meter_validate: exit $rc" | tee -a "$S"
nvidia-smi --query-gpu=pstate,clocks.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1 | sed 's/^/after: /' | tee -a "$S"
if [[ -n "$DB" && -s "$DB" ]]; then
  # One file (no WAL beside it), compressed for the trip back.
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$DB"
  gzip -f "$DB" && echo "store: $(basename "$DB").gz, $(stat -c %s "$DB.gz") bytes" | tee -a "$S"
fi

inputs=()
for f in "windows-$HALF.csv" "state-$HALF.json" "trace-$HALF.csv"; do
  [[ -s "$OUT/$f" ]] && inputs+=("$OUT/$f")
done
if [[ -s "$OUT/windows-$HALF.csv" ]]; then
  echo >> "$S"
  python3 python/bench/meter_validate.py "${inputs[@]}" >> "$S" 2>&1
  echo "meter_validate.py: exit $?" | tee -a "$S"
else
  echo "no windows-$HALF.csv: nothing to analyse" | tee -a "$S"
fi
echo "wall time $(($(date +%s) - t_start)) s" | tee -a "$S"
# The tables most often read first; the whole page is summary-$HALF.md.
sed -n '/^## Levels/,/^## (1)/p;/^## (3)/,/^## (5)/p' "$S" | grep -v '^## (1)\|^## (5)'
exit "$rc"
