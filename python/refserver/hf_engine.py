"""The engine over transformers' continuous batching: a ContinuousBatchingManager
(model.init_continuous_batching) generates on its own thread with a paged KV cache; a dispatcher
thread moves its streamed outputs to the event loop in batches. torch and transformers are imported
when the engine is built."""
import asyncio
import dataclasses
import math
import threading

from .engine import Engine, EngineStats, TokenEvent


def continuous_batching_config(cb_cls, wanted):
    """The ContinuousBatchingConfig with `wanted` fields (None values left to transformers). A field
    this transformers does not have is an error naming it: a knob that silently does nothing would
    make the bench measure something else than it says."""
    wanted = {k: v for k, v in wanted.items() if v is not None}
    have = {f.name for f in dataclasses.fields(cb_cls)} if dataclasses.is_dataclass(cb_cls) else set()
    missing = sorted(set(wanted) - have)
    if missing:
        raise SystemExit(f"this transformers' ContinuousBatchingConfig has no field {', '.join(missing)}: "
                         f"the knob cannot be applied (fields: {', '.join(sorted(have))})")
    return cb_cls(**wanted)


class TransformersEngine(Engine):
    def __init__(self, model, cfg, sampling, max_new_tokens_default, max_batch_tokens=None, kv_cache_tokens=None,
                 kv_memory_fraction=None, block_size=None, max_requests_per_step=None, warmup=True, log=print):
        import transformers
        from transformers import GenerationConfig
        from transformers.generation import ContinuousBatchingConfig

        self.vocab_size = cfg.vocab_size
        self.log = log
        self.transformers_version = transformers.__version__
        # Random weights: no token means end of sequence, every request generates its max_tokens.
        gen = GenerationConfig(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p, top_k=None,
                               max_new_tokens=max_new_tokens_default, eos_token_id=-1, pad_token_id=0)
        num_blocks = None
        if kv_cache_tokens is not None:
            if block_size is None:
                block_size = next(f.default for f in dataclasses.fields(ContinuousBatchingConfig) if f.name == "block_size")
            num_blocks = math.ceil(kv_cache_tokens / block_size)
        wanted = {"max_batch_tokens": max_batch_tokens, "num_blocks": num_blocks, "block_size": block_size,
                  "max_memory_percent": kv_memory_fraction}
        # The batch cap as the engine's per-step limit too (vLLM schedules up to max_num_seqs a step),
        # where this transformers has that field; said at start either way.
        fields = {f.name for f in dataclasses.fields(ContinuousBatchingConfig)}
        self.per_step_limit = "max_requests_per_batch" in fields and max_requests_per_step is not None
        if self.per_step_limit:
            wanted["max_requests_per_batch"] = max_requests_per_step
        log(f"requests per step: {'at most ' + str(max_requests_per_step) if self.per_step_limit else 'transformers decides (no max_requests_per_batch field)'}")
        cb = continuous_batching_config(ContinuousBatchingConfig, wanted)
        self.manager = model.init_continuous_batching(generation_config=gen, continuous_batching_config=cb)
        if warmup and hasattr(self.manager, "warmup"):
            log("warming up (CUDA graphs of the largest shapes)...")
            self.manager.warmup()
        self._sinks = {}  # request_id -> [emit, tokens already delivered, max_new_tokens]
        self._loop = None
        self._stop = threading.Event()
        self._thread = None

    def start(self, loop):
        self._loop = loop
        self.manager.start()
        self._thread = threading.Thread(target=self._dispatch, name="refserver-dispatch", daemon=True)
        self._thread.start()

    def submit(self, request, emit):
        self._sinks[request.request_id] = [emit, 0, request.max_new_tokens]
        try:
            self.manager.add_request(input_ids=request.prompt_ids, request_id=request.request_id,
                                     max_new_tokens=request.max_new_tokens, streaming=True)
        except Exception as e:  # the request fails, the server goes on
            del self._sinks[request.request_id]
            emit(TokenEvent(finished=True, error=f"the engine refused the request: {type(e).__name__}: {e}"))

    def cancel(self, request_id):
        self._sinks.pop(request_id, None)
        if hasattr(self.manager, "cancel_request"):
            self.manager.cancel_request(request_id)

    @staticmethod
    def _view(out):
        """(request id, all tokens so far, finished, error) of one streamed output."""
        status = str(getattr(out, "status", ""))
        error = getattr(out, "error", None) or ("the engine failed the request" if "FAILED" in status else None)
        is_finished = getattr(out, "is_finished", None)
        finished = is_finished() if callable(is_finished) else "FINISHED" in status
        return out.request_id, list(out.generated_tokens), finished, error

    def _dispatch(self):
        while not self._stop.is_set():
            out = self.manager.get_result(timeout=0.1)
            if out is None:
                if not self.manager.is_running() and not self._stop.is_set():
                    self._loop.call_soon_threadsafe(self._fail_all, "the generation thread stopped")
                    return
                continue
            batch = [self._view(out)]
            while (more := self.manager.get_result(timeout=0)) is not None:  # what else is ready
                batch.append(self._view(more))
            self._loop.call_soon_threadsafe(self._deliver, batch)

    def _deliver(self, batch):
        for rid, tokens, finished, error in batch:
            sink = self._sinks.get(rid)
            if sink is None:
                continue  # cancelled
            emit, seen, max_new = sink
            if len(tokens) < seen:
                error = error or f"the engine's outputs are not cumulative ({len(tokens)} tokens after {seen})"
            sink[1] = len(tokens)
            if finished or error:
                del self._sinks[rid]
            reason = ("length" if len(tokens) >= max_new else "stop") if finished else None
            emit(TokenEvent(token_ids=tokens[seen:], finished=finished or error is not None, finish_reason=reason,
                            error=error))

    def _fail_all(self, why):
        for rid in list(self._sinks):
            self._sinks.pop(rid)[0](TokenEvent(finished=True, error=why))

    def stats(self):
        s = EngineStats()
        bp = getattr(self.manager, "batch_processor", None)
        try:  # the manager's internals: what its scheduler holds and its paged cache's free blocks
            s.running = len(bp.scheduler.active_requests)
            s.waiting = len(bp.scheduler.waiting_requests)
        except AttributeError:
            pass
        try:
            total = bp.cache.num_blocks
            s.kv_cache_usage = 1.0 - bp.cache.get_num_free_blocks() / total
        except (AttributeError, TypeError, ZeroDivisionError):
            pass
        return s

    def describe(self):
        cb = getattr(self.manager, "continuous_batching_config", None)
        resolved = {}
        if dataclasses.is_dataclass(cb):
            for f in dataclasses.fields(cb):
                v = getattr(cb, f.name)
                resolved[f.name] = v if isinstance(v, (int, float, str, bool, type(None))) else str(v)
        return {"engine": "transformers continuous batching", "transformers": self.transformers_version,
                "per_step_limit_is_the_cap": self.per_step_limit, "continuous_batching_config": resolved}

    async def close(self):
        self._stop.set()
        await asyncio.get_running_loop().run_in_executor(None, lambda: self.manager.stop(block=True, timeout=60))
