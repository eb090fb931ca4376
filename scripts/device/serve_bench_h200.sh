#!/usr/bin/env bash
# On the H200: the leaderboard's protocol over the reference server (docs/refserver.md,
# docs/serve-bench.md). For each model shape (random weights, no download) it starts
# `python3 -m refserver` once, sized for the largest batch cap, then for each batch cap sets the cap
# (PUT /refserver/max_num_seqs) and runs `wattlab infer serve-bench` with the lm-arena-chat output
# lengths of Llama-3.1-8B: pilot-sized runs, REPEATS repeats, every steady window >= 20 s, a 95 %
# t-interval on J/token. Then `wattlab diagnose` over the store and a summary table.
#
# Resumable: a configuration (model, batch cap) whose series already ended with status 0 in the
# store is skipped. The store is $WORK/serve.db, kept between calls on a warm machine; on a fresh
# machine pass SEED_DB=<the serve.db of an earlier tar>, carried in the working tree. No new
# configuration starts after DEADLINE_S, and each one runs under `timeout` (CONFIG_TIMEOUT_S), so the
# tar is written before the device's 600 s limit; call again to continue.
#
# Run from the repository root on the device machine, with a release build carried:
#   (here)   cmake --preset release && cmake --build --preset release --target wattlab
#   (device) run(command="bash scripts/device/serve_bench_h200.sh", carry=["build/release"], timeout_s=600)
# Output: $OUT/serve-bench.tgz (serve.db, one JSON and one log per configuration, the servers' logs,
# env.txt, sensors.txt, diagnose-*.txt, summary.md) and summary.md beside it.
# Knobs (environment): WATTLAB, PYTHON, MODELS ("llama-8b llama-1b"), CAPS (visit order, coarse to fine),
# REPEATS (3), MIN_STEADY_S (20), WORKLOAD, WORKLOAD_MODEL, INPUT_MEAN (256), SEED_DB, DEADLINE_S
# (420), CONFIG_TIMEOUT_S (420), KV_MEMORY_FRACTION (empty: transformers' default), MAX_BATCH_TOKENS
# (8192), PORT (8000). A dry run without a GPU: ENGINE=fake DEVICE=sim (the fake engine, a
# SIMULATED board; every output says SIMULATED), with MIN_STEADY_S and CAPS small.
set -uo pipefail
cd "$(dirname "$0")/../.."
T0=$(date +%s)
FINAL_OUT="${OUT:-/tmp/wattlab-serve-out}"
WORK="${SERVE_WORK:-/tmp/wattlab-serve-work}"
mkdir -p "$WORK" "$FINAL_OUT"
pack() { tar czf "$FINAL_OUT/serve-bench.tgz" -C "$WORK" . && cp -f "$WORK/summary.md" "$FINAL_OUT/" 2>/dev/null; true; }
SERVER_PID=""
stop_server() {
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""; fi
}
trap 'stop_server; pack' EXIT
WATTLAB="${WATTLAB:-build/release/src/cli/wattlab}"
MODELS="${MODELS:-llama-8b llama-1b}"
CAPS="${CAPS:-8 512 64 16 256 32 128}"
REPEATS="${REPEATS:-3}"
MIN_STEADY_S="${MIN_STEADY_S:-20}"
WORKLOAD="${WORKLOAD:-tests/data/mlenergy-leaderboard-v3/lm-arena-chat.json}"
WORKLOAD_MODEL="${WORKLOAD_MODEL:-meta-llama/Llama-3.1-8B-Instruct}"
INPUT_MEAN="${INPUT_MEAN:-256}"
DEADLINE_S="${DEADLINE_S:-420}"
CONFIG_TIMEOUT_S="${CONFIG_TIMEOUT_S:-420}"
MAX_BATCH_TOKENS="${MAX_BATCH_TOKENS:-8192}"
PORT="${PORT:-8000}"
ENGINE="${ENGINE:-transformers}"
PYTHON="${PYTHON:-python3}"   # one with aiohttp (and torch + transformers for ENGINE=transformers)
DB="$WORK/serve.db"
if [[ ! -f "$DB" && -n "${SEED_DB:-}" ]]; then cp "$SEED_DB" "$DB"; fi

if [[ ! -x "$WATTLAB" ]]; then
  echo "no wattlab at $WATTLAB: build it here (cmake --preset release && cmake --build --preset release" \
       "--target wattlab) and carry build/release" >&2
  exit 2
fi
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,power.limit,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu /'
  "$PYTHON" -c 'import torch, transformers, aiohttp; print("torch", torch.__version__, "transformers",
              transformers.__version__, "aiohttp", aiohttp.__version__)' 2>&1
  echo "powercap: $(ls /sys/class/powercap 2>/dev/null | tr '\n' ' ' || true)"
  nproc | sed 's/^/cpus /'
} | tee -a "$WORK/env.txt"
"$WATTLAB" sensors --device auto > "$WORK/sensors.txt" 2>&1 || true
# CPU energy where the machine exposes powercap (the H200 VM showed none): --device auto takes both.
if [[ -z "${DEVICE:-}" ]]; then
  DEVICE=nvml
  if "$WATTLAB" sensors --device rapl > /dev/null 2>&1; then DEVICE=auto; fi
fi
sim=()
[[ "$DEVICE" == sim ]] && sim=(--sim-workload "step 300W 3600s")
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/NVIDIA //; s/ .*//')
echo "measuring with --device $DEVICE on ${GPU:-unknown}" | tee -a "$WORK/env.txt"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"

served_name() { "$PYTHON" -c "import sys; from refserver.models import SHAPES; print(SHAPES[sys.argv[1]]['model_id'])" "$1"; }
# The configurations whose series ended with status 0 and no failed request in the store: "model
# batch" lines.
done_configs() {
  [[ -f "$DB" ]] || return 0
  "$PYTHON" - "$DB" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
q = """SELECT m.value, b.value FROM runs r
       JOIN run_tags m ON m.run_id = r.run_id AND m.key = 'model'
       JOIN run_tags b ON b.run_id = r.run_id AND b.key = 'batch'
       JOIN run_tags n ON n.run_id = r.run_id AND n.key = 'serve_bench.requests_per_run'
       JOIN run_tags f ON f.run_id = r.run_id AND f.key = 'serve_bench.requests_failed'
       WHERE r.exit_status = 0 AND f.value = '0'"""
for model, batch in db.execute(q):
    print(model, batch)
EOF
}
left() { echo $(( DEADLINE_S - ($(date +%s) - T0) )); }

max_cap=0
for b in $CAPS; do (( b > max_cap )) && max_cap=$b; done
for shape in $MODELS; do
  name=$(served_name "$shape") || { echo "unknown model shape $shape" >&2; exit 2; }
  todo=()
  done_list=$(done_configs)
  for b in $CAPS; do grep -qx "$name $b" <<< "$done_list" && echo "$shape B=$b: in the store, skipped" || todo+=("$b"); done
  (( ${#todo[@]} )) || continue
  if (( $(left) <= 60 )); then echo "$shape: no time left (DEADLINE_S=$DEADLINE_S); call again to resume"; break; fi
  log="$WORK/server-$shape.log"
  kv=()
  [[ -n "${KV_MEMORY_FRACTION:-}" ]] && kv=(--kv-memory-fraction "$KV_MEMORY_FRACTION")
  rm -f "$WORK/port"
  "$PYTHON" -m refserver --engine "$ENGINE" --model-config "$shape" --max-num-seqs "$max_cap" \
    --max-batch-tokens "$MAX_BATCH_TOKENS" --port "$PORT" --port-file "$WORK/port" "${kv[@]}" >> "$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 600); do [[ -f "$WORK/port" ]] || ! kill -0 "$SERVER_PID" 2>/dev/null && break; sleep 1; done
  if [[ ! -f "$WORK/port" ]]; then echo "$shape: the reference server did not start (see $log)"; tail -20 "$log"; stop_server; continue; fi
  echo "$shape: server up after $(( $(date +%s) - T0 )) s"
  for b in "${todo[@]}"; do
    if (( $(left) <= 30 )); then echo "$shape B=$b: no time left; call again to resume"; break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then echo "$shape: the server died (see $log)"; tail -20 "$log"; break; fi
    curl -fsS -X PUT "http://127.0.0.1:$PORT/refserver/max_num_seqs" -d "{\"max_num_seqs\": $b}" > /dev/null ||
      { echo "$shape B=$b: could not set the batch cap"; continue; }
    limit=$(( CONFIG_TIMEOUT_S < $(left) + 60 ? CONFIG_TIMEOUT_S : $(left) + 60 ))
    timeout -s TERM "$limit" "$WATTLAB" infer serve-bench --device "$DEVICE" "${sim[@]}" --workload "$WORKLOAD" \
      --workload-model "$WORKLOAD_MODEL" --input-mean "$INPUT_MEAN" --url "http://127.0.0.1:$PORT/v1" --model "$name" \
      --batch-cap "$b" --repeats "$REPEATS" --min-steady-s "$MIN_STEADY_S" --metrics-url "http://127.0.0.1:$PORT/metrics" \
      --tag gpu="${GPU:-unknown}" --tag gpus=1 --tag precision=bfloat16 --tag weights=random --tag server=refserver \
      --db "$DB" --json "$WORK/$shape-b$b.json" > "$WORK/$shape-b$b.log" 2>&1
    rc=$?
    echo "$shape B=$b: exit $rc after $(( $(date +%s) - T0 )) s; $(grep -m1 -A2 '^energy per output token over' "$WORK/$shape-b$b.log" | tr '\n' ' ')"
  done
  stop_server
done

shopt -s nullglob
series=("$WORK"/*-b*.json)
if (( ${#series[@]} == 0 )); then echo "no configuration ran"; exit 1; fi
echo "== summary"
"$PYTHON" python/bench/serve_bench_summary.py "${series[@]}" --markdown 2>&1 | tee "$WORK/summary.md"
echo "== wattlab diagnose"
"$WATTLAB" diagnose min-energy --data "$DB" 2>&1 | tee "$WORK/diagnose-min-energy.txt"
"$WATTLAB" diagnose frontier --data "$DB" --model "$(served_name llama-8b)" --task lm-arena-chat 2>&1 |
  tee "$WORK/diagnose-frontier-llama-8b.txt"
for b in 8 128 512; do
  # Each stable repeat is its own record: explain the lowest-energy repeat of the configuration.
  "$WATTLAB" diagnose explain --data "$DB" --config "model=$(served_name llama-8b),task=lm-arena-chat,batch=$b,pick=min-energy" 2>&1 |
    tee "$WORK/diagnose-explain-llama-8b-b$b.txt"
done
exit 0
