"""The Prometheus text the server serves at /metrics, under vLLM's metric names so that
`wattlab infer serve-bench --metrics-url` reads it as it reads vLLM (src/infer/metrics_scrape.h)."""
from dataclasses import dataclass, field
from typing import Dict, Optional


@dataclass
class Counters:
    prompt_tokens: int = 0
    generation_tokens: int = 0
    finished: Dict[str, int] = field(default_factory=dict)  # finish reason -> requests
    failed: int = 0


@dataclass
class Snapshot:
    """One instant: what is running and waiting (engine's view where it reports one)."""

    max_num_seqs: int
    admitted: int                 # requests inside the engine (the protocol layer's count)
    queued: int                   # requests waiting for a slot in the protocol layer
    engine_running: Optional[int] = None
    engine_waiting: Optional[int] = None
    kv_cache_usage: Optional[float] = None

    @property
    def running(self):
        return self.engine_running if self.engine_running is not None else self.admitted

    @property
    def waiting(self):
        return self.queued + (self.engine_waiting or 0)


def _escape(v):
    return str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(model, snap: Snapshot, counters: Counters):
    label = f'{{model_name="{_escape(model)}"}}'
    out = []

    def metric(name, kind, help_text, samples):
        out.append(f"# HELP {name} {help_text}")
        out.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            out.append(f"{name}{labels} {value}")

    metric("vllm:num_requests_running", "gauge",
           "Requests the engine schedules (the engine's count, else those admitted past the batch cap).",
           [(label, snap.running)])
    metric("vllm:num_requests_waiting", "gauge", "Requests waiting for a slot or inside the engine's queue.",
           [(label, snap.waiting)])
    if snap.kv_cache_usage is not None:
        metric("vllm:kv_cache_usage_perc", "gauge", "Fraction of the KV-cache budget in use (0..1).",
               [(label, f"{snap.kv_cache_usage:.6f}")])
    metric("vllm:prompt_tokens_total", "counter", "Prompt tokens of admitted requests.",
           [(label, counters.prompt_tokens)])
    metric("vllm:generation_tokens_total", "counter", "Generated tokens.", [(label, counters.generation_tokens)])
    metric("vllm:request_success_total", "counter", "Requests finished, by finish reason.",
           [(f'{{model_name="{_escape(model)}",finished_reason="{_escape(r)}"}}', n)
            for r, n in sorted(counters.finished.items())])
    metric("refserver:request_failures_total", "counter", "Requests the engine failed.", [(label, counters.failed)])
    metric("refserver:max_num_seqs", "gauge", "The batch cap: most requests inside the engine at once.",
           [(label, snap.max_num_seqs)])
    metric("refserver:admitted_requests", "gauge", "Requests past the batch cap, inside the engine.",
           [(label, snap.admitted)])
    return "\n".join(out) + "\n"
