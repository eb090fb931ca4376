"""wattlab infer serve-bench against the reference server (python/refserver, fake engine): what the
server streams, counts and serves at /metrics is what serve-bench parses, reconciles and scrapes."""
import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.join(HERE, "..", "..", "python")
BIN = os.environ.get("WATTLAB_BIN", "")


@pytest.fixture
def server():
    with tempfile.TemporaryDirectory() as tmp:
        port_file = os.path.join(tmp, "port")
        proc = subprocess.Popen([sys.executable, "-m", "refserver", "--engine", "fake", "--max-num-seqs", "4",
                                 "--fake-step-ms", "2", "--kv-cache-tokens", "100000", "--port", "0",
                                 "--port-file", port_file, "--served-model-name", "ref"],
                                cwd=PY, env=dict(os.environ, PYTHONPATH=PY), stderr=subprocess.PIPE, text=True)
        try:
            for _ in range(600):
                if os.path.exists(port_file) or proc.poll() is not None:
                    break
                time.sleep(0.05)
            assert os.path.exists(port_file), proc.stderr.read() if proc.poll() is not None else "no port file"
            yield int(open(port_file).read()), tmp
        finally:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.mark.skipif(not BIN, reason="WATTLAB_BIN is not set: run under CTest")
def test_serve_bench_reads_the_reference_server(server):
    port, tmp = server
    out = os.path.join(tmp, "out.json")
    r = subprocess.run([BIN, "infer", "serve-bench", "--device", "sim", "--sim-workload", "step 300W 600s",
                        "--output-mean", "10", "--input-mean", "6", "--url", f"http://127.0.0.1:{port}/v1",
                        "--model", "ref", "--batch-cap", "4", "--requests-per-run", "40", "--repeats", "2",
                        "--metrics-url", f"http://127.0.0.1:{port}/metrics", "--db", os.path.join(tmp, "r.db"),
                        "--json", out], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    j = json.load(open(out))
    assert len(j["runs"]) == 2
    for run in j["runs"]:
        assert run["requests"]["succeeded"] == 40 and run["requests"]["failed"] == 0
        # One text chunk per token, and the server's usage agrees with the chunks, request by request.
        assert run["output_tokens"]["requests_with_usage"] == 40
        assert run["output_tokens"]["differences"] == []
        assert run["output_tokens"]["stream_chunks"] == sum(q["output_tokens"] for q in run["per_request"])
        # Prompt tokens are the drawn prompt's words.
        assert run["input_tokens"]["usage_prompt_mean"] == run["input_tokens"]["requested_mean"]
        m = run["server_metrics"]
        assert m["samples_total"] > 0 and m["failures"] == 0
        if run["steady_state"]["found"] and m.get("steady_samples"):
            assert 0 <= m["mean_running"] <= 4  # the batch cap holds
            assert m["mean_kv_cache_usage"] is not None
