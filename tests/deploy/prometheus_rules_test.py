#!/usr/bin/env python3
"""The recording rules of deploy/prometheus/wattlab.rules.yml in a real Prometheus.

Three `wattlab serve --device sim` nodes on loopback, each behind a bearer token: node-a one board
at 200 W, node-b one at 300 W, node-c two at 450 W (sim scripts 'step ...', gain error 0, seeds
1-3). Prometheus scrapes them every 1 s with the shipped rules loaded (every group evaluated each
1 s: the daily group's 'interval: 5m' is rewritten to 1s in the test's copy) until the rules have
run at least MIN_EVALUATIONS times. Then, at one evaluation timestamp:
  - the cluster rules equal the sum of the nodes' own recorded series, and each node's rule the sum
    of its GPUs' recorded series (power, its band, daily energy, its band): same evaluation, so the
    only tolerance is float summation order (REL_EXACT);
  - each GPU's recorded power equals rate() of its raw counter evaluated by the API at the same
    timestamp, within RATE_SLACK_S seconds of that GPU's true power over the 60 s window (a scrape
    in flight during the evaluation may be stored with an earlier timestamp);
  - each power band is the gain tolerance the exporter publishes (0.05) times the power;
  - each GPU's raw counter slope over the stored samples, on the exporter's clock (uptime minus the
    energy's age), is its true power within 2 %;
  - every rule's health is "ok" (no evaluation error, e.g. a many-to-many match) and no alert fires.
Every wait is bounded; the whole test stays under ~60 s. Skips (exit 77) when Prometheus is missing.
Usage: prometheus_rules_test.py PATH/TO/wattlab PATH/TO/wattlab.rules.yml
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export"))
import prometheus_integration as prom_helpers  # noqa: E402  (free_port, wait_for_line, query, fail, cleanup)

SKIP = 77
DEADLINE_S = 55.0
MIN_EVALUATIONS = 5
REL_EXACT = 1e-9
RATE_SLACK_S = 2.0
SLOPE_TOLERANCE = 0.02
GAIN_TOLERANCE = 0.05  # what the SIMULATED H200's sensor model publishes
TOKEN = "wattlab-deploy-test-token"
# host: (true power per board in W, boards, seed)
NODES = {"node-a": (200.0, 1, 1), "node-b": (300.0, 1, 2), "node-c": (450.0, 2, 3)}

fail = prom_helpers.fail


def samples(port, expr, at):
    """Instant query at a Unix time: [(labels, value)]."""
    return [(r["metric"], float(r["value"][1])) for r in query_at(port, expr, at)]


def query_at(port, expr, at):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
    with urllib.request.urlopen(url, timeout=2) as r:
        body = json.load(r)
    if body.get("status") != "success":
        fail(f"query {expr!r} at {at}: {body}")
    return body["data"]["result"]


def api(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
        body = json.load(r)
    if body.get("status") != "success":
        fail(f"{path}: {body}")
    return body["data"]


def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def by_key(rows, *keys):
    return {tuple(m.get(k, "") for k in keys): v for m, v in rows}


def start_exporters(wattlab, tmp, token_file, start):
    targets = []
    for host, (power_w, boards, seed) in NODES.items():
        log = os.path.join(tmp, f"{host}.log")
        with open(log, "w") as err:
            prom_helpers.procs.append(subprocess.Popen(
                [wattlab, "serve", "--device", "sim", "--sim-workload", f"step {power_w:g}W 600s",
                 "--sim-gpus", str(boards), "--sim-gain-error", "0", "--sim-seed", str(seed),
                 "--listen", "127.0.0.1:0", "--host-label", host, "--token-file", token_file, "--duration-s", "90"],
                stdout=subprocess.DEVNULL, stderr=err))
        m = prom_helpers.wait_for_line(log, r"listening on http://127\.0\.0\.1:(\d+)/metrics", start + 15)
        targets.append(f"127.0.0.1:{m.group(1)}")
    return targets


def write_config(tmp, rules_src, targets, token_file):
    with open(rules_src) as f:
        rules = f.read()
    rules, n = re.subn(r"(?m)^(\s+interval:\s*)\S+$", r"\g<1>1s", rules)
    if n == 0:
        fail(f"{rules_src}: expected the daily group's 'interval:' line")
    with open(os.path.join(tmp, "wattlab.rules.yml"), "w") as f:
        f.write(rules)
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n"
                "rule_files: [wattlab.rules.yml]\n"
                "scrape_configs:\n  - job_name: wattlab\n    honor_labels: true\n"
                f"    authorization:\n      credentials_file: {token_file}\n"
                f"    static_configs:\n      - targets: [{', '.join(repr(t) for t in targets)}]\n")
    return cfg


def wait_for_evaluations(port, plog, until):
    want_gpus = sum(b for _, b, _ in NODES.values())
    while time.monotonic() < until:
        if prom_helpers.procs[-1].poll() is not None:
            with open(plog) as f:
                fail("Prometheus exited early:\n" + f.read())
        try:
            n = prom_helpers.scalar(port, "count_over_time(cluster:wattlab_gpu_power_watts:rate1m[1m])")
            e = prom_helpers.scalar(port, "count_over_time(cluster:wattlab_gpu_energy_joules:increase1d[1m])")
            g = prom_helpers.scalar(port, "count(gpu:wattlab_power_watts:rate1m)")
            s = prom_helpers.scalar(port, "min(count_over_time(wattlab_energy_joules_total[1m]))")
            if n and e and g == want_gpus and s and min(n, e, s) >= MIN_EVALUATIONS:
                return
        except OSError:
            pass  # not listening yet
        time.sleep(0.25)
    with open(plog) as f:
        fail(f"the rules did not evaluate {MIN_EVALUATIONS} times on {want_gpus} GPUs within {DEADLINE_S:.0f} s; "
             "Prometheus log:\n" + f.read())


def latest_evaluation(port, record):
    """Timestamp of the newest sample of a recorded series."""
    res = prom_helpers.query(port, f"{record}[10s]")
    if not res:
        fail(f"{record} has no samples")
    return float(res[0]["values"][-1][0])


def check_sums(port, t, leaf, host_rule, cluster_rule):
    """cluster == sum(host series), host == sum by host(leaf series), all at evaluation t."""
    leaves = samples(port, leaf, t)
    hosts = by_key(samples(port, host_rule, t), "host")
    cluster = samples(port, cluster_rule, t)
    if sorted(h for (h,) in hosts) != sorted(NODES):
        fail(f"{host_rule} at {t}: hosts {sorted(hosts)}, expected {sorted(NODES)}")
    for (h,), v in hosts.items():
        own = sum(x for m, x in leaves if m["host"] == h)
        if not close(v, own, REL_EXACT):
            fail(f"{host_rule}{{host={h!r}}} = {v!r}, its GPUs' {leaf} sum to {own!r}")
    total = sum(hosts.values())
    if len(cluster) != 1 or not close(cluster[0][1], total, REL_EXACT):
        fail(f"{cluster_rule} = {cluster} at {t}, the nodes' {host_rule} sum to {total!r}")
    print(f"{cluster_rule} = {cluster[0][1]:.3f} = sum of {len(hosts)} nodes' {host_rule} "
          f"({', '.join(f'{h} {v:.3f}' for (h,), v in sorted(hosts.items()))}), relative tolerance {REL_EXACT:g}")
    return {h: v for (h,), v in hosts.items()}, cluster[0][1]


def check_power_against_raw(port, t):
    recorded = by_key(samples(port, "gpu:wattlab_power_watts:rate1m", t), "host", "domain")
    raw = by_key(samples(port, 'rate(wattlab_energy_joules_total{scope="gpu"}[1m])', t), "host", "domain")
    if sorted(recorded) != sorted(raw):
        fail(f"recorded GPUs {sorted(recorded)} differ from the raw counters' {sorted(raw)}")
    for key, v in recorded.items():
        slack = NODES[key[0]][0] * RATE_SLACK_S / 60.0
        if abs(v - raw[key]) > slack:
            fail(f"gpu:wattlab_power_watts:rate1m{key} = {v:.3f} W, rate() of its counter {raw[key]:.3f} W "
                 f"(more than {slack:.2f} W apart)")


def check_bands(port, t):
    for value, band in (("host:wattlab_gpu_power_watts:rate1m", "host:wattlab_gpu_power_uncertainty_watts:rate1m"),
                        ("cluster:wattlab_gpu_energy_joules:increase1d",
                         "cluster:wattlab_gpu_energy_uncertainty_joules:increase1d")):
        vs = by_key(samples(port, value, t), "host")
        bs = by_key(samples(port, band, t), "host")
        for k, v in vs.items():
            if k not in bs or not close(bs[k], GAIN_TOLERANCE * v, REL_EXACT):
                fail(f"{band}{k} = {bs.get(k)}, expected {GAIN_TOLERANCE} x {value} = {GAIN_TOLERANCE * v!r}")
    print(f"uncertainty bands = {GAIN_TOLERANCE} (the exporters' gain tolerance) x power and x energy")


def check_slopes(port, t):
    """Each GPU's stored counter against its true power, on the exporter's own clock: a reading's time
    is the scrape's uptime minus the energy's age, so a late scrape on a loaded machine does not count."""
    def series(expr):
        return {tuple(sorted((k, v) for k, v in r["metric"].items() if k != "__name__")): r["values"]
                for r in query_at(port, expr, t)}
    energy = series('wattlab_energy_joules_total{scope="gpu"}[1m]')
    age = series('wattlab_energy_age_seconds{scope="gpu"}[1m]')
    uptime = {dict(k)["host"]: v for k, v in series("wattlab_exporter_uptime_seconds[1m]").items()}
    for key, values in energy.items():
        labels = dict(key)
        host = labels["host"]
        ages = dict((ts, float(v)) for ts, v in age.get(key, []))
        ups = dict((ts, float(v)) for ts, v in uptime.get(host, []))
        points = [(ups[ts] - ages[ts], float(v)) for ts, v in values if ts in ages and ts in ups]
        if len(points) < 2:
            fail(f"{host} {labels['domain']}: fewer than 2 scrapes with energy, its age and the uptime")
        (t0, e0), (t1, e1) = points[0], points[-1]
        slope_w = (e1 - e0) / (t1 - t0)
        true_w = NODES[host][0]
        err = (slope_w - true_w) / true_w
        print(f"{host} {labels['domain']}: counter slope {slope_w:.2f} W over {len(points)} scrapes, "
              f"{t1 - t0:.2f} s on the exporter's clock (SIMULATED; true {true_w:.0f} W; error {100 * err:+.2f}%)")
        if abs(err) > SLOPE_TOLERANCE:
            fail(f"{host} {labels['domain']}: stored counter slope {slope_w:.2f} W, true {true_w:.0f} W")


def check_health(port):
    bad = []
    for g in api(port, "/api/v1/rules")["groups"]:
        for r in g["rules"]:
            if r.get("health") != "ok":
                bad.append(f"{g['name']}/{r.get('name')}: {r.get('health')} {r.get('lastError', '')}")
            if r.get("type") == "alerting" and r.get("state") != "inactive":
                bad.append(f"alert {r.get('name')} is {r.get('state')} on healthy nodes")
    if bad:
        fail("rules not healthy:\n  " + "\n  ".join(bad))


def main():
    if len(sys.argv) != 3:
        fail("usage: prometheus_rules_test.py PATH/TO/wattlab PATH/TO/wattlab.rules.yml")
    wattlab, rules_src = sys.argv[1], sys.argv[2]
    prom = shutil.which("prometheus") or ("/usr/bin/prometheus" if os.access("/usr/bin/prometheus", os.X_OK) else None)
    if prom is None:
        print("SKIP: Prometheus is not installed (Debian package 'prometheus'; scripts/install-deps.sh installs it)")
        sys.exit(SKIP)
    signal.signal(signal.SIGTERM, prom_helpers.on_signal)
    signal.signal(signal.SIGINT, prom_helpers.on_signal)
    start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="wattlab-deploy-prom-")
    try:
        token_file = os.path.join(tmp, "token")
        with open(token_file, "w") as f:
            f.write(TOKEN + "\n")
        targets = start_exporters(wattlab, tmp, token_file, start)
        cfg = write_config(tmp, rules_src, targets, token_file)
        port = prom_helpers.free_port()
        plog = os.path.join(tmp, "prometheus.log")
        with open(plog, "w") as err:
            prom_helpers.procs.append(subprocess.Popen(
                [prom, f"--config.file={cfg}", f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                stdout=subprocess.DEVNULL, stderr=err))
        wait_for_evaluations(port, plog, start + DEADLINE_S)

        t = latest_evaluation(port, "cluster:wattlab_gpu_power_watts:rate1m")
        check_sums(port, t, "gpu:wattlab_power_watts:rate1m", "host:wattlab_gpu_power_watts:rate1m",
                   "cluster:wattlab_gpu_power_watts:rate1m")
        check_sums(port, t, "gpu:wattlab_power_uncertainty_watts:rate1m",
                   "host:wattlab_gpu_power_uncertainty_watts:rate1m",
                   "cluster:wattlab_gpu_power_uncertainty_watts:rate1m")
        check_power_against_raw(port, t)
        te = latest_evaluation(port, "cluster:wattlab_gpu_energy_joules:increase1d")
        check_sums(port, te, "gpu:wattlab_energy_joules:increase1d", "host:wattlab_gpu_energy_joules:increase1d",
                   "cluster:wattlab_gpu_energy_joules:increase1d")
        energy_units = samples(port, "gpu:wattlab_energy_uncertainty_joules:increase1d", te)
        total_band = sum(v for _, v in energy_units)
        cluster_band = samples(port, "cluster:wattlab_gpu_energy_uncertainty_joules:increase1d", te)
        if len(cluster_band) != 1 or not close(cluster_band[0][1], total_band, REL_EXACT):
            fail(f"cluster energy band {cluster_band}, its GPUs' bands sum to {total_band!r}")
        check_bands(port, te)
        check_slopes(port, t)
        check_health(port)
        print(f"PASS in {time.monotonic() - start:.1f} s")
    finally:
        prom_helpers.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
