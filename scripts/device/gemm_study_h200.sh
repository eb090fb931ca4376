#!/usr/bin/env bash
# On the H200: the GEMM input-power study's full grid at the publication protocol (every value of
# every sweep of E1-E15, seeds 1, 2 and 3, 2 s windows after a warm-up to a steady temperature),
# resumable across calls of at most BUDGET_MIN minutes. The points live in a wattlab store that
# travels between calls; after each call the store and a CSV of every point are committed under
# docs/results/gemm-h200-study/ (docs/results/gemm-h200-study/README.md).
#
#   (here)   cmake --preset cuda && cmake --build --preset cuda -j2 --target wattlab
#            mkdir -p build/gemm-study && gunzip -c docs/results/gemm-h200-study/study.db.gz > build/gemm-study/study.db
#   (device) run(command="bash scripts/device/gemm_study_h200.sh", carry=["build/cuda/src/cli/wattlab", "build/cuda/lib", "build/gemm-study"])
#   (here)   cp FILES_AT/study.db.gz FILES_AT/points.csv FILES_AT/calls/* docs/results/gemm-h200-study/...; commit
#
# Outputs under $OUT: study.db.gz (the store, WAL folded in), points.csv (python/bench/gemm_points_csv.py),
# state-begin.txt and state-end.txt (nvidia-smi -q), sweep.log, summary.txt.
# Knobs: WATTLAB, DB, BUDGET_MIN, ENGINES, SHAPES, SEEDS, EXPERIMENTS, WINDOW_S, WARMUP_S, WARMUP_MAX_S,
# FIRST_WARMUP_S. Changes no GPU setting: clocks, limits and persistence are only read.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/wattlab-gemm-study}"
mkdir -p "$OUT"
WATTLAB="${WATTLAB:-build/cuda/src/cli/wattlab}"
DB="${DB:-build/gemm-study/study.db}"
BUDGET_MIN="${BUDGET_MIN:-8.5}"
ENGINES="${ENGINES:-bf16}"
SHAPES="${SHAPES:-8192}"
SEEDS="${SEEDS:-1,2,3}"
EXPERIMENTS="${EXPERIMENTS:-E1,E2,E3,E4,E5,E6,E7,E8,E9,E10,E11,E12,E13,E14,E15}"
WINDOW_S="${WINDOW_S:-2}"
# Every point warms up at least WARMUP_S, then until its temperature is steady, at most WARMUP_MAX_S;
# each point stores whether it got steady (warmup_steady) and its last drift.
WARMUP_S="${WARMUP_S:-2}"
WARMUP_MAX_S="${WARMUP_MAX_S:-8}"
FIRST_WARMUP_S="${FIRST_WARMUP_S:-20}"
if [[ ! -x "$WATTLAB" ]]; then
  echo "no $WATTLAB: build here with cmake --preset cuda && cmake --build --preset cuda -j2 --target wattlab, and carry it" >&2
  exit 2
fi
export LD_LIBRARY_PATH="$PWD/build/cuda/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
mkdir -p "$(dirname "$DB")"
T0=$(date +%s)
left_min() { awk -v b="$BUDGET_MIN" -v t0="$T0" -v now="$(date +%s)" 'BEGIN { printf "%.2f", b - (now - t0) / 60 - 0.4 }'; }
SUM="$OUT/summary.txt"
date -u +"date %Y-%m-%dT%H:%M:%SZ" | tee "$SUM"
nvidia-smi -q > "$OUT/state-begin.txt" 2>&1
nvidia-smi --query-gpu=name,serial,driver_version,power.limit,pstate,clocks.sm,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee -a "$SUM"
"$WATTLAB" --version 2>&1 | head -1 | tee -a "$SUM"
echo "protocol: window ${WINDOW_S} s, warm-up ${WARMUP_S}-${WARMUP_MAX_S} s (first ${FIRST_WARMUP_S} s), engines $ENGINES, shapes $SHAPES, seeds $SEEDS" | tee -a "$SUM"

"$WATTLAB" gemm sweep --device nvml --db "$DB" --experiment "$EXPERIMENTS" --engines "$ENGINES" --shapes "$SHAPES" \
  --seeds "$SEEDS" --window-s "$WINDOW_S" --warmup-s "$WARMUP_S" --warmup-max-s "$WARMUP_MAX_S" \
  --first-warmup-s "$FIRST_WARMUP_S" --budget-min "$(left_min)" > "$OUT/sweep.log" 2>&1
rc=$?
echo "gemm sweep: exit $rc" | tee -a "$SUM"
grep -E "^plan|done:|stopped|complete|error|^time|FAIL" "$OUT/sweep.log" | tail -n 8 | tee -a "$SUM"
nvidia-smi -q > "$OUT/state-end.txt" 2>&1

# Fold the WAL into the database file so that the copy holds every stored point.
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$DB"
gzip -c "$DB" > "$OUT/study.db.gz"
python3 python/bench/gemm_points_csv.py "$DB" --out "$OUT/points.csv" 2>&1 | tee -a "$SUM"
ls -la "$OUT" | tee -a "$SUM"
exit $rc
