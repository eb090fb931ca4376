#!/usr/bin/env python3
"""deploy/slurm/wattlab_job_energy.py waits for a reading as new as its scrape.

A fake exporter on loopback serves a scripted sequence of readings (one per scrape) for one GPU: its
uptime runs on real time (the script checks the exporter's start time), and each reading's energy
belongs to an instant given relative to the first scrape of the sequence (lag_s: that many seconds
before it; 0: as new as it). The cases:
- stale, stale, then fresh: `begin` takes the third scrape (two rescrapes) and records stale_s 0;
- always stale: `end` gives up after WATTLAB_FRESH_WAIT_S, uses the newest scrape, and the result's
  end_stale_s says by how much it lags; the log says the job's last seconds are not counted;
- a lost GPU (wattlab_domain_up 0, its age growing): not waited for;
- an exporter restarted during the job that no longer serves the job's GPU: status exporter-restarted.
The energy and duration come from the readings the script settled on, so they are checked exactly.
Usage: slurm_fresh_test.py DEPLOY/SLURM
"""
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

errors = []


def check(ok, msg):
    if not ok:
        errors.append(msg)
    return ok


def exposition(uptime_s, energy_j, age_s, up, gpu):
    labels = f'host="n",domain="gpu:{gpu}",gpu="{gpu}",uuid="GPU-fake-{gpu}",name="Fake",scope="gpu",simulated="true"'
    return (f'wattlab_exporter_uptime_seconds{{host="n"}} {uptime_s!r}\n'
            f"wattlab_energy_joules_total{{{labels}}} {energy_j!r}\n"
            f"wattlab_energy_age_seconds{{{labels}}} {age_s!r}\n"
            f"wattlab_sensor_gain_tolerance_ratio{{{labels}}} 0.05\n"
            f"wattlab_domain_up{{{labels}}} {up}\n")


class FakeExporter:
    """Serves the scripted readings (energy_j, lag_s, up) in order, repeating the last; counts the
    scrapes and keeps the first scrape's uptime and each reading's instant on the exporter's clock."""

    def __init__(self):
        self.t0 = time.monotonic() - 10.0  # the exporter has been up 10 s
        self.gpu = "0"  # the index of the one GPU it serves
        self.script = []
        self.scrapes = 0
        self.first_uptime_s = None
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with outer.lock:
                    uptime_s = time.monotonic() - outer.t0
                    if outer.first_uptime_s is None:
                        outer.first_uptime_s = uptime_s
                    energy_j, lag_s, up = outer.script[min(outer.scrapes, len(outer.script) - 1)]
                    outer.scrapes += 1
                    age_s = max(uptime_s - (outer.first_uptime_s - lag_s), 0.0)
                body = exposition(uptime_s, energy_j, age_s, up, outer.gpu).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def restart(self, gpu):
        """A new run of the exporter, up 1 s, serving another GPU index."""
        with self.lock:
            self.t0, self.gpu = time.monotonic() - 1.0, gpu

    def serve(self, script):
        with self.lock:
            self.script, self.scrapes, self.first_uptime_s = script, 0, None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/metrics"


def job(script_py, verb, env):
    r = subprocess.run([sys.executable, script_py, verb], env=env, capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, f"{verb} exited {r.returncode}: {r.stderr}")
    return r


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1])
        return 2
    script_py = os.path.join(sys.argv[1], "wattlab_job_energy.py")
    fake = FakeExporter()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, SLURM_JOB_ID="77", SLURMD_NODENAME="n", SLURM_JOB_GPUS="0", WATTLAB_URL=fake.url,
                   WATTLAB_SPOOL=os.path.join(tmp, "spool"), WATTLAB_FRESH_WAIT_S="2")
        result_path = os.path.join(tmp, "spool", "jobs", "77", "n.json")

        # begin: the first two readings lag the first scrape; the third is as new as it.
        fake.serve([(1000.0, 0.9, 1), (1000.0, 0.8, 1), (1180.0, 0.0, 1)])
        job(script_py, "begin", env)
        check(fake.scrapes == 3, f"begin scraped {fake.scrapes} times, expected 3 (two rescrapes for a fresh reading)")
        ts_begin_s = fake.first_uptime_s
        with open(os.path.join(tmp, "spool", "77.begin.json")) as f:
            begin = json.load(f)["reading"]
        check(begin["stale_s"] == 0.0 and begin["gpus"]["0"]["energy_j"] == 1180.0,
              f"begin settled on {begin['gpus']['0']['energy_j']} J with stale_s {begin['stale_s']}, expected 1180 J and 0")

        # end: never fresh (the energy stays 0.5 s behind the first scrape).
        env_end = dict(env, WATTLAB_FRESH_WAIT_S="0.3")
        fake.serve([(3000.0, 0.5, 1)])
        r = job(script_py, "end", env_end)
        check(fake.scrapes >= 2, f"end scraped {fake.scrapes} time(s): it did not wait")
        ts_end_s = fake.first_uptime_s - 0.5
        with open(result_path) as f:
            res = json.load(f)
        if check(res["status"] == "ok", f"status {res['status']}: {res.get('error')}"):
            check(abs(res["end_stale_s"] - 0.5) < 1e-6, f"end_stale_s {res['end_stale_s']}, expected 0.5")
            check(res["begin_stale_s"] == 0.0, f"begin_stale_s {res['begin_stale_s']}")
            check(abs(res["energy_j"] - 1820.0) < 1e-9, f"energy {res['energy_j']} J, expected 3000 - 1180")
            check(abs(res["duration_s"] - (ts_end_s - ts_begin_s)) < 1e-6,
                  f"duration {res['duration_s']} s, expected {ts_end_s - ts_begin_s} s on the exporter's clock")
        check("not counted" in r.stderr, f"end did not say the job's last seconds are not counted: {r.stderr!r}")

        # A lost GPU's age grows for ever: no wait for it.
        fake.serve([(1200.0, 25.0, 0)])
        job(script_py, "begin", dict(env, SLURM_JOB_ID="78"))
        check(fake.scrapes == 1, f"a lost GPU was waited for ({fake.scrapes} scrapes)")

        # The exporter restarted during the job and no longer serves the job's GPU index: the
        # result says restarted (its counters began again), not that the GPU is not served.
        fake.serve([(5.0, 0.0, 1)])
        fake.restart(gpu="1")
        job(script_py, "end", dict(env, SLURM_JOB_ID="78"))
        with open(os.path.join(tmp, "spool", "jobs", "78", "n.json")) as f:
            res = json.load(f)
        check(res["status"] == "exporter-restarted", f"a restarted exporter gave status {res['status']}: {res.get('error')}")
    fake.server.shutdown()

    if errors:
        print("FAIL:\n  " + "\n  ".join(errors))
        return 1
    print("prolog and epilog wait for a fresh reading, give up after WATTLAB_FRESH_WAIT_S, skip lost GPUs, and name a restart")
    return 0


if __name__ == "__main__":
    sys.exit(main())
