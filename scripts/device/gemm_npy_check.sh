#!/usr/bin/env bash
# On the GPU machine: `wattlab gemm run --a/--b` with operands from .npy files on the cuBLASLt
# executor (docs/gemm-inputs.md, "Your own operands"), against the same engine and shape from
# recipes. Three BF16 points at SHAPE (2048 by default), each a short window:
#   recipes: A and B from the reference recipe normal(mean=0, std=1024);
#   files:   A and B from .npy files of bf16 normal(0, 1024) values that torch draws here;
#   zeros:   A a file of zeros, B the same file as above (A's statistics must say zero fraction 1).
# The files are written with Python's standard library from torch's bytes (no numpy needed).
#   (here)   cmake --preset cuda && cmake --build --preset cuda -j2 --target wattlab
#   (device) run(command="bash scripts/device/gemm_npy_check.sh", carry=["build/cuda/src/cli/wattlab", "build/cuda/lib"])
# Output under $OUT: npy-check.tgz (the JSON of each point and its log) and summary.md.
# Knobs (environment): WATTLAB, PYTHON, SHAPE (2048), WINDOW_S (3).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
FINAL_OUT="${OUT:-/tmp/wattlab-npy-check-out}"
WORK="$(mktemp -d /tmp/wattlab-npy-check.XXXXXX)"
mkdir -p "$FINAL_OUT"
WATTLAB="${WATTLAB:-build/cuda/src/cli/wattlab}"
PYTHON="${PYTHON:-python3}"
SHAPE="${SHAPE:-2048}"
WINDOW_S="${WINDOW_S:-3}"
export LD_LIBRARY_PATH="$PWD/build/cuda/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
trap 'tar czf "$FINAL_OUT/npy-check.tgz" -C "$WORK" --exclude="*.npy" . 2>/dev/null; cp -f "$WORK/summary.md" "$FINAL_OUT/" 2>/dev/null; true' EXIT
die() { echo "gemm_npy_check: $*" >&2; echo "FAILED: $*" >> "$WORK/summary.md"; exit 2; }

[[ -x "$WATTLAB" ]] || die "no wattlab at $WATTLAB: build it with the cuda preset and carry it and build/cuda/lib"

"$PYTHON" - "$WORK" "$SHAPE" <<'PY' || die "writing the .npy files failed"
# bf16 operands as .npy files of raw 16-bit patterns ('<u2', what wattlab reads as bf16 bits).
import struct, sys, torch
work, n = sys.argv[1], int(sys.argv[2])
def write_npy(path, rows, cols, raw):
    header = "{'descr': '<u2', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + raw)
g = torch.Generator().manual_seed(1)
a = (torch.randn(n, n, generator=g) * 1024).to(torch.bfloat16)   # A: M x K, C order
b = (torch.randn(n, n, generator=g) * 1024).to(torch.bfloat16)   # B: K x N, C order
as_bytes = lambda t: bytes(t.contiguous().view(torch.uint8).flatten().tolist())
write_npy(f"{work}/a.npy", n, n, as_bytes(a))
write_npy(f"{work}/b.npy", n, n, as_bytes(b))
write_npy(f"{work}/zeros.npy", n, n, bytes(2 * n * n))
PY

point() {  # name, args...
  local name=$1; shift
  "$WATTLAB" gemm run --device nvml --engine bf16 --window-s "$WINDOW_S" --warmup-min-s 3 --warmup-max-s 10 \
    --db "$WORK/npy.db" --json "$WORK/$name.json" "$@" > "$WORK/$name.log" 2>&1 \
    || die "gemm run for $name failed (see $name.log)"
}
point recipes --shape "$SHAPE"
point files --a "$WORK/a.npy" --b "$WORK/b.npy"
point zeros --a "$WORK/zeros.npy" --b "$WORK/b.npy"

"$PYTHON" - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
lines, ok = ["# gemm run with .npy operands on the GPU", ""], True
def flat(j):
    out = {}
    def walk(x, prefix=""):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{prefix}{k}.")
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, f"{prefix}{i}.")
        else:
            out[prefix[:-1]] = x
    walk(j)
    return out
rows = {}
for name in ("recipes", "files", "zeros"):
    f = flat(json.load(open(f"{work}/{name}.json")))
    pick = lambda key: next((v for k, v in f.items() if k.endswith(key)), None)
    rows[name] = {k: pick(k) for k in ("energy_per_gemm_j", "energy_per_gemm_u_j", "mean_power_w",
                                       "input_a_zero_fraction", "input_b_zero_fraction", "rel_error", "recipe_a")}
    lines.append(f"{name}: " + ", ".join(f"{k} {v}" for k, v in rows[name].items()))
def check(cond, text):
    global ok
    lines.append(("PASS " if cond else "FAIL ") + text)
    ok = ok and cond
check(rows["zeros"]["input_a_zero_fraction"] == 1, "a file of zeros gives A zero fraction 1")
check((rows["files"]["input_a_zero_fraction"] or 0) < 0.01, "the normal file has almost no zeros")
check(all(rows[n]["energy_per_gemm_j"] for n in rows), "every point measured an energy per GEMM")
if rows["zeros"]["energy_per_gemm_j"] and rows["files"]["energy_per_gemm_j"]:
    check(rows["zeros"]["energy_per_gemm_j"] < rows["files"]["energy_per_gemm_j"],
          "zeros in A cost less energy per GEMM than normal values")
open(f"{work}/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(0 if ok else 1)
PY
