#!/usr/bin/env bash
# On the H200: the input-dependent power study (E1-E15, X1-X3) at 2048^3 and 8192^3
# on bf16, fp16, fp16acc16, fp32, fp8e4m3 and int8, plus a repeatability sweep (the reference point
# on three seeds), resumable across calls.
#
# Each call works for at most BUDGET_MIN minutes (default 8.5, under the device's 10-minute limit)
# and stops between points; the next call with the same database resumes where it stopped:
#   (here)   cmake --preset cuda && cmake --build --preset cuda -j2   (libs in build/cuda/lib)
#   (device) run(command="bash scripts/device/gemm_h200.sh", carry=["build/cuda", "build/gemm-h200"])
#   (here)   mkdir -p build/gemm-h200 && gunzip -c FILES_AT/gemm.db.gz > build/gemm-h200/study.db
#   ... again until summary.txt says "study complete".
# Order inside a call: the accuracy check (first call only), the study, then the repeat sweep.
# Outputs under $OUT (8 files): state.txt (nvidia-smi -q), check.txt, study.log, repeat.log,
# report.md (wattlab report --gemm --format md), plots.tgz (SVG, where gnuplot is), gemm.db.gz, summary.txt.
# Knobs: WATTLAB, DB, BUDGET_MIN, WINDOW_S, WARMUP_S, WARMUP_MAX_S, FIRST_WARMUP_S, MAX_VALUES, ENGINES, SHAPES,
# SEEDS, REPEAT_SEEDS. Changes no GPU setting.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/wattlab-gemm-out}"
mkdir -p "$OUT"
WATTLAB="${WATTLAB:-build/cuda/src/cli/wattlab}"
# study.db, not the gemm.db of 2026-12-03: those 254 points were measured before the meter let the
# uneven sample buffer shape short windows (docs/results/gemm-h200.md), and the same protocol would
# resume them.
DB="${DB:-build/gemm-h200/study.db}"
BUDGET_MIN="${BUDGET_MIN:-8.5}"
WINDOW_S="${WINDOW_S:-0.6}"
WARMUP_S="${WARMUP_S:-0.3}"
# 658 points in 20 minutes leave no room to wait for a steady temperature at every point (it took
# 2.5 s a point on average on 2026-12-03); the interleaved reference points track the drift instead.
# 0.5 s is one warm-up chunk: about 0.2 + 0.5 + 0.6 s a point (prepare, warm-up, window), ~15 min.
WARMUP_MAX_S="${WARMUP_MAX_S:-0.5}"
FIRST_WARMUP_S="${FIRST_WARMUP_S:-10}"
MAX_VALUES="${MAX_VALUES:-3}"
ENGINES="${ENGINES:-bf16,fp16,fp16acc16,fp32,fp8e4m3,int8}"
SHAPES="${SHAPES:-2048,8192}"
SEEDS="${SEEDS:-1}"
REPEAT_SEEDS="${REPEAT_SEEDS:-1,2,3}"
if [[ ! -x "$WATTLAB" ]]; then
  echo "no $WATTLAB: build here with cmake --preset cuda && cmake --build --preset cuda -j2, and carry build/cuda" >&2
  exit 2
fi
export LD_LIBRARY_PATH="$PWD/build/cuda/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
mkdir -p "$(dirname "$DB")"
T0=$(date +%s)
left_min() { awk -v b="$BUDGET_MIN" -v t0="$T0" -v now="$(date +%s)" 'BEGIN { printf "%.2f", b - (now - t0) / 60 }'; }
SUM="$OUT/summary.txt"
date -u +"date %Y-%m-%dT%H:%M:%SZ" | tee "$SUM"
nvidia-smi -q > "$OUT/state.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,power.limit,pstate,clocks.sm,temperature.gpu,power.draw --format=csv 2>&1 | tee -a "$SUM"
"$WATTLAB" --version 2>&1 | head -1 | tee -a "$SUM"

COMMON=(--device nvml --db "$DB" --window-s "$WINDOW_S" --warmup-s "$WARMUP_S" --warmup-max-s "$WARMUP_MAX_S"
        --first-warmup-s "$FIRST_WARMUP_S")

if [[ ! -s "$DB" ]]; then
  echo "== accuracy check (fresh random inputs, every engine)" | tee -a "$SUM"
  "$WATTLAB" gemm check --device nvml --engines all --shapes 1024,2048x2048x4096 > "$OUT/check.txt" 2>&1
  echo "gemm check: exit $?" | tee -a "$SUM"
  tail -n 3 "$OUT/check.txt" | tee -a "$SUM"
fi

echo "== study (budget $(left_min) min)" | tee -a "$SUM"
"$WATTLAB" gemm study "${COMMON[@]}" --engines "$ENGINES" --shapes "$SHAPES" --seeds "$SEEDS" \
  --max-values "$MAX_VALUES" --budget-min "$(left_min)" > "$OUT/study.log" 2>&1
rc=$?
echo "gemm study: exit $rc" | tee -a "$SUM"
grep -E "SIMULATED|points|stopped|done|complete|error|^time" "$OUT/study.log" | tail -n 6 | tee -a "$SUM"
study_done=0
grep -q "stopped at budget" "$OUT/study.log" || { [[ $rc -eq 0 ]] && study_done=1; }

if [[ $study_done -eq 1 ]] && awk -v l="$(left_min)" 'BEGIN { exit !(l > 0.5) }'; then
  echo "== repeatability: E3's first value and the reference on seeds $REPEAT_SEEDS (budget $(left_min) min)" | tee -a "$SUM"
  "$WATTLAB" gemm sweep "${COMMON[@]}" --experiment E3 --max-values 1 --engines "$ENGINES" --shapes "$SHAPES" \
    --seeds "$REPEAT_SEEDS" --budget-min "$(left_min)" > "$OUT/repeat.log" 2>&1
  rc=$?
  echo "gemm sweep (repeat): exit $rc" | tee -a "$SUM"
  tail -n 3 "$OUT/repeat.log" | tee -a "$SUM"
  if [[ $rc -eq 0 ]] && ! grep -q "stopped at budget" "$OUT/repeat.log"; then echo "study complete" | tee -a "$SUM"; fi
fi

# The H200 machine has no gnuplot (2026-12-03): there the tables come back and the plots are made
# here from gemm.db.gz (docs/results/gemm-h200.md says how).
if command -v gnuplot > /dev/null || [[ -n "${WATTLAB_GNUPLOT:-}" ]]; then
  "$WATTLAB" report --gemm all --db "$DB" --format md --plots-dir "$OUT/plots" > "$OUT/report.md" 2>&1
  echo "report: exit $?" | tee -a "$SUM"
  tar -czf "$OUT/plots.tgz" -C "$OUT" plots 2>/dev/null && rm -rf "$OUT/plots"
else
  "$WATTLAB" report --gemm all --db "$DB" --format md > "$OUT/report.md" 2>&1
  echo "report: exit $? (tables only: no gnuplot here; make the plots from gemm.db.gz with --plots-dir)" | tee -a "$SUM"
fi
# Fold the WAL into the database file so that the copy holds every stored point.
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$DB"
gzip -c "$DB" > "$OUT/gemm.db.gz"
ls -la "$OUT" | tee -a "$SUM"
