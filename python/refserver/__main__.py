"""python3 -m refserver: start the reference server (docs/refserver.md).

  python3 -m refserver --model-config llama-8b --max-num-seqs 128 --port 8000
  python3 -m refserver --engine fake --max-num-seqs 4 --port 0 --port-file port.txt
"""
import argparse
import asyncio
import json
import os
import signal
import sys

from aiohttp import web

from . import api
from .engine import FakeEngine
from .models import SHAPES, kv_bytes_per_token, param_count
from .server import RefServer
from .tokenizer import WordTokenizer


def log(*a):
    print("[refserver]", *a, file=sys.stderr, flush=True)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m refserver", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=["transformers", "fake"], default="transformers",
                    help="transformers: continuous batching on a random-weight model; fake: no model (tests)")
    ap.add_argument("--model-config", choices=sorted(SHAPES), default="tiny", help="the model's shape (models.py)")
    ap.add_argument("--served-model-name", default=None, help="the name requests must ask for (default: the shape's id)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000, help="0: any free port (see --port-file)")
    ap.add_argument("--port-file", default=None, help="write the bound port here once listening")
    ap.add_argument("--max-num-seqs", type=int, default=256, help="batch cap: most requests inside the engine at once")
    kv = ap.add_mutually_exclusive_group()
    kv.add_argument("--kv-cache-tokens", type=int, default=None, help="KV-cache budget in tokens (paged blocks)")
    kv.add_argument("--kv-memory-fraction", type=float, default=None,
                    help="KV-cache budget as transformers' max_memory_percent (0..1 of free GPU memory)")
    ap.add_argument("--max-batch-tokens", type=int, default=8192, help="tokens per forward step (prefill chunks + decodes)")
    ap.add_argument("--block-size", type=int, default=None, help="paged KV block size in tokens (default: transformers')")
    ap.add_argument("--max-model-len", type=int, default=32768, help="longest prompt + output (tokens)")
    ap.add_argument("--temperature", type=float, default=0.8, help="sampling of every request (the leaderboard's)")
    ap.add_argument("--top-p", type=float, default=0.95)
    ap.add_argument("--device", default=None, help="torch device (default: cuda when present, else cpu)")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--attn", default="sdpa", help="attention implementation under the paged cache")
    ap.add_argument("--seed", type=int, default=0, help="weights' seed")
    ap.add_argument("--no-warmup", action="store_true", help="skip capturing CUDA graphs before serving")
    ap.add_argument("--fake-step-ms", type=float, default=2.0, help="fake engine: one token per request every N ms")
    a = ap.parse_args(argv)
    if a.max_num_seqs < 1:
        ap.error(f"--max-num-seqs {a.max_num_seqs}: must be at least 1")
    if a.kv_cache_tokens is not None and a.kv_cache_tokens < 1:
        ap.error(f"--kv-cache-tokens {a.kv_cache_tokens}: must be at least 1")
    if a.kv_memory_fraction is not None and not 0 < a.kv_memory_fraction <= 1:
        ap.error(f"--kv-memory-fraction {a.kv_memory_fraction}: must be in (0, 1]")
    if not 0 < a.top_p <= 1 or a.temperature <= 0:
        ap.error("--temperature must be > 0 and --top-p in (0, 1]: the server samples")
    return a


def build_engine(a):
    shape = SHAPES[a.model_config]
    c = shape["config"]
    info = {"model_config": a.model_config, "params": param_count(c), "active_params": param_count(c, active=True),
            "kv_bytes_per_token": kv_bytes_per_token(c), "max_num_seqs": a.max_num_seqs,
            "kv_cache_tokens": a.kv_cache_tokens, "kv_memory_fraction": a.kv_memory_fraction,
            "max_batch_tokens": a.max_batch_tokens, "temperature": a.temperature, "top_p": a.top_p}
    if a.engine == "fake":
        return FakeEngine(vocab_size=c["vocab_size"], step_s=a.fake_step_ms / 1e3, kv_budget_tokens=a.kv_cache_tokens), info
    import torch

    from .hf_engine import TransformersEngine
    from .models import build_random_model, check_finite

    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    model, cfg = build_random_model(a.model_config, device, a.dtype, a.seed, a.attn, log=log)
    check_finite(model, cfg, device, log=log)
    info.update(device=device, dtype=a.dtype, torch=torch.__version__)
    engine = TransformersEngine(model, cfg, api.Sampling(a.temperature, a.top_p), api.DEFAULT_MAX_TOKENS,
                                max_batch_tokens=a.max_batch_tokens, kv_cache_tokens=a.kv_cache_tokens,
                                kv_memory_fraction=a.kv_memory_fraction, block_size=a.block_size,
                                max_requests_per_step=a.max_num_seqs, warmup=not a.no_warmup, log=log)
    return engine, info


async def serve(a, engine, info):
    name = a.served_model_name or SHAPES[a.model_config]["model_id"]
    srv = RefServer(engine, WordTokenizer(engine.vocab_size), name, a.max_num_seqs,
                    api.Sampling(a.temperature, a.top_p), a.max_model_len)
    runner = web.AppRunner(srv.app(), access_log=None)
    await runner.setup()
    # A deep accept queue: the bench opens every request's connection at t = 0.
    site = web.TCPSite(runner, a.host, a.port, backlog=4096)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    log(json.dumps({"served_model": name, "listening": f"http://{a.host}:{port}", **info, **engine.describe()}))
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, a.port_file)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await stop.wait()
    log("stopping")
    await runner.cleanup()


def main(argv=None):
    a = parse_args(argv)
    engine, info = build_engine(a)
    asyncio.run(serve(a, engine, info))


if __name__ == "__main__":
    main()
