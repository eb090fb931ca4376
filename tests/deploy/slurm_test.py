#!/usr/bin/env python3
"""deploy/slurm/prolog.sh and epilog.sh in a fake Slurm environment against SIMULATED exporters.

node-1's exporter serves four boards at 300 W, node-2's two at 200 W (sim scripts 'step ...', gain
error 0, so the gain tolerance the exporters publish, 0.05, is the only band). Job 4242 holds GPUs
1 and 3 of node-1 (SLURM_JOB_GPUS) and GPU SIM-2-1 of node-2 (CUDA_VISIBLE_DEVICES by UUID). After
prolog, some real time, epilog: each node's result must give the true power times its GPUs times
the duration the exporter's own clock assigns to the two readings (uptime minus the energy's age)
within ENERGY_TOLERANCE, an uncertainty of 0.05 x the energy, and the right GPUs; `total` must sum
the nodes. Then the failures: an exporter restarted between prolog and epilog, an exporter that
cannot be reached at prolog, a wrong token, a node with no result (total exits 1, INCOMPLETE). The
scripts must exit 0 in every case (a failing prolog or epilog drains a Slurm node).
The energy is compared on the exporter's clock, not the test's, so a loaded machine delays the
readings without changing the comparison; prolog and epilog wait for readings as new as themselves,
so the job's duration on that clock covers the real time between them.
Usage: slurm_test.py DEPLOY/SLURM PATH/TO/wattlab
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

ENERGY_TOLERANCE = 0.03
GAIN_TOLERANCE = 0.05
MIN_JOB_S = 2.0
procs = []
errors = []


def check(ok, msg):
    if not ok:
        errors.append(msg)
    return ok


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


def fail(msg):
    print("FAIL: " + msg)
    cleanup()
    sys.exit(1)


def exporter(wattlab, tmp, name, power_w, boards, seed, token_file, port=0):
    log = os.path.join(tmp, f"{name}-{len(procs)}.log")
    with open(log, "w") as err:
        p = subprocess.Popen([wattlab, "serve", "--device", "sim", "--sim-workload", f"step {power_w:g}W 600s",
                              "--sim-gpus", str(boards), "--sim-gain-error", "0", "--sim-seed", str(seed),
                              "--listen", f"127.0.0.1:{port}", "--host-label", name, "--token-file", token_file,
                              "--duration-s", "60"], stdout=subprocess.DEVNULL, stderr=err)
    procs.append(p)
    until = time.monotonic() + 15
    while time.monotonic() < until:
        with open(log) as f:
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/metrics", f.read())
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.05)
    with open(log) as f:
        fail(f"exporter {name} did not start:\n{f.read()}")


def run(script, env):
    r = subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, f"{os.path.basename(script)} exited {r.returncode}: {r.stderr}")
    return r


def node_env(base, node, port, token_file, **slurm):
    env = dict(base, SLURMD_NODENAME=node, WATTLAB_URL=f"http://127.0.0.1:{port}/metrics",
               WATTLAB_TOKEN_FILE=token_file, WATTLAB_SPOOL=os.path.join(base["TEST_TMP"], f"spool-{node}"))
    env.update(slurm)
    return env


def result(jobs, job, node):
    path = os.path.join(jobs, job, f"{node}.json")
    if not check(os.path.exists(path), f"no result {path}"):
        return {}
    with open(path) as f:
        return json.load(f)


def check_energy(res, node, power_w, gpus):
    if not check(res.get("status") == "ok", f"{node}: status {res.get('status')}: {res.get('error')}"):
        return
    check([g["gpu"] for g in res["gpus"]] == gpus, f"{node}: GPUs {[g['gpu'] for g in res['gpus']]}, expected {gpus}")
    expected = sum(power_w * g["duration_s"] for g in res["gpus"])
    err = (res["energy_j"] - expected) / expected
    print(f"{node}: {res['energy_j']:.2f} ± {res['uncertainty_j']:.2f} J over {res['duration_s']:.3f} s on GPUs {gpus} "
          f"(SIMULATED; true {expected:.2f} J; error {100 * err:+.2f}%)")
    check(abs(err) <= ENERGY_TOLERANCE, f"{node}: energy {res['energy_j']:.2f} J, true {expected:.2f} J")
    check(res["duration_s"] >= MIN_JOB_S, f"{node}: the job lasted {res['duration_s']:.2f} s on the exporter's clock "
          f"(readings stale by {res.get('begin_stale_s')} s at begin, {res.get('end_stale_s')} s at end)")
    check(all(isinstance(res.get(k), float) and res[k] >= 0 for k in ("begin_stale_s", "end_stale_s")),
          f"{node}: begin_stale_s {res.get('begin_stale_s')!r}, end_stale_s {res.get('end_stale_s')!r}: not seconds >= 0")
    check(abs(res["uncertainty_j"] - GAIN_TOLERANCE * res["energy_j"]) < 1e-6 * res["energy_j"],
          f"{node}: uncertainty {res['uncertainty_j']} is not {GAIN_TOLERANCE} x {res['energy_j']}")
    check(res["simulated"] is True, f"{node}: a SIMULATED result is not marked simulated")


def total(script_dir, job_dir, *extra):
    r = subprocess.run([sys.executable, os.path.join(script_dir, "wattlab_job_energy.py"), "total", job_dir, *extra],
                       capture_output=True, text=True, timeout=30)
    return r


def main():
    if len(sys.argv) != 3:
        fail("usage: slurm_test.py DEPLOY/SLURM PATH/TO/wattlab")
    sdir, wattlab = sys.argv[1], sys.argv[2]
    prolog, epilog = os.path.join(sdir, "prolog.sh"), os.path.join(sdir, "epilog.sh")
    signal.signal(signal.SIGTERM, lambda s, f: (cleanup(), sys.exit(128 + s)))
    tmp = tempfile.mkdtemp(prefix="wattlab-slurm-")
    try:
        token = os.path.join(tmp, "token")
        with open(token, "w") as f:
            f.write("slurm-test-token\n")
        jobs = os.path.join(tmp, "jobs")
        base = {"PATH": os.environ["PATH"], "TEST_TMP": tmp, "WATTLAB_JOB_DIR": jobs,
                "WATTLAB_SLURM_ENV": os.path.join(tmp, "no-such.env"), "SLURM_JOB_ID": "4242"}
        p1, port1 = exporter(wattlab, tmp, "node-1", 300, 4, 1, token)
        _, port2 = exporter(wattlab, tmp, "node-2", 200, 2, 2, token)
        env1 = node_env(base, "node-1", port1, token, SLURM_JOB_GPUS="1,3")
        env2 = node_env(base, "node-2", port2, token, CUDA_VISIBLE_DEVICES="SIM-2-1")

        # The job: prolog on both nodes, the job's run time, epilog on both.
        run(prolog, env1)
        run(prolog, env2)
        check(os.path.exists(os.path.join(tmp, "spool-node-1", "4242.begin.json")), "the prolog wrote no begin reading")
        time.sleep(MIN_JOB_S + 0.5)
        run(epilog, env1)
        run(epilog, env2)
        check(not os.path.exists(os.path.join(tmp, "spool-node-1", "4242.begin.json")), "the epilog left its begin reading")
        r1, r2 = result(jobs, "4242", "node-1"), result(jobs, "4242", "node-2")
        check_energy(r1, "node-1", 300.0, ["1", "3"])
        check_energy(r2, "node-2", 200.0, ["1"])
        t = total(sdir, os.path.join(jobs, "4242"), "--json", "--nodes", "2")
        check(t.returncode == 0, f"total exited {t.returncode}: {t.stdout}{t.stderr}")
        if t.returncode == 0 and r1.get("energy_j") and r2.get("energy_j"):
            tot = json.loads(t.stdout)
            check(abs(tot["energy_j"] - (r1["energy_j"] + r2["energy_j"])) < 1e-9 * tot["energy_j"],
                  f"total {tot['energy_j']} is not the nodes' sum")
            check(abs(tot["uncertainty_j"] - (r1["uncertainty_j"] + r2["uncertainty_j"])) < 1e-9 * tot["energy_j"],
                  "the total's uncertainty is not the nodes' sum")
            check(tot["complete"] and tot["nodes_measured"] == 2, f"total: {tot}")
        print(total(sdir, os.path.join(jobs, "4242")).stdout.strip())

        # Job 4243: node-1's exporter restarts between prolog and epilog (same port, counters from 0).
        env1r = dict(env1, SLURM_JOB_ID="4243")
        run(prolog, env1r)
        p1.terminate()
        p1.wait(timeout=10)
        exporter(wattlab, tmp, "node-1", 300, 4, 1, token, port=port1)
        time.sleep(0.5)
        run(epilog, env1r)
        r = result(jobs, "4243", "node-1")
        check(r.get("status") == "exporter-restarted" and r.get("energy_j") is None,
              f"a restarted exporter gave status {r.get('status')}, energy {r.get('energy_j')}")

        # Job 4244: the exporter cannot be reached at prolog time (a closed port); epilog says so.
        env_down = dict(env2, SLURM_JOB_ID="4244", WATTLAB_URL="http://127.0.0.1:1/metrics")
        run(prolog, env_down)
        run(epilog, dict(env2, SLURM_JOB_ID="4244"))
        r = result(jobs, "4244", "node-2")
        check(r.get("status") == "begin-failed" and "127.0.0.1:1" in (r.get("error") or ""),
              f"an unreachable exporter at prolog gave {r}")

        # Job 4245: a wrong token: 401 is named; no energy.
        bad = os.path.join(tmp, "bad-token")
        with open(bad, "w") as f:
            f.write("wrong\n")
        env_bad = dict(env2, SLURM_JOB_ID="4245", WATTLAB_TOKEN_FILE=bad)
        run(prolog, env_bad)
        run(epilog, env_bad)
        r = result(jobs, "4245", "node-2")
        check(r.get("status") == "begin-failed" and "HTTP 401" in (r.get("error") or ""), f"a wrong token gave {r}")

        # A job without GPUs on a node: nothing is written, nothing fails.
        env_cpu = {k: v for k, v in env2.items() if k != "CUDA_VISIBLE_DEVICES"}
        env_cpu["SLURM_JOB_ID"] = "4246"
        run(prolog, env_cpu)
        run(epilog, env_cpu)
        check(not os.path.exists(os.path.join(jobs, "4246")), "a job without GPUs got a result")

        # Totals: a failed node and a missing one make the total incomplete (exit 1), and say so.
        t = total(sdir, os.path.join(jobs, "4242"), "--nodes", "3")
        check(t.returncode == 1 and "1 node(s) wrote no result" in t.stdout and "INCOMPLETE" in t.stdout,
              f"a missing node: total exited {t.returncode}:\n{t.stdout}")
        t = total(sdir, os.path.join(jobs, "4243"))
        check(t.returncode == 1 and "exporter restarted" in t.stdout, f"a failed node: total exited {t.returncode}:\n{t.stdout}")
        t = total(sdir, os.path.join(tmp, "no-such-job"))
        check(t.returncode == 2, f"total of a missing folder exited {t.returncode}")
    finally:
        cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    if errors:
        print("FAIL:\n  " + "\n  ".join(errors))
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
