"""The HTTP layer (aiohttp): /v1/completions and /v1/chat/completions, streamed as server-sent
events with a final usage chunk (stream_options.include_usage) or returned whole; the batch cap's
queue in front of the engine (admission.py); /metrics (metrics.py), /v1/models, /health."""
import asyncio
import contextlib
import itertools
import json
import logging

from aiohttp import web

from . import api
from .admission import Admission
from .engine import GenerationRequest
from .metrics import Counters, Snapshot, render

log = logging.getLogger("refserver")


class RefServer:
    def __init__(self, engine, tokenizer, served_model, max_num_seqs, sampling: api.Sampling, max_model_len):
        self.engine = engine
        self.tokenizer = tokenizer
        self.model = served_model
        self.sampling = sampling
        self.max_model_len = max_model_len
        self.admission = Admission(max_num_seqs)
        self.counters = Counters()
        self._ids = itertools.count()

    def app(self):
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/health", self._health)
        app.router.add_put("/refserver/max_num_seqs", self._set_max_num_seqs)
        app.on_startup.append(self._startup)
        app.on_cleanup.append(self._cleanup)
        return app

    async def _startup(self, app):
        self.engine.start(asyncio.get_running_loop())

    async def _cleanup(self, app):
        await self.engine.close()

    def snapshot(self):
        s = self.engine.stats()
        return Snapshot(max_num_seqs=self.admission.max_running, admitted=self.admission.running,
                        queued=self.admission.waiting, engine_running=s.running, engine_waiting=s.waiting,
                        kv_cache_usage=s.kv_cache_usage)

    async def _completions(self, request):
        return await self._generate(request, chat=False)

    async def _chat(self, request):
        return await self._generate(request, chat=True)

    async def _health(self, request):
        return web.Response(text="ok\n")

    async def _set_max_num_seqs(self, request):
        """The batch cap between benchmarks, without rebuilding the model: the engine (its KV cache,
        its CUDA graphs) stays as started, sized for the largest cap. Only while idle."""
        try:
            value = (await request.json()).get("max_num_seqs")
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            value = None
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            return web.json_response(api.error_body("expected {\"max_num_seqs\": N} with N >= 1", 400), status=400)
        if self.admission.running or self.admission.waiting:
            return web.json_response(api.error_body(
                f"{self.admission.running} requests running, {self.admission.waiting} waiting: "
                "the cap changes only while the server is idle", 409), status=409)
        self.admission.max_running = value
        log.info("batch cap set to %d", value)
        return web.json_response({"max_num_seqs": value})

    async def _metrics(self, request):
        return web.Response(text=render(self.model, self.snapshot(), self.counters),
                            content_type="text/plain", charset="utf-8")

    async def _models(self, request):
        card = {"id": self.model, "object": "model", "owned_by": "wattlab-refserver",
                "max_model_len": self.max_model_len, "max_num_seqs": self.admission.max_running,
                "sampling": {"temperature": self.sampling.temperature, "top_p": self.sampling.top_p},
                "engine": self.engine.describe()}
        return web.json_response({"object": "list", "data": [card]})

    async def _generate(self, request, chat):
        try:
            try:
                body = await request.json()
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise api.BadRequest(f"the body is not JSON: {e}")
            p = api.parse_request(body, chat, self.model, self.sampling, self.max_model_len)
            prompt_ids = self.tokenizer.encode(p.prompt_text)
            if len(prompt_ids) + p.max_tokens > self.max_model_len:
                raise api.BadRequest(f"prompt ({len(prompt_ids)} tokens) + max_tokens ({p.max_tokens}) exceeds "
                                     f"the server's maximum length {self.max_model_len}")
        except api.BadRequest as e:
            return web.json_response(api.error_body(str(e), e.status), status=e.status)
        rid = str(next(self._ids))
        shape = api.ResponseShape(rid, chat, self.model)
        job = _Job(self, GenerationRequest(rid, prompt_ids, p.max_tokens))
        if not p.stream:
            text, reason, error = await job.collect()
            if error:
                return web.json_response(api.error_body(error, 500), status=500)
            return web.json_response(shape.whole(text, reason, len(prompt_ids), job.completion_tokens))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        if chat:
            await resp.write(api.sse(shape.role_chunk()))
        try:
            async with contextlib.aclosing(job.events()) as events:
                async for texts, reason, error in events:
                    if error:
                        await resp.write(api.sse({"error": api.error_body(error, 500)}))
                        continue  # the job ends after an error
                    last = len(texts) - 1
                    out = b"".join(api.sse(shape.token_chunk(t, reason if i == last else None))
                                   for i, t in enumerate(texts))
                    if not texts and reason:  # finished without a new token
                        out = api.sse(shape.token_chunk("", reason))
                    await resp.write(out)
            if p.include_usage and job.error is None:
                await resp.write(api.sse(shape.usage_chunk(len(prompt_ids), job.completion_tokens)))
            await resp.write(api.SSE_DONE)
            await resp.write_eof()
        except ConnectionResetError:
            log.info("request %s: the client went away after %d tokens", rid, job.completion_tokens)
        return resp


class _Job:
    """One request through the batch cap's queue and the engine: yields the text of each event's new
    tokens, with the finish reason on the last event; releases its slot however it ends."""

    def __init__(self, server, request):
        self.s = server
        self.request = request
        self.completion_tokens = 0
        self.error = None

    async def events(self):
        s, req = self.s, self.request
        await s.admission.acquire()
        finished = False
        try:
            s.counters.prompt_tokens += len(req.prompt_ids)
            queue = asyncio.Queue()
            s.engine.submit(req, queue.put_nowait)
            while not finished:
                ev = await queue.get()
                finished = ev.finished or ev.error is not None
                if ev.error is not None:
                    self.error = ev.error
                    s.counters.failed += 1
                    yield [], None, ev.error
                    return
                self.completion_tokens += len(ev.token_ids)
                s.counters.generation_tokens += len(ev.token_ids)
                reason = None
                if ev.finished:
                    reason = ev.finish_reason or ("length" if self.completion_tokens >= req.max_new_tokens else "stop")
                    s.counters.finished[reason] = s.counters.finished.get(reason, 0) + 1
                yield [s.tokenizer.decode_one(t) for t in ev.token_ids], reason, None
        finally:
            if not finished:
                s.engine.cancel(req.request_id)
            s.admission.release()

    async def collect(self):
        parts, reason = [], None
        async with contextlib.aclosing(self.events()) as events:
            async for texts, r, error in events:
                if error:
                    return "", None, error
                parts += texts
                reason = r or reason
        return "".join(parts), reason, None
