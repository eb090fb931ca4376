#!/usr/bin/env python3
"""GPU energy of a Slurm job from the node's `wattlab serve` exporter (docs/deploy.md, "Slurm").

  wattlab_job_energy.py begin             (prolog.sh) read the job's GPUs' energy counters
  wattlab_job_energy.py end               (epilog.sh) read them again; write the node's result
  wattlab_job_energy.py total DIR [--nodes N] [--json]   sum the per-node results of one job

begin and end take the job from the environment Slurm gives prolog and epilog: SLURM_JOB_ID, the
job's GPUs on this node from SLURM_JOB_GPUS (NVML indices) or else CUDA_VISIBLE_DEVICES (indices or
UUIDs), and the node's name from SLURMD_NODENAME (else the hostname). Settings, also from the
environment: WATTLAB_URL (default http://127.0.0.1:9464/metrics), WATTLAB_TOKEN_FILE (the bearer
token's file, first line; none: no token sent), WATTLAB_SPOOL (the begin readings, default
/var/spool/wattlab), WATTLAB_JOB_DIR (results, DIR/JOB_ID/NODE.json; default $WATTLAB_SPOOL/jobs, a
shared file system for totals across nodes), WATTLAB_TIMEOUT_S (one scrape, default 5),
WATTLAB_FRESH_WAIT_S (how long to wait for a reading that covers the moment of the call, default 3).

The exporter's energy belongs to its newest power reading, which may be older than the scrape (a
sampler's interval, or more on a loaded node). begin and end therefore scrape again, every 0.1 s,
until every GPU of the job has a reading at least as new as the first scrape (on the exporter's
clock: uptime minus the energy's age), so the job's end is not cut short. A reading still older
after WATTLAB_FRESH_WAIT_S is used, and the result names how many seconds it lacks (stale_s).

The job's energy on a node is the sum over its GPUs of the exporter's wattlab_energy_joules_total at
end minus at begin (the exporter keeps that counter monotonic across sensor resets); its uncertainty
is the sum of each GPU's energy times its wattlab_sensor_gain_tolerance_ratio (a per-board bias:
added linearly). A result whose readings cannot be trusted says why instead of giving a number:
the exporter restarted between begin and end (its counter started again from 0), a GPU of the job is
not served, the exporter could not be read. A GPU lost during the job keeps the energy measured up
to the loss, marked as a lower bound.
begin and end never fail the job: they exit 0 and write what went wrong into the result.
"""
import json
import os
import re
import socket
import sys
import time
import urllib.error
import urllib.request

SCHEMA = "wattlab.slurm-job-node/1"
FRESH_POLL_S = 0.1  # the pause between scrapes while waiting for a fresh reading
RESTART_SLACK_S = 5.0  # two readings of the exporter's start time (wall clock minus uptime) may differ by this
LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


class Failure(Exception):
    """A reading that cannot be used, with the reason a person reads in the result."""

    def __init__(self, status, detail):
        super().__init__(detail)
        self.status = status
        self.detail = detail


def setting(name, default):
    v = os.environ.get(name, "")
    return v if v else default


def job_id():
    j = os.environ.get("SLURM_JOB_ID", "")
    if not re.fullmatch(r"[0-9]+(_[0-9]+)?", j):
        raise Failure("bad-environment", f"SLURM_JOB_ID is {j!r}, not a job id")
    return j


def node_name():
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()


def job_gpus():
    """The job's GPUs on this node: ('index', '1') or ('uuid', 'GPU-...') each."""
    for var in ("SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES"):
        v = os.environ.get(var, "").strip()
        if v and v != "NoDevFiles":
            return [("index", g) if g.isdigit() else ("uuid", g) for g in (x.strip() for x in v.split(",")) if g]
    return []


def scrape():
    url = setting("WATTLAB_URL", "http://127.0.0.1:9464/metrics")
    req = urllib.request.Request(url)
    token_file = os.environ.get("WATTLAB_TOKEN_FILE", "")
    if token_file:
        try:
            with open(token_file) as f:
                token = f.readline().strip()
        except OSError as e:
            raise Failure("exporter-unreadable", f"token file {token_file}: {e.strerror}")
        req.add_header("Authorization", "Bearer " + token)
    t_unix = time.time()
    try:
        with urllib.request.urlopen(req, timeout=float(setting("WATTLAB_TIMEOUT_S", "5"))) as r:
            text = r.read().decode()
    except urllib.error.HTTPError as e:
        raise Failure("exporter-unreadable", f"{url}: HTTP {e.code}" + (" (wrong or missing token)" if e.code == 401 else ""))
    except (urllib.error.URLError, OSError) as e:
        raise Failure("exporter-unreadable", f"{url}: {getattr(e, 'reason', e)}")
    return parse(text, url, t_unix)


def parse(text, url, t_unix):
    """The exposition's GPU domains by index and UUID, and the exporter's start time."""
    gpus, uptime_s, host = {}, None, None
    for line in text.splitlines():
        m = LINE.match(line)
        if not m or line.startswith("#"):
            continue
        name, labels, value = m.group(1), dict(LABEL.findall(m.group(2) or "")), float(m.group(3))
        if name == "wattlab_exporter_uptime_seconds":
            uptime_s, host = value, labels.get("host")
        elif labels.get("scope") == "gpu" and "gpu" in labels:
            g = gpus.setdefault(labels["gpu"], {"gpu": labels["gpu"], "uuid": labels.get("uuid", ""),
                                                "domain": labels.get("domain", ""),
                                                "simulated": labels.get("simulated") == "true"})
            key = {"wattlab_energy_joules_total": "energy_j", "wattlab_energy_age_seconds": "age_s",
                   "wattlab_sensor_gain_tolerance_ratio": "gain_tolerance", "wattlab_domain_up": "up"}.get(name)
            if key:
                g[key] = value
    if uptime_s is None:
        raise Failure("exporter-unreadable", f"{url}: no wattlab_exporter_uptime_seconds (not a wattlab exporter?)")
    return {"url": url, "host_label": host, "t_unix": t_unix, "uptime_s": uptime_s,
            "exporter_start_unix": t_unix - uptime_s, "gpus": gpus}


def reading_time_s(g, uptime_s):
    """When a GPU's energy was last extended, on the exporter's clock (seconds since it started)."""
    return uptime_s - g.get("age_s", 0.0)


def fresh_scrape(wanted, begin=None):
    """A scrape whose readings of the wanted GPUs are as new as the moment of the call, waiting up to
    WATTLAB_FRESH_WAIT_S; the reading's 'stale_s' is how much newer they should have been (0: fresh).
    Lost GPUs (wattlab_domain_up 0) are not waited for: their energy stopped at the loss. With the
    begin reading, every scrape is first checked to come from the same exporter run, so a restarted
    exporter is reported as such rather than as a GPU it no longer serves."""
    wait_s = float(setting("WATTLAB_FRESH_WAIT_S", "3"))
    deadline = time.monotonic() + wait_s
    reading = scrape()
    target_s = reading["uptime_s"]
    while True:
        if begin is not None:
            check_same_exporter(begin, reading)
        gpus = select(reading, wanted)
        live = [g for g in gpus.values() if g.get("up", 1.0) != 0.0]
        lag_s = max((target_s - reading_time_s(g, reading["uptime_s"]) for g in live), default=0.0)
        if lag_s <= 0.0 or time.monotonic() >= deadline:
            return dict(reading, gpus=gpus, stale_s=max(0.0, lag_s))
        time.sleep(FRESH_POLL_S)
        newer = scrape()
        if begin is None and abs(newer["exporter_start_unix"] - reading["exporter_start_unix"]) > RESTART_SLACK_S:
            return dict(newer, gpus=select(newer, wanted), stale_s=0.0)  # restarted at begin: its counters start there
        reading = newer


def select(reading, wanted):
    """The job's GPUs from a scrape, keyed by index; a GPU the exporter does not serve is an error."""
    by_uuid = {g["uuid"]: g for g in reading["gpus"].values()}
    out = {}
    for kind, g in wanted:
        found = reading["gpus"].get(g) if kind == "index" else by_uuid.get(g)
        if found is None or "energy_j" not in found:
            raise Failure("gpu-not-served", f"GPU {g} of the job has no energy series at {reading['url']}")
        out[found["gpu"]] = found
    return out


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def spool_path(job):
    return os.path.join(setting("WATTLAB_SPOOL", "/var/spool/wattlab"), f"{job}.begin.json")


def result_path(job):
    jobs = setting("WATTLAB_JOB_DIR", os.path.join(setting("WATTLAB_SPOOL", "/var/spool/wattlab"), "jobs"))
    return os.path.join(jobs, job, f"{node_name()}.json")


def begin():
    job = job_id()
    wanted = job_gpus()
    if not wanted:
        print(f"wattlab: job {job} has no GPUs on {node_name()}: nothing to measure")
        return
    record = {"job_id": job, "node": node_name(), "wanted": wanted}
    try:
        record["reading"] = fresh_scrape(wanted)
    except Failure as f:
        record["error"] = {"status": f.status, "detail": f.detail}
        print(f"wattlab: job {job} begin: {f.detail}", file=sys.stderr)
    write_json(spool_path(job), record)


def check_same_exporter(b, reading):
    """The begin reading b and this scrape come from one run of the exporter (same start time)."""
    if abs(reading["exporter_start_unix"] - b["exporter_start_unix"]) > RESTART_SLACK_S:
        raise Failure("exporter-restarted", f"the exporter restarted during the job (up {b['uptime_s']:.1f} s at "
                      f"begin, {reading['uptime_s']:.1f} s at end): its counters started again from 0")


def node_result(start, reading):
    """The node's result from the begin record and an end reading of the same exporter run."""
    b = start["reading"]
    end = reading["gpus"]
    gpus, total, band, lower_bound = [], 0.0, 0.0, False
    for idx, g0 in sorted(b["gpus"].items(), key=lambda kv: int(kv[0])):
        g1 = end[idx]
        if g1["uuid"] != g0["uuid"]:
            raise Failure("gpu-changed", f"GPU {idx} was {g0['uuid']} at begin and {g1['uuid']} at end")
        energy_j = g1["energy_j"] - g0["energy_j"]
        if energy_j < 0:
            raise Failure("exporter-restarted", f"the exporter restarted during the job: GPU {idx}'s counter went back "
                          f"({g0['energy_j']} J, then {g1['energy_j']} J)")
        gain = g1.get("gain_tolerance", g0.get("gain_tolerance", 0.0))
        lost = g1.get("up", 1.0) == 0.0
        lower_bound |= lost
        duration_s = reading_time_s(g1, reading["uptime_s"]) - reading_time_s(g0, b["uptime_s"])
        gpus.append({"gpu": idx, "uuid": g1["uuid"], "domain": g1["domain"], "energy_j": energy_j,
                     "uncertainty_j": gain * energy_j, "gain_tolerance": gain, "duration_s": duration_s,
                     "status": "lost-lower-bound" if lost else "ok", "simulated": g1["simulated"]})
        total += energy_j
        band += gain * energy_j
    duration_s = max((g["duration_s"] for g in gpus), default=0.0)
    return {"status": "lower-bound" if lower_bound else "ok", "energy_j": total, "uncertainty_j": band,
            "duration_s": duration_s, "begin_stale_s": b.get("stale_s", 0.0), "end_stale_s": reading["stale_s"],
            "mean_power_w": total / duration_s if duration_s > 0 else None,
            "gpus": gpus, "host_label": reading["host_label"], "simulated": any(g["simulated"] for g in gpus)}


def end():
    job = job_id()
    path = spool_path(job)
    result = {"schema": SCHEMA, "job_id": job, "node": node_name()}
    try:
        with open(path) as f:
            start = json.load(f)
    except FileNotFoundError:
        if not job_gpus():
            print(f"wattlab: job {job} has no GPUs on {node_name()}: nothing to measure")
            return
        start = {"error": {"status": "no-begin-reading", "detail": f"{path} is missing (did the prolog run?)"}}
    try:
        if start.get("error"):
            raise Failure("begin-failed", "at begin: " + start["error"]["detail"])
        b = start["reading"]
        result.update(node_result(start, fresh_scrape([("index", g) for g in b["gpus"]], begin=b)))
    except Failure as f:
        result.update({"status": f.status, "error": f.detail, "energy_j": None, "uncertainty_j": None})
        print(f"wattlab: job {job} end: {f.detail}", file=sys.stderr)
    write_json(result_path(job), result)
    if os.path.exists(path):
        os.remove(path)
    e = result["energy_j"]
    print(f"wattlab: job {job} on {result['node']}: " +
          (f"{e:.1f} ± {result['uncertainty_j']:.1f} J GPU energy ({result['status']})" if e is not None
           else f"no energy: {result['error']}"))
    if e is not None and result["end_stale_s"] > 0:
        print(f"wattlab: job {job} end: the exporter's newest reading was {result['end_stale_s']:.2f} s older than the "
              f"epilog after waiting {setting('WATTLAB_FRESH_WAIT_S', '3')} s: the job's last {result['end_stale_s']:.2f} s "
              "are not counted", file=sys.stderr)


def total(argv):
    import argparse
    p = argparse.ArgumentParser(prog="wattlab_job_energy.py total", description="sum a job's per-node results")
    p.add_argument("dir", help="the job's result folder, WATTLAB_JOB_DIR/JOB_ID")
    p.add_argument("--nodes", type=int, help="how many nodes the job had (SLURM_JOB_NUM_NODES): missing ones are named")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    a = p.parse_args(argv)
    if not os.path.isdir(a.dir):
        print(f"wattlab_job_energy.py total: {a.dir} is not a folder", file=sys.stderr)
        sys.exit(2)
    nodes = []
    for name in sorted(os.listdir(a.dir)):
        if name.endswith(".json"):
            with open(os.path.join(a.dir, name)) as f:
                nodes.append(json.load(f))
    good = [n for n in nodes if n.get("energy_j") is not None]
    bad = [n for n in nodes if n.get("energy_j") is None]
    missing = max(0, (a.nodes or 0) - len(nodes))
    out = {"schema": "wattlab.slurm-job-total/1", "job_id": nodes[0]["job_id"] if nodes else os.path.basename(a.dir),
           "energy_j": sum(n["energy_j"] for n in good), "uncertainty_j": sum(n["uncertainty_j"] for n in good),
           "nodes_measured": len(good), "nodes_failed": {n["node"]: n.get("error", n["status"]) for n in bad},
           "nodes_missing": missing, "lower_bound": any(n["status"] != "ok" for n in good) or bool(bad) or missing > 0,
           "simulated": any(n.get("simulated") for n in good)}
    out["complete"] = not bad and missing == 0
    if a.json:
        print(json.dumps(out, indent=1, sort_keys=True))
    else:
        for n in good:
            print(f"{n['node']}: {n['energy_j']:.1f} ± {n['uncertainty_j']:.1f} J over {n['duration_s']:.1f} s, "
                  f"{len(n['gpus'])} GPU(s){' (SIMULATED)' if n.get('simulated') else ''}"
                  f"{'' if n['status'] == 'ok' else ' [' + n['status'] + ']'}")
        for node, why in out["nodes_failed"].items():
            print(f"{node}: no energy: {why}")
        if missing:
            print(f"{missing} node(s) wrote no result")
        print(f"job {out['job_id']}: {out['energy_j']:.1f} ± {out['uncertainty_j']:.1f} J GPU energy "
              f"({out['energy_j'] / 3.6e6:.6f} kWh) on {len(good)} node(s)"
              + ("" if out["complete"] else ", INCOMPLETE: a lower bound"))
    sys.exit(0 if out["complete"] else 1)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("begin", "end", "total"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "total":
        total(sys.argv[2:])
        return
    try:
        begin() if sys.argv[1] == "begin" else end()
    except Failure as f:  # no usable job id: nothing to write under
        print(f"wattlab: {sys.argv[1]}: {f.detail}", file=sys.stderr)
    except Exception as e:  # never fail the job: a failing prolog or epilog drains the node
        print(f"wattlab: {sys.argv[1]}: unexpected {type(e).__name__}: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
