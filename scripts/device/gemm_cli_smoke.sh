#!/usr/bin/env bash
# `wattlab gemm` on the GPU (docs/gemm-cli.md): the accuracy check of every engine, one bf16
# point at 8192^3, one fidelity point (fp16acc16, 2048^3, no warm-up), and a small resumable
# sweep (E3, E11 on bf16 at 8192^3, 2 seeds, 3 values) cut by --budget-min 3 then resumed.
# Takes about 6 minutes (check < 1 min, points ~1 min, sweep 2 x <= 3 min); one command.
#
#   (here)   cmake --preset cuda && cmake --build --preset cuda --target wattlab
#   (device) run(command="bash scripts/device/gemm_cli_smoke.sh", carry=["build/cuda"], timeout_s=600)
# Outputs under $OUT: check.txt, run_bf16.txt, run_fidelity.txt, sweep_1.txt, sweep_2.txt,
# gemm.db (the stored points), nvidia-smi.txt. Exit status: 0 when every step exits 0.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/wattlab-gemm-cli-out}"
mkdir -p "$OUT"
BIN="${BIN:-build/cuda/src/cli/wattlab}"
if [[ ! -x "$BIN" ]]; then
  echo "no wattlab at $BIN: build it here (cmake --preset cuda && cmake --build --preset cuda --target wattlab)" \
       "and carry build/cuda" >&2
  exit 2
fi
nvidia-smi -q > "$OUT/nvidia-smi.txt" 2>&1 || true
DB="$OUT/gemm.db"
status=0
step() {  # name, then the wattlab arguments; prints everything, keeps going on failure
  local name=$1; shift
  echo "=== $name: wattlab $*"
  timeout 290 "$BIN" "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  cat "$OUT/$name.txt" | grep -v '^\[' # the progress lines stay in the file
  echo "=== $name: exit status $rc"
  [[ $rc -eq 0 ]] || status=1
}
step check gemm check --device nvml
step run_bf16 gemm run --device nvml --engine bf16 --shape 8192 --window-s 10 --warmup-min-s 10 --warmup-max-s 30 --db "$DB"
step run_fidelity gemm run --device nvml --fidelity --window-s 10 --db "$DB"
SWEEP=(gemm sweep --device nvml --experiment E3,E11 --engines bf16 --shapes 8192 --seeds 1,2 --max-values 3
       --window-s 2 --warmup-s 1 --first-warmup-s 15 --warmup-max-s 5 --budget-min 3 --db "$DB")
step sweep_1 "${SWEEP[@]}"
step sweep_2 "${SWEEP[@]}"
echo "exit status $status"
exit $status
