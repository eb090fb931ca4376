#!/usr/bin/env python3
"""Load on `wattlab serve --device sim`: N concurrent keep-alive scrapers on loopback.

Prints errors (must be 0), scrape latency p50/p99/max, the exporter's RSS before and after (from
/proc), and whether scrapes delay the sampler: read lateness (wattlab_sampler_read_lateness_seconds)
and power-read rate idle vs under load. Takes about idle_s + load_s + 5 s (default 10 + 30 + 5).
Usage: scripts/bench-export-load.py [--wattlab build/ci/src/cli/wattlab] [--clients 200] [--load-s 30] [--idle-s 10]
The client is Python threads: its latencies include the client's own scheduling (GIL) time.
"""
import argparse
import http.client
import os
import re
import subprocess
import sys
import tempfile
import threading
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def threads_of(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return -1


def scrape(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    r = c.getresponse()
    body = r.read().decode()
    c.close()
    if r.status != 200:
        raise RuntimeError(f"status {r.status}")
    return body


def parse(body):
    """Sampler histogram buckets, read count and power-read count."""
    out = {"buckets": {}}
    for line in body.splitlines():
        m = re.match(r'wattlab_sampler_read_lateness_seconds_bucket\{.*le="([^"]+)"\} (\S+)', line)
        if m:
            out["buckets"][m.group(1)] = float(m.group(2))
        m = re.match(r'wattlab_sampler_read_lateness_seconds_(sum|count)\{[^}]*\} (\S+)', line)
        if m:
            out[m.group(1)] = float(m.group(2))
        m = re.match(r'wattlab_sensor_reads_total\{.*reading="power_instant_w"\} (\S+)', line)
        if m:
            out["instant_reads"] = out.get("instant_reads", 0) + float(m.group(1))
        m = re.match(r'wattlab_sampler_read_lateness_max_seconds\{[^}]*\} (\S+)', line)
        if m:
            out["max"] = float(m.group(1))
    return out


def report_phase(name, a, b, dur_s):
    n = b["count"] - a["count"]
    mean_ms = 1e3 * (b["sum"] - a["sum"]) / n if n else float("nan")
    le = {k: b["buckets"][k] - a["buckets"].get(k, 0) for k in b["buckets"]}
    late1 = n - le.get("0.001", 0)
    late5 = n - le.get("0.005", 0)
    rate = (b["instant_reads"] - a["instant_reads"]) / dur_s
    print(f"sampler {name}: {int(n)} reads in {dur_s:.1f} s, mean lateness {mean_ms:.3f} ms, "
          f"later than 1 ms: {int(late1)} ({100 * late1 / n:.2f}%), later than 5 ms: {int(late5)} ({100 * late5 / n:.2f}%), "
          f"power_instant reads {rate:.1f}/s (schedule: 50/s at --interval-ms 20)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wattlab", default="build/ci/src/cli/wattlab")
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--load-s", type=float, default=30)
    ap.add_argument("--idle-s", type=float, default=10)
    o = ap.parse_args()
    log = tempfile.NamedTemporaryFile(prefix="wattlab-load-", suffix=".log", delete=False)
    cmd = [o.wattlab, "serve", "--device", "sim", "--sim-workload", "step 300W 3600s", "--listen", "127.0.0.1:0"]
    print("exporter: " + " ".join(cmd))
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
    try:
        port = None
        until = time.monotonic() + 15
        while port is None and time.monotonic() < until:
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/metrics", open(log.name).read())
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        if port is None:
            sys.exit("FAIL: exporter did not start:\n" + open(log.name).read())
        print(f"clients {o.clients} keep-alive, load {o.load_s:.0f} s, idle baseline {o.idle_s:.0f} s, loopback port {port}")
        i0 = parse(scrape(port))
        t_i0 = time.monotonic()
        time.sleep(o.idle_s)
        i1 = parse(scrape(port))
        t_i1 = time.monotonic()
        rss_before = rss_kib(p.pid)
        thr_before = threads_of(p.pid)

        lat, errors, lock = [], [], threading.Lock()
        stop_at = time.monotonic() + o.load_s
        go = threading.Event()

        def client():
            mine, errs = [], []
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            go.wait()
            while time.monotonic() < stop_at:
                t = time.perf_counter()
                try:
                    c.request("GET", "/metrics")
                    r = c.getresponse()
                    body = r.read()
                    if r.status != 200 or not body.startswith(b"# HELP"):
                        errs.append(f"status {r.status}")
                    else:
                        mine.append(time.perf_counter() - t)
                except Exception as e:  # counted, then a fresh connection
                    errs.append(type(e).__name__ + ": " + str(e))
                    c.close()
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.close()
            with lock:
                lat.extend(mine)
                errors.extend(errs)

        ts = [threading.Thread(target=client) for _ in range(o.clients)]
        for t in ts:
            t.start()
        l0 = parse(scrape(port))
        t_l0 = time.monotonic()
        go.set()
        peak_threads = 0
        while time.monotonic() < stop_at:
            peak_threads = max(peak_threads, threads_of(p.pid))
            time.sleep(0.5)
        l1 = parse(scrape(port))
        t_l1 = time.monotonic()
        for t in ts:
            t.join()
        rss_after = rss_kib(p.pid)
        lat.sort()
        n = len(lat)
        pct = lambda q: 1e3 * lat[min(n - 1, int(q * n))] if n else float("nan")
        print(f"scrapes ok {n}, errors {len(errors)}, throughput {n / o.load_s:.0f} scrapes/s")
        if errors:
            print("first errors: " + "; ".join(errors[:5]))
        print(f"scrape latency ms: p50 {pct(0.50):.2f}, p99 {pct(0.99):.2f}, max {1e3 * lat[-1] if n else float('nan'):.2f}")
        print(f"exporter RSS: before load {rss_before} KiB, after load {rss_after} KiB; threads before {thr_before}, peak {peak_threads}")
        report_phase("idle", i0, i1, t_i1 - t_i0)
        report_phase("under load", l0, l1, t_l1 - t_l0)
        print(f"sampler max lateness since start: {1e3 * l1['max']:.3f} ms")
        return 0 if not errors else 1
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
        os.unlink(log.name)


if __name__ == "__main__":
    sys.exit(main())
