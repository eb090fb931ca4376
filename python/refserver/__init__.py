"""The serving bench's reference server (docs/refserver.md): an OpenAI-compatible streaming server
over transformers' continuous batching, with a batch cap and a KV-cache budget as its knobs and
vLLM's Prometheus metric names, for random-weight models built from a configuration. It is the
bench's reference, not a product server.

Layers: the protocol (api.py: requests and responses; server.py: HTTP, SSE, usage, the admission
queue, /metrics) over the Engine interface (engine.py), implemented by FakeEngine (engine.py,
tests) and TransformersEngine (hf_engine.py, imports torch and transformers only when built).
"""
