"""The engine interface the protocol layer drives, and FakeEngine, a deterministic engine without a
model that the protocol's tests (and `--engine fake`) run on.

The protocol layer admits at most the batch cap of requests into the engine at once (server.py);
the engine generates their tokens and reports each request's new tokens through the `emit`
callback it was given, always on the event loop's thread.
"""
import asyncio
from dataclasses import dataclass, field
from typing import Callable, List, Optional


@dataclass
class GenerationRequest:
    request_id: str
    prompt_ids: List[int]
    max_new_tokens: int


@dataclass
class TokenEvent:
    token_ids: List[int] = field(default_factory=list)  # the tokens new since the last event
    finished: bool = False
    finish_reason: Optional[str] = None  # "length" (max_new_tokens reached) or "stop"
    error: Optional[str] = None          # the request failed; no more events follow


@dataclass
class EngineStats:
    running: Optional[int] = None            # requests the engine schedules now (None: it does not say)
    waiting: Optional[int] = None            # admitted, not yet scheduled inside the engine
    kv_cache_usage: Optional[float] = None   # 0..1 of the KV-cache budget in use


Emit = Callable[[TokenEvent], None]


class Engine:
    """What the protocol layer needs from a model engine."""

    vocab_size = 0

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Starts generating; `emit` callbacks run on `loop`."""
        raise NotImplementedError

    def submit(self, request: GenerationRequest, emit: Emit) -> None:
        raise NotImplementedError

    def cancel(self, request_id: str) -> None:
        """The client went away: stop generating for it (no further events are needed)."""
        raise NotImplementedError

    def stats(self) -> EngineStats:
        return EngineStats()

    def describe(self) -> dict:
        """What the engine is (model shape, knobs), served at /v1/models and logged at start."""
        return {}

    async def close(self) -> None:
        pass


class FakeEngine(Engine):
    """Continuous batching without a model: every step gives each scheduled request its next token
    (token i of a request is (prompt length + i) mod vocab_size). A request is scheduled when its
    whole sequence (prompt + max_new_tokens) fits the KV budget still free, in arrival order, as a
    conservative paged-cache scheduler does. Steps run every `step_s` seconds, or only when step()
    is called (step_s=None), which lets tests drive it deterministically."""

    def __init__(self, vocab_size=32000, step_s: Optional[float] = 0.002, kv_budget_tokens: Optional[int] = None):
        self.vocab_size = vocab_size
        self.step_s = step_s
        self.kv_budget_tokens = kv_budget_tokens
        self._waiting = []   # [request, emit], arrival order
        self._running = {}   # request_id -> [request, emit, generated]
        self._loop = None
        self._wake = None
        self._task = None

    def start(self, loop):
        self._loop = loop
        self._wake = asyncio.Event()
        if self.step_s is not None:
            self._task = loop.create_task(self._run())

    def submit(self, request, emit):
        self._waiting.append([request, emit])
        if self._wake is not None:
            self._wake.set()

    def cancel(self, request_id):
        self._running.pop(request_id, None)
        self._waiting = [w for w in self._waiting if w[0].request_id != request_id]

    def _reserved(self):
        return sum(len(r.prompt_ids) + r.max_new_tokens for r, _, _ in self._running.values())

    def _schedule(self):
        while self._waiting:
            req, emit = self._waiting[0]
            need = len(req.prompt_ids) + req.max_new_tokens
            if self.kv_budget_tokens is not None and self._reserved() + need > self.kv_budget_tokens:
                if self._running:
                    break  # wait for a finish to free room
                self._waiting.pop(0)
                emit(TokenEvent(finished=True, error=f"the request needs {need} KV tokens, "
                                                     f"more than the budget of {self.kv_budget_tokens}"))
                continue
            self._waiting.pop(0)
            self._running[req.request_id] = [req, emit, 0]

    def step(self):
        """One batched step: schedule what fits, then one token for every scheduled request."""
        self._schedule()
        for rid in list(self._running):
            req, emit, done = self._running[rid]
            token = (len(req.prompt_ids) + done) % self.vocab_size
            done += 1
            finished = done >= req.max_new_tokens
            if finished:
                del self._running[rid]
            else:
                self._running[rid][2] = done
            emit(TokenEvent(token_ids=[token], finished=finished, finish_reason="length" if finished else None))

    async def _run(self):
        while True:
            if not self._running and not self._waiting:
                self._wake.clear()
                await self._wake.wait()
            await asyncio.sleep(self.step_s)
            self.step()

    def stats(self):
        usage = None
        if self.kv_budget_tokens:
            resident = sum(len(r.prompt_ids) + done for r, _, done in self._running.values())
            usage = resident / self.kv_budget_tokens
        return EngineStats(running=len(self._running), waiting=len(self._waiting), kv_cache_usage=usage)

    def describe(self):
        return {"engine": "fake", "vocab_size": self.vocab_size, "step_s": self.step_s,
                "kv_budget_tokens": self.kv_budget_tokens}

    async def close(self):
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
