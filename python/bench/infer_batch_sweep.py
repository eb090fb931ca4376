#!/usr/bin/env python3
"""Batch-size sweep of LLM decoding on one GPU, with random weights, reported through wattlab marks.

Builds a real architecture from an inline configuration (no download): a Llama-3.1-8B-shaped dense
model or a Mixtral-8x7B-shaped MoE (46.7B parameters, 12.9B active: 93 GB in bf16, fits one
141 GB H200), initializes every weight EXPLICITLY (normal, std = initializer_range; norms = 1;
biases = 0), checks that the logits are finite, then generates a fixed number of tokens at batch
sizes 1, 2, 4, ... up to the largest that fits, on two paths:

  generate  plain `model.generate` with the dynamic cache: Python dispatches every kernel (host-bound)
  compiled  `generate` with a static KV cache and torch.compile(mode="reduce-overhead"): the decode
            step replays as CUDA graphs (GPU-bound)

Each (path, batch) is one marks window (wattlab run --marks), repeated until it lasts at least
--min-window-s, with counts tokens / requests / host_cpu_s (getrusage of this process) and labels
batch / path / task / median_itl_ms. Warm-up and compilation happen outside the windows. A global
--budget-s keeps the run inside the device's time: what does not fit is skipped and said so.

Run under: wattlab run --device nvml --marks --db infer.db -- python3 infer_batch_sweep.py --model llama8b
Imports torch/transformers only inside main(), so `python3 -m py_compile` works without them.
"""
import argparse
import gc
import json
import math
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import wattlab_marks as marks  # noqa: E402
from refserver import models  # noqa: E402

# The two models' published shapes (python/refserver/models.py, shared with the reference server).
MODELS = {"llama8b": "llama-8b", "mixtral": "mixtral-8x7b"}


def log(*a):
    print("[sweep]", *a, file=sys.stderr, flush=True)


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Timing:
    """A generate streamer that records when each step's tokens arrive (for inter-token latency)."""

    def __init__(self):
        self.t = []

    def put(self, value):
        self.t.append(time.perf_counter())

    def end(self):
        pass

    def gaps_ms(self):
        # put #0 is the prompt, #1 the first token (after prefill): gaps between decode steps follow.
        return [(b - a) * 1e3 for a, b in zip(self.t[1:], self.t[2:])]


def batches_that_fit(cfg, torch, prompt_len, new_tokens, max_batch):
    free, _ = torch.cuda.mem_get_info()
    per_seq = models.kv_bytes_per_token(cfg.to_dict()) * (prompt_len + new_tokens)
    # Per sequence also: prefill activations (~ prompt x intermediate x 2 B x a few) and fp32 logits.
    per_seq += prompt_len * cfg.intermediate_size * 2 * 4 + cfg.vocab_size * 4 * 2
    usable = free * 0.80
    out, b = [], 1
    while b <= max_batch and b * per_seq <= usable:
        out.append(b)
        b *= 2
    log(f"free GPU memory {free / 2**30:.1f} GiB; ~{per_seq / 2**20:.1f} MiB per sequence -> batches {out}")
    return out


def count_compiled_calls(model):
    """Wraps transformers' get_compiled_call so every generate() that takes the compiled decode step
    is counted; compiled_uses() reads the count (None where this transformers has no such hook)."""
    orig = getattr(model, "get_compiled_call", None)
    if orig is None or getattr(model, "_wattlab_compiled_uses", None) is not None:
        return
    model._wattlab_compiled_uses = 0

    def counting(*a, **k):
        model._wattlab_compiled_uses += 1
        return orig(*a, **k)

    model.get_compiled_call = counting


def compiled_uses(model):
    return getattr(model, "_wattlab_compiled_uses", None)


def make_generate(model, cfg, torch, transformers, path, prompt_len, new_tokens):
    kw = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
    if path == "compiled":
        kw["cache_implementation"] = "static"
        cc = getattr(transformers, "CompileConfig", None)
        if cc is not None:
            # dynamic=None: batch 1 compiles static, the next batch size recompiles with a symbolic
            # batch that every later size reuses (two compiles, not one per size); CUDA graphs are
            # recorded per size, which is cheap.
            kw["compile_config"] = cc(fullgraph=False, dynamic=None, mode="reduce-overhead")

    def run(batch, timing=None):
        ids = torch.randint(3, cfg.vocab_size, (batch, prompt_len), device="cuda")
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), streamer=timing, **kw)
        torch.cuda.synchronize()
        produced = out.shape[1] - prompt_len
        if produced != new_tokens:
            raise RuntimeError(f"generated {produced} tokens, expected {new_tokens}")
        return batch * new_tokens

    return run


def sweep_path(args, spec, model, cfg, n_params, torch, transformers, path, batches, deadline, gpu_name):
    run = make_generate(model, cfg, torch, transformers, path, args.prompt_len, args.new_tokens)
    task = f"decode-{path}"
    results = []
    last_b, last_warm, last_one, done = 0, 0.0, 0.0, 0
    for b in batches:
        left = deadline - time.monotonic()
        # What this batch will take, guessed from the last one: calls scale at most with the batch;
        # the compiled path compiles twice (batch 1 static, then a symbolic batch), then only records.
        scale = max(1.0, b / max(last_b, 1))
        if path == "compiled" and done < 2:
            guess = args.min_window_s + 5 + last_warm
        else:
            guess = args.min_window_s + 5 + last_one * scale * (3 if path == "compiled" else 1)
        if left < guess:
            log(f"{path} batch {b}: skipped, {left:.0f} s of budget left, about {guess:.0f} s needed")
            results.append({"path": path, "batch": b, "skipped": f"budget ({left:.0f} s left)"})
            continue
        try:
            t0 = time.monotonic()
            run(b)  # warm-up (and, on the compiled path, compilation for this batch size)
            one_s = time.monotonic() - t0
            if path == "compiled":  # CUDA graphs are recorded on a later call: time a replayed one
                run(b)
                t1 = time.monotonic()
                run(b)
                one_s = time.monotonic() - t1
            warm_s = time.monotonic() - t0
            last_b, last_warm, last_one, done = b, warm_s, one_s, done + 1
            uses0 = compiled_uses(model)
            reps = max(1, math.ceil(args.min_window_s / max(one_s, 1e-3)))
            if time.monotonic() + reps * one_s > deadline:
                reps = max(1, int((deadline - time.monotonic() - 2) / max(one_s, 1e-3)))
            name = f"{path} b{b}"
            timing = Timing()
            gaps = []
            c0 = cpu_s()
            marks.open(name, batch=b, path=path, task=task, phase="steady", new_tokens=args.new_tokens,
                       prompt_len=args.prompt_len)
            w0 = time.monotonic()
            tokens = 0
            for _ in range(reps):
                timing = Timing()
                tokens += run(b, timing)
                gaps += timing.gaps_ms()
            dur = time.monotonic() - w0
            host = cpu_s() - c0
            labels = {}
            if gaps:
                gaps.sort()
                labels = {"median_itl_ms": f"{statistics.median(gaps):.4f}",
                          "p90_itl_ms": f"{gaps[int(0.9 * (len(gaps) - 1))]:.4f}",
                          "p99_itl_ms": f"{gaps[int(0.99 * (len(gaps) - 1))]:.4f}"}
                marks.tag(name, **labels)
            # Whether generate took its compiled decode step inside this window (counted, not guessed
            # from a cached attribute that an earlier compiled window left on the model).
            uses1 = compiled_uses(model)
            compiled = None if uses1 is None else uses1 > uses0
            marks.tag(name, decode_compiled={None: "unknown", True: "yes", False: "no"}[compiled])
            marks.close(name, tokens=tokens, requests=b * reps, host_cpu_s=host)
            if path == "generate" and compiled:
                log(f"generate batch {b}: WARNING the plain path ran the compiled decode step; window kept, "
                    "labelled decode_compiled=yes")
            r = {"path": path, "batch": b, "reps": reps, "dur_s": dur, "tokens": tokens,
                 "tokens_per_s": tokens / dur, "host_cpu_cores": host / dur, "warmup_s": warm_s,
                 "decode_compiled": compiled, **labels}
            log(json.dumps(r))
            results.append(r)
        except torch.cuda.OutOfMemoryError:
            log(f"{path} batch {b}: out of memory; larger batches skipped")
            results.append({"path": path, "batch": b, "skipped": "out of memory"})
            gc.collect()
            torch.cuda.empty_cache()
            break
        except Exception as e:  # a path that fails must not lose the rest of the sweep
            log(f"{path} batch {b}: failed: {type(e).__name__}: {e}")
            results.append({"path": path, "batch": b, "skipped": f"{type(e).__name__}: {e}"[:300]})
            if path == "compiled":
                break
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=sorted(MODELS), required=True)
    ap.add_argument("--paths", default="generate,compiled", help="comma list of generate, compiled")
    ap.add_argument("--prompt-len", type=int, default=64, help="prefill is inside each window: keep it short")
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--max-batch", type=int, default=512)
    ap.add_argument("--order", default="1,64,512,8,256,16,128,32,4,2",
                    help="batch sizes in priority order, coarse to fine, so that a short budget still spans "
                         "the range; sizes that do not fit are dropped")
    ap.add_argument("--min-window-s", type=float, default=3.0)
    ap.add_argument("--budget-s", type=float, default=240.0, help="wall time for this process, all included")
    ap.add_argument("--results", default="", help="also write the per-window results here (JSON)")
    args = ap.parse_args()
    start = time.monotonic()
    deadline = start + args.budget_s - 10

    import torch
    import transformers

    shape = MODELS[args.model]
    spec = models.SHAPES[shape]
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device")
    gpu_name = torch.cuda.get_device_name(0)
    gpu = gpu_name.replace("NVIDIA ", "").split(" ")[0]
    for k in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, k):
            setattr(torch._dynamo.config, k, 256)
    marks.tag(model=spec["model_id"], nickname=args.model, architecture=spec["architecture"], gpu=gpu,
              gpu_name=gpu_name, gpus=1, precision="bfloat16",
              total_params_b=round(models.param_count(spec["config"]) / 1e9, 2),
              active_params_b=round(models.param_count(spec["config"], active=True) / 1e9, 2), weights="random normal(0, initializer_range)",
              torch=torch.__version__, transformers=transformers.__version__)
    log(f"torch {torch.__version__}, transformers {transformers.__version__}, {gpu_name}")
    marks.open("build")
    model, cfg = models.build_random_model(shape, "cuda", "bfloat16", log=log)
    n_params = sum(p.numel() for p in model.parameters())
    models.check_finite(model, cfg, "cuda", log=log)
    count_compiled_calls(model)
    marks.close("build")
    fit = batches_that_fit(cfg, torch, args.prompt_len, args.new_tokens, args.max_batch)
    paths = [p for p in args.paths.split(",") if p]
    results = []
    for i, path in enumerate(paths):
        # Share what is left between the paths still to run: the compiled one needs more for compiling.
        left = deadline - time.monotonic()
        share = left if i == len(paths) - 1 else left * (0.4 if path == "generate" else 0.6)
        order = [int(x) for x in args.order.split(",") if int(x) in fit]
        results += sweep_path(args, spec, model, cfg, n_params, torch, transformers, path, order,
                              time.monotonic() + share, gpu_name)
    # A second pass over what the shares skipped, while time is left (compiled code is still warm).
    for path in paths:
        skipped = [r["batch"] for r in results if r["path"] == path and str(r.get("skipped", "")).startswith("budget")]
        if not skipped or deadline - time.monotonic() < args.min_window_s + 5:
            continue
        log(f"second pass, {path}: batches {skipped}")
        again = sweep_path(args, spec, model, cfg, n_params, torch, transformers, path, skipped, deadline, gpu_name)
        done = {r["batch"] for r in again if "skipped" not in r}
        results = [r for r in results if not (r["path"] == path and r["batch"] in done)] + [r for r in again if "skipped" not in r]
    if args.results:
        with open(args.results, "w") as f:
            json.dump({"model": spec["model_id"], "gpu": gpu_name, "results": results}, f, indent=1)
    log(f"done in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
