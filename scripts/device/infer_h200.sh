#!/usr/bin/env bash
# On the H200: batch-size sweep of a Llama-3.1-8B-shaped dense model and a
# Mixtral-8x7B-shaped MoE with random weights (no download), plain `generate` (host-bound) and a
# static-cache + torch.compile/CUDA-graph path (GPU-bound), tokens reported through wattlab marks,
# then `wattlab diagnose` on the records and a summary table. Fits ~8 minutes.
#
# Run from the repository root on the device machine, with a release build carried:
#   (here)   cmake --preset release && cmake --build --preset release --target wattlab
#   (device) run(command="bash scripts/device/infer_h200.sh", carry=["build/release"], timeout_s=600)
# Outputs (packed into $OUT/infer.tgz): infer.db (the store), llama8b.json / mixtral.json (runs), *.results.json
# (per-window detail from the script), *.log, diagnose-*.txt, summary.md.
# Knobs (environment): WATTLAB, LLAMA_BUDGET_S, MOE_BUDGET_S (0: no MoE run), MOE_PATHS, NEW_TOKENS,
# MOE_NEW_TOKENS, LLAMA_PATHS, LLAMA_ORDER (batch visit order), SEED_DB (an earlier infer.db that the
# new runs are added to, so that diagnose sees both).
set -uo pipefail
cd "$(dirname "$0")/../.."
# The device tool returns at most 8 files: everything is written to a work folder and packed into
# $OUT/infer.tgz at exit (summary.md and env.txt are copied beside it).
FINAL_OUT="${OUT:-/tmp/wattlab-infer-out}"
OUT="${INFER_WORK:-/tmp/wattlab-infer-work}"
mkdir -p "$OUT" "$FINAL_OUT"
pack() { tar czf "$FINAL_OUT/infer.tgz" -C "$OUT" . && cp -f "$OUT"/summary.md "$OUT"/env.txt "$FINAL_OUT"/ 2>/dev/null; true; }
trap pack EXIT
WATTLAB="${WATTLAB:-build/release/src/cli/wattlab}"
LLAMA_BUDGET_S="${LLAMA_BUDGET_S:-250}"
MOE_BUDGET_S="${MOE_BUDGET_S:-150}"
MOE_PATHS="${MOE_PATHS:-generate}"   # compiling the MoE's data-dependent routing costs more than the budget
NEW_TOKENS="${NEW_TOKENS:-64}"
MOE_NEW_TOKENS="${MOE_NEW_TOKENS:-32}"
LLAMA_PATHS="${LLAMA_PATHS:-generate,compiled}"
LLAMA_ORDER="${LLAMA_ORDER:-1,64,512,8,256,16,128,32,4,2}"
DB="$OUT/infer.db"
if [[ -n "${SEED_DB:-}" ]]; then cp "$SEED_DB" "$DB"; fi
SWEEP=python/bench/infer_batch_sweep.py

if [[ ! -x "$WATTLAB" ]]; then
  echo "no wattlab at $WATTLAB: build it here (cmake --preset release && cmake --build --preset release" \
       "--target wattlab) and carry build/release" >&2
  exit 2
fi
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,power.limit,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu /'
  python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)' 2>&1
  echo "powercap: $(ls /sys/class/powercap 2>/dev/null | tr '\n' ' ' || true)"
  nproc | sed 's/^/cpus /'
} | tee "$OUT/env.txt"
"$WATTLAB" sensors --device auto > "$OUT/sensors.txt" 2>&1 || true
# CPU energy where the machine exposes powercap (the VM showed none): --device auto takes both.
DEVICE=nvml
if "$WATTLAB" sensors --device rapl > /dev/null 2>&1; then DEVICE=auto; fi
echo "measuring with --device $DEVICE" | tee -a "$OUT/env.txt"

export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
# torch.compile's caches live under $OUT's sibling so they do not come back with the outputs.
export TORCHINDUCTOR_CACHE_DIR=/tmp/wattlab-inductor-cache

"$WATTLAB" run --device "$DEVICE" --marks --db "$DB" --json "$OUT/llama8b.json" -- \
  python3 "$SWEEP" --model llama8b --paths "$LLAMA_PATHS" --order "$LLAMA_ORDER" --new-tokens "$NEW_TOKENS" \
  --budget-s "$LLAMA_BUDGET_S" --results "$OUT/llama8b.results.json" 2>&1 | tee "$OUT/llama8b.log"
echo "llama8b: exit ${PIPESTATUS[0]}"

if [[ "$MOE_BUDGET_S" != 0 ]]; then
  "$WATTLAB" run --device "$DEVICE" --marks --db "$DB" --json "$OUT/mixtral.json" -- \
    python3 "$SWEEP" --model mixtral --paths "$MOE_PATHS" --new-tokens "$MOE_NEW_TOKENS" --max-batch 256 \
    --budget-s "$MOE_BUDGET_S" --results "$OUT/mixtral.results.json" 2>&1 | tee "$OUT/mixtral.log"
  echo "mixtral: exit ${PIPESTATUS[0]}"
fi

echo "== summary"
python3 python/bench/infer_summary.py "$OUT/llama8b.json" $([[ -f "$OUT/mixtral.json" ]] && echo "$OUT/mixtral.json") --markdown | tee "$OUT/summary.md"

echo "== wattlab diagnose"
"$WATTLAB" diagnose min-energy --data "$DB" 2>&1 | tee "$OUT/diagnose-min-energy.txt"
"$WATTLAB" diagnose min-energy --json --data "$DB" > "$OUT/diagnose-min-energy.json" 2> /dev/null
for task in decode-generate decode-compiled; do
  for b in 1 16 128; do
    "$WATTLAB" diagnose explain --data "$DB" \
      --config "model=random/Llama-3.1-8B-shape,task=$task,batch=$b" 2>&1 | tee "$OUT/diagnose-explain-llama-$task-b$b.txt"
  done
done
"$WATTLAB" diagnose explain --data "$DB" --config "model=random/Mixtral-8x7B-shape,task=decode-generate,batch=1" 2>&1 |
  tee "$OUT/diagnose-explain-mixtral-b1.txt"
"$WATTLAB" diagnose compare "model=random/Llama-3.1-8B-shape,task=decode-generate,batch=16" \
  "model=random/Llama-3.1-8B-shape,task=decode-compiled,batch=16" --data "$DB" 2>&1 | tee "$OUT/diagnose-compare-b16.txt"
"$WATTLAB" diagnose frontier --data "$DB" --model random/Llama-3.1-8B-shape --task decode-compiled 2>&1 |
  tee "$OUT/diagnose-frontier-llama.txt"
exit 0
