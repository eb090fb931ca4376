#!/usr/bin/env python3
"""A real Prometheus scrapes two `wattlab serve --device sim` nodes on loopback.

Both simulated boards draw a constant 300 W (sim script 'step 300W 600s', gain error 0), so the
true total is 600 W. The summed power Prometheus reports (instant and 1 s average gauges, and the
rate of the energy counter) must match it within 2%. Real time is unavoidable here; every wait is
bounded and the whole test stays under ~30 s. Fails, never skips, when Prometheus is missing.
Usage: prometheus_integration.py PATH/TO/wattlab
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

TRUE_POWER_W = 2 * 300.0  # two boards, 'step 300W', gain error 0: from the sim script
TOLERANCE = 0.02
DEADLINE_S = 30.0

procs = []


def cleanup(*_):
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    procs.clear()


def on_signal(sig, _frame):
    cleanup()
    sys.exit(128 + sig)


def fail(msg):
    print("FAIL: " + msg, flush=True)
    cleanup()
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_line(path, pattern, until):
    while time.monotonic() < until:
        with open(path) as f:
            m = re.search(pattern, f.read())
        if m:
            return m
        time.sleep(0.05)
    with open(path) as f:
        fail(f"no line matching {pattern!r} in {path}:\n{f.read()}")


def query(port, expr):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=2) as r:
        body = json.load(r)
    if body.get("status") != "success":
        fail(f"query {expr!r}: {body}")
    return body["data"]["result"]


def scalar(port, expr):
    res = query(port, expr)
    return float(res[0]["value"][1]) if res else None


def main():
    if len(sys.argv) != 2:
        fail("usage: prometheus_integration.py PATH/TO/wattlab")
    wattlab = sys.argv[1]
    prom = shutil.which("prometheus") or ("/usr/bin/prometheus" if os.access("/usr/bin/prometheus", os.X_OK) else None)
    if prom is None:
        fail("Prometheus is not installed (Debian package 'prometheus'; scripts/install-deps.sh installs it)")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    start = time.monotonic()
    until = start + DEADLINE_S
    tmp = tempfile.mkdtemp(prefix="wattlab-prom-")
    try:
        targets = []
        for i, host in enumerate(["node-a", "node-b"]):
            log = os.path.join(tmp, f"{host}.log")
            with open(log, "w") as err:
                procs.append(subprocess.Popen(
                    [wattlab, "serve", "--device", "sim", "--sim-workload", "step 300W 600s", "--sim-gain-error", "0",
                     "--sim-seed", str(i + 1), "--listen", "127.0.0.1:0", "--host-label", host, "--duration-s", "60"],
                    stdout=subprocess.DEVNULL, stderr=err))
            m = wait_for_line(log, r"listening on http://127\.0\.0\.1:(\d+)/metrics", start + 10)
            targets.append(f"127.0.0.1:{m.group(1)}")
        prom_port = free_port()
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\n"
                    "scrape_configs:\n  - job_name: wattlab\n    static_configs:\n"
                    f"      - targets: [{', '.join(repr(t) for t in targets)}]\n")
        plog = os.path.join(tmp, "prometheus.log")
        with open(plog, "w") as err:
            procs.append(subprocess.Popen(
                [prom, f"--config.file={cfg}", f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
                 f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"],
                stdout=subprocess.DEVNULL, stderr=err))
        # Wait until both nodes have been scraped for about 5 s.
        ready = False
        while time.monotonic() < until:
            if procs[-1].poll() is not None:
                with open(plog) as f:
                    fail("Prometheus exited early:\n" + f.read())
            try:
                n = scalar(prom_port, "min(count_over_time(wattlab_energy_joules_total[5s]))")
                k = scalar(prom_port, "count(wattlab_energy_joules_total)")
                if n is not None and k == 2 and n >= 9:
                    ready = True
                    break
            except OSError:
                pass  # not listening yet
            time.sleep(0.25)
        if not ready:
            with open(plog) as f:
                fail(f"Prometheus did not scrape both exporters within {DEADLINE_S:.0f} s; its log:\n" + f.read())
        hosts = sorted(r["metric"]["host"] for r in query(prom_port, 'wattlab_energy_joules_total{simulated="true"}'))
        if hosts != ["node-a", "node-b"]:
            fail(f"expected SIMULATED series from node-a and node-b, got hosts {hosts}")
        checks = {
            "sum(wattlab_power_watts{kind=\"instant\"})": "summed instant power",
            "sum(wattlab_power_watts{kind=\"average\"})": "summed 1 s average power",
            "sum(deriv(wattlab_energy_joules_total[5s]))": "summed slope of the energy counters",
        }
        bad = []
        for expr, what in checks.items():
            v = scalar(prom_port, expr)
            if v is None:
                fail(f"{expr} returned nothing")
            err = (v - TRUE_POWER_W) / TRUE_POWER_W
            print(f"{what}: {v:.2f} W (SIMULATED; true {TRUE_POWER_W:.0f} W; error {100 * err:+.2f}%) [{expr}]")
            if abs(err) > TOLERANCE:
                bad.append(what)
        if bad:
            fail(f"off by more than {100 * TOLERANCE:.0f}% from the simulators' true power: {', '.join(bad)}")
        print(f"PASS in {time.monotonic() - start:.1f} s")
    finally:
        cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
