"""The reference server's protocol layer (python/refserver) on FakeEngine: SSE chunks and usage as
serve-bench parses them, whole responses, the batch cap's queue, the KV budget, bad requests, the
metric names serve-bench scrapes; model shapes; and, where torch and transformers import, the
transformers engine on a tiny random model."""
import asyncio
import dataclasses
import json
import os
import re

import pytest
from aiohttp.test_utils import TestClient, TestServer

from refserver import api
from refserver.engine import FakeEngine
from refserver.hf_engine import continuous_batching_config
from refserver.models import SHAPES, kv_bytes_per_token, param_count
from refserver.server import RefServer
from refserver.tokenizer import WordTokenizer

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MODEL = "m"
SAMPLING = api.Sampling(0.8, 0.95)


def make_server(engine, cap=4, max_model_len=4096):
    return RefServer(engine, WordTokenizer(engine.vocab_size), MODEL, cap, SAMPLING, max_model_len)


def run(coro_fn, engine, **kw):
    """Runs coro_fn(client, server) against a fresh app on a fresh event loop."""
    async def main():
        srv = make_server(engine, **kw)
        async with TestClient(TestServer(srv.app())) as client:
            return await coro_fn(client, srv)
    return asyncio.run(main())


def events(raw):
    """SSE data payloads of a body, in order; [DONE] kept as the string."""
    out = []
    for block in raw.decode().split("\n\n"):
        if block.strip():
            assert block.startswith("data: "), block
            data = block[len("data: "):]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


def body(**kw):
    b = {"model": MODEL, "max_tokens": 5, "stream": True, "stream_options": {"include_usage": True},
         "temperature": 0.8, "top_p": 0.95}
    b.update(kw)
    return b


async def post(client, path, b):
    r = await client.post(path, json=b)
    return r.status, await r.read()


def test_streamed_completion_has_one_chunk_per_token_then_usage_then_done():
    async def go(client, srv):
        status, raw = await post(client, "/v1/completions", body(prompt="one two three four", max_tokens=7))
        assert status == 200
        ev = events(raw)
        assert ev[-1] == "[DONE]"
        tokens = [e for e in ev[:-1] if e["choices"]]
        assert len(tokens) == 7
        assert all(e["choices"][0]["text"].strip() for e in tokens)  # every chunk carries text
        assert [e["choices"][0]["finish_reason"] for e in tokens] == [None] * 6 + ["length"]
        assert ev[-2]["choices"] == [] and ev[-2]["usage"] == {"prompt_tokens": 4, "completion_tokens": 7,
                                                                "total_tokens": 11}
    run(go, FakeEngine(step_s=0.001))


def test_streamed_chat_starts_with_the_role_and_counts_content_words_as_prompt_tokens():
    async def go(client, srv):
        msgs = [{"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "a b c"}]}]
        status, raw = await post(client, "/v1/chat/completions", body(messages=msgs, max_tokens=3))
        assert status == 200
        ev = events(raw)
        assert ev[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
        content = [e for e in ev[1:-1] if e["choices"]]
        assert len(content) == 3 and all(e["choices"][0]["delta"]["content"] for e in content)
        assert ev[-2]["usage"]["prompt_tokens"] == 5 and ev[-2]["usage"]["completion_tokens"] == 3
    run(go, FakeEngine(step_s=0.001))


def test_no_usage_chunk_unless_asked():
    async def go(client, srv):
        status, raw = await post(client, "/v1/completions", body(prompt="x", stream_options=None, max_tokens=2))
        ev = events(raw)
        assert status == 200 and ev[-1] == "[DONE]" and all("usage" not in e for e in ev[:-1])
    run(go, FakeEngine(step_s=0.001))


def test_whole_responses_carry_text_and_usage():
    async def go(client, srv):
        status, raw = await post(client, "/v1/completions", body(prompt="p q", stream=False, max_tokens=4))
        j = json.loads(raw)
        assert status == 200 and j["object"] == "text_completion"
        assert len(j["choices"][0]["text"].split()) == 4 and j["choices"][0]["finish_reason"] == "length"
        assert j["usage"] == {"prompt_tokens": 2, "completion_tokens": 4, "total_tokens": 6}
        status, raw = await post(client, "/v1/chat/completions",
                                 body(messages=[{"role": "user", "content": "hi"}], stream=False, max_tokens=2))
        j = json.loads(raw)
        assert j["choices"][0]["message"]["role"] == "assistant" and len(j["choices"][0]["message"]["content"].split()) == 2
    run(go, FakeEngine(step_s=0.001))


def test_bad_requests_are_refused_naming_the_problem():
    async def go(client, srv):
        r = await client.post("/v1/completions", data=b"{not json")
        assert r.status == 400 and "not JSON" in (await r.json())["message"]
        cases = [(body(), 400, "'prompt'"),
                 (body(prompt="x", model="other"), 404, "not served"),
                 (body(prompt="x", n=2), 400, "'n'"),
                 (body(prompt="x", max_tokens=0), 400, "max_tokens"),
                 (body(prompt="x", temperature=0.0), 400, "temperature 0.8"),
                 (body(prompt="x", top_p=1.0), 400, "top_p 0.95"),
                 (body(prompt="x " * 10, max_tokens=95), 400, "maximum length 100")]
        for b, status, text in cases:
            r = await client.post("/v1/completions", json=b)
            assert r.status == status, b
            assert text in (await r.json())["message"], b
        r = await client.post("/v1/chat/completions", json=body(messages=[{"role": "user"}]))
        assert r.status == 400 and "'content'" in (await r.json())["message"]
    run(go, FakeEngine(step_s=0.001), max_model_len=100)


def metric(text, name):
    m = re.search(rf"^{re.escape(name)}\{{[^}}]*\}} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


async def settle(cond, what):
    for _ in range(2000):
        if cond():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"never happened: {what}")


def test_the_batch_cap_queues_requests_in_arrival_order_and_metrics_say_so():
    engine = FakeEngine(step_s=None)  # steps only when the test says

    async def go(client, srv):
        firsts = []

        async def one(i):
            r = await client.post("/v1/completions", json=body(prompt=f"r{i}", max_tokens=2))
            async for _ in r.content.iter_any():
                if i not in firsts:
                    firsts.append(i)
            return r.status

        tasks = []
        for i in range(5):
            tasks.append(asyncio.create_task(one(i)))
            await settle(lambda: srv.admission.running + srv.admission.waiting == i + 1, f"request {i} arrived")
        m = await (await client.get("/metrics")).text()
        # Two admitted into the engine (not yet scheduled: no step ran), three queued for a slot.
        assert metric(m, "refserver:admitted_requests") == 2
        assert metric(m, "vllm:num_requests_running") == 0
        assert metric(m, "vllm:num_requests_waiting") == 5
        engine.step()
        m = await (await client.get("/metrics")).text()
        assert metric(m, "vllm:num_requests_running") == 2 and metric(m, "vllm:num_requests_waiting") == 3
        while not all(t.done() for t in tasks):
            engine.step()
            await asyncio.sleep(0.01)
        assert [t.result() for t in tasks] == [200] * 5
        assert sorted(firsts[:2]) == [0, 1] and sorted(firsts[2:4]) == [2, 3] and firsts[4] == 4
        m = await (await client.get("/metrics")).text()
        assert metric(m, "vllm:generation_tokens_total") == 10
        assert metric(m, "vllm:request_success_total") == 5
    run(go, engine, cap=2)


def test_the_cap_changes_between_benchmarks_only_while_idle():
    engine = FakeEngine(step_s=None)

    async def go(client, srv):
        r = await client.put("/refserver/max_num_seqs", json={"max_num_seqs": 3})
        assert r.status == 200 and srv.admission.max_running == 3
        m = await (await client.get("/metrics")).text()
        assert metric(m, "refserver:max_num_seqs") == 3
        for bad in ({"max_num_seqs": 0}, {"max_num_seqs": "8"}, {}):
            assert (await client.put("/refserver/max_num_seqs", json=bad)).status == 400
        task = asyncio.create_task(post(client, "/v1/completions", body(prompt="x", max_tokens=2)))
        await settle(lambda: srv.admission.running == 1, "one admitted")
        r = await client.put("/refserver/max_num_seqs", json={"max_num_seqs": 8})
        assert r.status == 409 and "idle" in (await r.json())["message"]
        while not task.done():
            engine.step()
            await asyncio.sleep(0.01)
        assert (await client.put("/refserver/max_num_seqs", json={"max_num_seqs": 8})).status == 200
    run(go, engine, cap=2)


def test_the_kv_budget_holds_running_below_the_cap():
    engine = FakeEngine(step_s=None, kv_budget_tokens=2 * (1 + 8))  # room for two sequences of 1 + 8

    async def go(client, srv):
        tasks = [asyncio.create_task(post(client, "/v1/completions", body(prompt=f"w{i}", max_tokens=8)))
                 for i in range(4)]
        await settle(lambda: srv.admission.running == 4, "four admitted")
        engine.step()
        m = await (await client.get("/metrics")).text()
        assert metric(m, "vllm:num_requests_running") == 2
        assert metric(m, "vllm:num_requests_waiting") == 2
        assert metric(m, "vllm:kv_cache_usage_perc") == pytest.approx(2 * 2 / 18)
        while not all(t.done() for t in tasks):
            engine.step()
            await asyncio.sleep(0.01)
        assert [t.result()[0] for t in tasks] == [200] * 4
    run(go, engine, cap=4)


def test_a_client_that_goes_away_frees_its_slot():
    engine = FakeEngine(step_s=None)

    async def go(client, srv):
        r = await client.post("/v1/completions", json=body(prompt="a", max_tokens=1000))
        engine.step()
        await r.content.readany()
        r.close()  # gone mid-stream
        second = asyncio.create_task(post(client, "/v1/completions", body(prompt="b", max_tokens=2)))
        while not second.done():
            engine.step()
            await asyncio.sleep(0.01)
        assert second.result()[0] == 200
        assert srv.admission.running == 0 and srv.admission.waiting == 0
    run(go, engine, cap=1)


def test_metrics_carry_the_names_serve_bench_scrapes():
    header = open(os.path.join(ROOT, "src", "infer", "metrics_scrape.h")).read()
    names = set(re.findall(r'"(vllm:[a-z_]+)"', header))
    assert {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"} <= names

    async def go(client, srv):
        text = await (await client.get("/metrics")).text()
        served = set(re.findall(r"^(vllm:[a-z_]+)\{", text, re.M))
        assert {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"} <= served
        assert served & names == {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"}
    run(go, FakeEngine(step_s=None, kv_budget_tokens=100))


def test_shapes_have_the_published_sizes():
    def billions(name, active=False):
        return param_count(SHAPES[name]["config"], active) / 1e9
    assert billions("llama-8b") == pytest.approx(8.03, abs=0.005)
    assert billions("llama-3b") == pytest.approx(3.21, abs=0.005)
    assert billions("llama-1b") == pytest.approx(1.24, abs=0.005)
    assert billions("mixtral-8x7b") == pytest.approx(46.7, abs=0.05)
    assert billions("mixtral-8x7b", active=True) == pytest.approx(12.9, abs=0.05)
    assert kv_bytes_per_token(SHAPES["llama-8b"]["config"]) == 131072  # 2 x 32 layers x 8 heads x 128 x 2 B
    assert kv_bytes_per_token(SHAPES["llama-1b"]["config"]) == 32768


def test_word_tokenizer_counts_words_and_decodes_every_id_to_text():
    t = WordTokenizer(128256)
    assert len(t.encode("the quick  brown\nfox")) == 4
    assert t.encode("zyzzyva") == WordTokenizer(128256).encode("zyzzyva")  # stable across instances
    assert all(0 <= i < 128256 for i in t.encode("unusual words hash into the vocabulary"))
    assert t.decode_one(0) == " the" and t.decode_one(100000) == " w100000"


def test_a_continuous_batching_knob_transformers_lacks_is_an_error():
    @dataclasses.dataclass
    class Cb:
        block_size: int = 256
        num_blocks: int = None

    assert continuous_batching_config(Cb, {"num_blocks": 4, "block_size": None}).num_blocks == 4
    with pytest.raises(SystemExit, match="no field max_memory_percent"):
        continuous_batching_config(Cb, {"max_memory_percent": 0.5})


def test_transformers_engine_streams_a_tiny_random_model():
    torch = pytest.importorskip("torch", reason="torch is not installed here: the real engine runs on the GPU machine")
    pytest.importorskip("transformers", reason="transformers is not installed here")
    from refserver.hf_engine import TransformersEngine
    from refserver.models import build_random_model

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, cfg = build_random_model("tiny", device, "float32" if device == "cpu" else "bfloat16", log=lambda *a: None)
    engine = TransformersEngine(model, cfg, SAMPLING, 16, max_batch_tokens=256, kv_cache_tokens=4096, warmup=False,
                                log=lambda *a: None)

    async def go(client, srv):
        results = await asyncio.gather(*[post(client, "/v1/completions", body(prompt="a b c", max_tokens=6))
                                         for _ in range(3)])
        for status, raw in results:
            ev = events(raw)
            assert status == 200 and ev[-1] == "[DONE]"
            assert len([e for e in ev[:-1] if e["choices"]]) == 6
            assert ev[-2]["usage"]["completion_tokens"] == 6 and ev[-2]["usage"]["prompt_tokens"] == 3
    run(go, engine, cap=2)
