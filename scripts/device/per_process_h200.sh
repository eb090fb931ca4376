#!/usr/bin/env bash
# On the H200: checks the per-process split (docs/per-process.md) with two PyTorch processes of
# known work: each runs a fixed number of bf16 matmuls every 100 ms (A enough to keep the GPU busy
# about DUTY_A of it alone, B about DUTY_B) and logs how many it did. Both run the same matmul, so
# the active energy divides as the matmuls done: that is the truth, also when the two loads wait
# on each other (loads busy for a share of time instead may do less work together than alone).
#   1. idle:     `wattlab run -- sleep IDLE_S`: the board's idle power, passed on as --idle-power-w.
#   2. alone:    each load alone under `wattlab run`: its J per matmul (how well equal work means
#                equal energy here; reported, not checked).
#   3. together: load B started outside wattlab (another tenant), load A as the measured command:
#                the command's tree must be A's pid, B must be among the other tenants, the parts must
#                add up to the total, and each group's share of the active energy must agree with its
#                matmuls in the window within the split's own 95 % uncertainty.
#   4. exporter: both loads outside `wattlab serve`; /metrics must carry
#                wattlab_gpu_process_energy_joules_total for both pids, the busier one larger, each
#                within its own 95 % uncertainty of its matmuls' share of the two, and, scraped once
#                the split reaches to within 3 s of now (wattlab_gpu_process_split_age_seconds), the
#                per-process, idle and unattributed counters must add up to 85-101 % of the board's
#                energy since the exporter started.
# Run from the repository root on the device machine, with a release build carried:
#   (here)   cmake --preset release && cmake --build --preset release --target wattlab
#   (device) run(command="bash scripts/device/per_process_h200.sh", carry=["build/release"], timeout_s=600)
# Output under $OUT: per-process.tgz (every JSON, log, the metrics scrape and the driver's
# per-process samples beside each load: trace_<run>.csv, python/bench/nvml_process_trace.py) and
# summary.md (the checks, then each trace's summary).
# Knobs (environment): WATTLAB, PYTHON, DUTY_A (0.6), DUTY_B (0.2; together under 1, so both get their work done), LOAD_S (25), IDLE_S (10), N (8192), PORT (9477).
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL_OUT="${OUT:-/tmp/wattlab-per-process-out}"
WORK="$(mktemp -d /tmp/wattlab-per-process.XXXXXX)"
mkdir -p "$FINAL_OUT"
WATTLAB="${WATTLAB:-build/release/src/cli/wattlab}"
# A cuda build's wattlab needs the libraries carried beside it (build/cuda/lib: libfmt, httplib).
WATTLAB_LIB="$(dirname "$WATTLAB")/../../lib"
[[ -d "$WATTLAB_LIB" ]] && export LD_LIBRARY_PATH="$(cd "$WATTLAB_LIB" && pwd):${LD_LIBRARY_PATH:-}"
PYTHON="${PYTHON:-python3}"
DUTY_A="${DUTY_A:-0.6}"
DUTY_B="${DUTY_B:-0.2}"
LOAD_S="${LOAD_S:-25}"
IDLE_S="${IDLE_S:-10}"
N="${N:-8192}"
PORT="${PORT:-9477}"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  tar czf "$FINAL_OUT/per-process.tgz" -C "$WORK" . 2>/dev/null
  cp -f "$WORK/summary.md" "$FINAL_OUT/" 2>/dev/null
  true
}
trap cleanup EXIT
die() { echo "per_process_h200: $*" >&2; echo "FAILED: $*" >> "$WORK/summary.md"; exit 2; }

[[ -x "$WATTLAB" ]] || die "no wattlab at $WATTLAB: build it (cmake --preset release && cmake --build --preset release --target wattlab) and carry build/release"
"$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null \
  || die "$PYTHON has no torch with CUDA: set PYTHON to one that has"
command -v nvidia-smi >/dev/null || die "no nvidia-smi: not a GPU machine"
"$WATTLAB" sensors --device nvml > "$WORK/sensors.txt" 2>&1 || die "wattlab sensors --device nvml failed (see sensors.txt)"

cat > "$WORK/load.py" <<'PY'
# A bf16 matmul load of known work: every 100 ms, k matmuls (k from a timing at start, so that they
# keep the GPU busy about `duty` of the period alone), then a sleep to the period's end, for
# `seconds`. Prints its pid first; writes "wall_s matmuls" for every period (the start-up and
# timing matmuls in the first line) to `log`. Two loads that wait on each other still do the same
# work per period: the matmul counts, not the duty cycles, say how their SM time divides.
import os, sys, time, torch
duty, seconds, n, log = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print(os.getpid(), flush=True)
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    torch.matmul(a, b)
torch.cuda.synchronize()
t0 = time.monotonic()
for _ in range(10):
    torch.matmul(a, b)
torch.cuda.synchronize()
k = max(1, round(duty * 0.1 / ((time.monotonic() - t0) / 10)))
with open(log, "w", buffering=1) as f:  # line by line: a killed load keeps its periods
    f.write(f"{time.time():.6f} 13\n")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        p0 = time.monotonic()
        for _ in range(k):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        f.write(f"{time.time():.6f} {k}\n")
        rest = 0.1 - (time.monotonic() - p0)
        if rest > 0:
            time.sleep(rest)
PY

run_json() {  # name, args...: wattlab run --json $WORK/<name>.json ...
  local name=$1; shift
  "$WATTLAB" run --device nvml --db "$WORK/runs.db" --json "$WORK/$name.json" --process-interval-ms 200 "$@" \
    > "$WORK/$name.log" 2>&1 || die "wattlab run for $name failed (see $name.log)"
}

echo "1. idle ${IDLE_S} s"
run_json idle -- sleep "$IDLE_S"
IDLE_W=$("$PYTHON" -c "import json; j=json.load(open('$WORK/idle.json')); w=j['windows'][0]; d=[d for d in w['domains'] if d['domain_id']=='gpu:0'][0]; print(d['energy_j']/w['dur_s'])") \
  || die "no gpu:0 energy in idle.json"
echo "   idle power ${IDLE_W} W"
IDLE_U=$("$PYTHON" -c "print(max(2.0, 0.05*$IDLE_W))")  # the floor moves with temperature: 5 %, at least 2 W

# NVML's per-process utilization samples as the driver hands them out, beside each run that has
# loads (python/bench/nvml_process_trace.py): the record the split's sample model is checked on.
trace() {  # name, seconds
  "$PYTHON" python/bench/nvml_process_trace.py record --out "$WORK/trace_$1.csv" --seconds "$2" \
    > "$WORK/trace_$1.log" 2>&1 &
  PIDS+=($!)
}

echo "2. each load alone, ${LOAD_S} s"
trace alone_a "$((LOAD_S + 3))"
run_json alone_a --idle-power-w "$IDLE_W" --idle-power-u95-w "$IDLE_U" -- "$PYTHON" "$WORK/load.py" "$DUTY_A" "$LOAD_S" "$N" "$WORK/work_alone_a.txt"
trace alone_b "$((LOAD_S + 3))"
run_json alone_b --idle-power-w "$IDLE_W" --idle-power-u95-w "$IDLE_U" -- "$PYTHON" "$WORK/load.py" "$DUTY_B" "$LOAD_S" "$N" "$WORK/work_alone_b.txt"

echo "3. together: B as another tenant, A measured"
"$PYTHON" "$WORK/load.py" "$DUTY_B" "$((LOAD_S + 15))" "$N" "$WORK/work_tenant_b.txt" > "$WORK/tenant_b.pid" 2> "$WORK/tenant_b.log" &
PIDS+=($!)
for _ in $(seq 100); do [[ -s "$WORK/tenant_b.pid" ]] && break; sleep 0.1; done
[[ -s "$WORK/tenant_b.pid" ]] || die "load B did not start (see tenant_b.log)"
sleep 5  # B on the GPU before A starts
trace together "$((LOAD_S + 3))"
run_json together --idle-power-w "$IDLE_W" --idle-power-u95-w "$IDLE_U" -- "$PYTHON" "$WORK/load.py" "$DUTY_A" "$LOAD_S" "$N" "$WORK/work_together_a.txt"
wait "${PIDS[-1]}" 2>/dev/null

echo "4. exporter: both loads outside wattlab serve"
SERVE_T0=$(date +%s.%N)
"$WATTLAB" serve --device nvml --listen "127.0.0.1:$PORT" --duration-s "$((LOAD_S + 45))" --process-interval-ms 500 \
  --idle-power-w "$IDLE_W" --idle-power-u95-w "$IDLE_U" > "$WORK/serve.log" 2>&1 &
PIDS+=($!)
sleep 3
trace serve "$((LOAD_S + 2))"
"$PYTHON" "$WORK/load.py" "$DUTY_A" "$LOAD_S" "$N" "$WORK/work_serve_a.txt" > "$WORK/serve_a.pid" 2>&1 &
PIDS+=($!)
"$PYTHON" "$WORK/load.py" "$DUTY_B" "$LOAD_S" "$N" "$WORK/work_serve_b.txt" > "$WORK/serve_b.pid" 2>&1 &
PIDS+=($!)
sleep "$((LOAD_S + 3))"
# An interval is split once the counter and every publishing process's samples are past it: scrape
# until the split reaches to within 3 s of now (wattlab_gpu_process_split_age_seconds), at most 30 s,
# so that the split's sum is compared with the board's energy over (nearly) the same time.
"$PYTHON" - "$PORT" "$SERVE_T0" "$WORK/metrics.txt" <<'PY' || die "scraping /metrics failed (see metrics.txt, serve.log)"
import re, sys, time, urllib.request
port, t0, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
deadline = time.time() + 30
while True:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    m = re.search(r'^wattlab_gpu_process_split_age_seconds\{[^}]*gpu="0"[^}]*\} (\S+)$', text, re.M)
    lag_s = float(m.group(1)) if m else float("inf")
    if lag_s <= 3 or time.time() > deadline:
        break
    time.sleep(1)
open(out, "w").write(text + f"# scraped {time.time() - t0:.1f} s after the exporter started; the split lags {lag_s:.1f} s\n")
PY

"$PYTHON" - "$WORK" "$DUTY_A" "$DUTY_B" <<'PY'
import json, re, sys
from datetime import datetime, timezone
work_dir, duty_a, duty_b = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
def load(name):
    return json.load(open(f"{work_dir}/{name}.json"))
def active_w(name):
    j = load(name)
    pp = [g for g in j.get("per_process", []) if g["gpu"] == "gpu:0"]
    w = j["windows"][0]
    d = [d for d in w["domains"] if d["domain_id"] == "gpu:0"][0]
    idle = pp[0]["idle"]["energy_j"] if pp else 0
    return (d["energy_j"] - idle) / w["dur_s"], d
lines, ok = ["# Per-process split on the H200", "",
             f"loads: bf16 matmuls, a fixed number every 100 ms: A's keep the GPU busy about {duty_a:.0%} of it alone, B's {duty_b:.0%}", ""], True
def work(name):  # [(wall_s, matmuls)] of one load's periods
    return [(float(t), int(k)) for t, k in (l.split() for l in open(f"{work_dir}/work_{name}.txt") if l.strip())]
def window_wall(j):  # the run window's wall-clock span
    t0 = datetime.strptime(j["start_utc"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
    w = j["windows"][0]
    return t0 + (w["t_begin_ns"] - j["start_t_ns"]) * 1e-9, t0 + (w["t_end_ns"] - j["start_t_ns"]) * 1e-9
pa, _ = active_w("alone_a"); pb, _ = active_w("alone_b")
lines.append(f"alone: active power A {pa:.1f} W, B {pb:.1f} W (total minus idle)")
for name in ("alone_a", "alone_b"):
    j = load(name)
    g1 = [g for g in j["per_process"] if g["gpu"] == "gpu:0"][0] if "per_process" in j else None
    c = sum(k for _, k in work(name))
    if g1:
        lines.append(f"alone {name[-1].upper()}: {c} matmuls, {g1['active_j']:.1f} J active: {g1['active_j'] / c:.3f} J per matmul")
t = load("together")
if "per_process" not in t:
    print("FAILED: the together run has no per_process section", file=sys.stderr); sys.exit(1)
g = [g for g in t["per_process"] if g["gpu"] == "gpu:0"][0]
pid_b = int(open(f"{work_dir}/tenant_b.pid").read().split()[0])
procs = {p["pid"]: p for p in g["processes"]}
tree = [p for p in g["processes"] if p["in_command_tree"]]
def check(cond, text):
    global ok
    lines.append(("PASS " if cond else "FAIL ") + text)
    ok = ok and cond
check(len(tree) >= 1, f"the command's tree holds the measured load's process(es): {[p['pid'] for p in tree]}")
check(pid_b in procs and not procs[pid_b]["in_command_tree"], f"load B (pid {pid_b}) is another tenant")
parts = g["idle"]["energy_j"] + g["command_tree"]["energy_j"] + g["other_tenants"]["energy_j"] + g["unattributed"]["energy_j"]
check(abs(parts - g["total"]["energy_j"]) <= 1e-6 * g["total"]["energy_j"], f"parts add up: {parts:.3f} J of {g['total']['energy_j']:.3f} J")
rel_total = g["total"]["u95_j"] / g["total"]["energy_j"]
rel_tree = g["command_tree"]["u95_j"] / max(g["command_tree"]["energy_j"], 1e-9)
check(rel_tree > rel_total, f"the split's uncertainty is wider: {rel_tree:.2%} vs the total's {rel_total:.2%}")
# The truth: both loads run the same matmul, so the active energy divides as the matmuls done in
# the window (A's all; B's periods that ended inside it). The alone runs' J per matmul say how
# well equal work means equal energy here.
wb, we = window_wall(t)
ca = sum(k for _, k in work("together_a"))
cb = sum(k for ts, k in work("tenant_b") if wb <= ts <= we)
active = g["active_j"]
for label, part, c in (("A (the command's tree)", g["command_tree"], ca), ("B (the other tenant)", g["other_tenants"], cb)):
    expect = active * c / max(ca + cb, 1)
    lines.append(f"together: {label}: {c} matmuls of {ca + cb}; its share {part['energy_j']:.1f} J ± {part['u95_j']:.1f} J, "
                 f"from the matmuls {expect:.1f} J (deviation {100 * (part['energy_j'] - expect) / max(expect, 1e-9):+.1f} %)")
    check(abs(part["energy_j"] - expect) <= part["u95_j"], f"{label}'s share agrees with its matmuls within its 95 % uncertainty")
lines.append(f"together: active {active:.1f} J; unattributed {g['unattributed']['energy_j']:.1f} J "
             f"({g['unattributed']['busy_share']:.1%} of busy time); duty-cycle ratio A/B {duty_a / duty_b:.2f}, "
             f"matmul ratio {ca / max(cb, 1):.2f}")
# Exporter
m = open(f"{work_dir}/metrics.txt").read()
sa = int(open(f"{work_dir}/serve_a.pid").read().split()[0]); sb = int(open(f"{work_dir}/serve_b.pid").read().split()[0])
def counter(name, pid):
    r = re.search(r'^%s\{[^}]*gpu="0",pid="%d",[^}]*\} (\S+)$' % (name, pid), m, re.M)
    return float(r.group(1)) if r else None
ea, eb = counter("wattlab_gpu_process_energy_joules_total", sa), counter("wattlab_gpu_process_energy_joules_total", sb)
ua, ub = counter("wattlab_gpu_process_energy_u95_joules", sa), counter("wattlab_gpu_process_energy_u95_joules", sb)
check(ea is not None and eb is not None, f"the exporter has a counter for both pids ({sa}: {ea} J, {sb}: {eb} J)")
if ea is not None and eb is not None:
    check(ea > eb, "the busier load has the larger counter")
    ka, kb = sum(k for _, k in work("serve_a")), sum(k for _, k in work("serve_b"))
    lines.append(f"exporter: A/B = {ea / max(eb, 1e-9):.2f}; matmuls A {ka}, B {kb} (ratio {ka / max(kb, 1):.2f})")
    for label, e, u, c in (("A", ea, ua, ka), ("B", eb, ub, kb)):
        expect = (ea + eb) * c / max(ka + kb, 1)
        lines.append(f"exporter: {label} {e:.1f} J ± {u or 0:.1f} J, from the matmuls {expect:.1f} J of the two loads' {ea + eb:.1f} J")
        check(u is not None and abs(e - expect) <= u, f"the exporter's {label} agrees with its matmuls within its 95 % uncertainty")
def gauge(name):
    r = re.search(r'^%s\{[^}]*gpu="0"[^}]*\} (\S+)$' % name, m, re.M)
    return float(r.group(1)) if r else None
board = gauge("wattlab_energy_joules_total")
idle_c, unattr = gauge("wattlab_gpu_idle_energy_joules_total"), gauge("wattlab_gpu_unattributed_energy_joules_total")
procs_sum = sum(float(x) for x in re.findall(r'^wattlab_gpu_process_energy_joules_total\{[^}]*gpu="0"[^}]*\} (\S+)$', m, re.M))
if board is not None and idle_c is not None and unattr is not None:
    split_sum = procs_sum + idle_c + unattr
    lines.append(f"exporter: processes {procs_sum:.1f} J + idle {idle_c:.1f} J + unattributed {unattr:.1f} J = {split_sum:.1f} J; "
                 f"the board's counter since the exporter started {board:.1f} J ({split_sum/board:.1%})")
    # The split intervals lie inside the exporter's life and reach to within a few seconds of the
    # scrape (an interval waits for the counter and the samples past its end).
    check(0.85 * board <= split_sum <= 1.01 * board, "the exporter's split adds up to 85-101 % of the board's energy")
else:
    check(False, "the exporter exposes the board's energy, idle and unattributed counters")
lines.append("")
lines.append("RESULT: " + ("PASS" if ok else "FAIL"))
# The driver's samples beside each run (not checked: the record the sample model is read from).
import os, subprocess
for name in ("alone_a", "alone_b", "together", "serve"):
    path = f"{work_dir}/trace_{name}.csv"
    if os.path.exists(path):
        r = subprocess.run([sys.executable, "python/bench/nvml_process_trace.py", "summarize", path],
                           capture_output=True, text=True)
        lines += ["", f"## NVML per-process samples during {name}", "", (r.stdout or r.stderr).rstrip()]
open(f"{work_dir}/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(0 if ok else 1)
PY
