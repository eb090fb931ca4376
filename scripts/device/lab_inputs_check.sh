#!/usr/bin/env bash
# On the GPU: every study recipe (E1-E15, X1-X2, TF32 control) for every lab
# dtype, generated on the GPU on small shapes and compared byte for byte with the CPU reference,
# plus GPU-vs-CPU bit statistics and A-B agreement; then a timing of the generator on one
# 8192x8192 bf16 operand. Takes well under 1 minute (a few seconds of GPU work).
#
#   (here)   cmake --preset cuda && cmake --build --preset cuda --target wattlab_lab_inputs_check
#   (device) run(command="bash scripts/device/lab_inputs_check.sh", carry=["build/cuda"], timeout_s=120)
# Outputs under $OUT: lab_inputs_check.txt (PASS/FAIL per recipe, summary, timing), nvidia-smi.txt.
# Exit status: 0 when every recipe passes, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/wattlab-lab-inputs-out}"
mkdir -p "$OUT"
BIN="${BIN:-build/cuda/src/lab/wattlab_lab_inputs_check}"
if [[ ! -x "$BIN" ]]; then
  echo "no self-check at $BIN: build it here (cmake --preset cuda && cmake --build --preset cuda" \
       "--target wattlab_lab_inputs_check) and carry build/cuda" >&2
  exit 2
fi
nvidia-smi -q > "$OUT/nvidia-smi.txt" 2>&1 || true
timeout 120 "$BIN" > "$OUT/lab_inputs_check.txt" 2>&1
rc=$?
grep -E "^(device|summary|timing)" "$OUT/lab_inputs_check.txt"
grep -E "^FAIL" "$OUT/lab_inputs_check.txt" | head -40
echo "exit status $rc"
exit $rc
