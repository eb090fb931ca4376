#!/usr/bin/env python3
"""deploy/grafana/wattlab.json: valid JSON, a Grafana dashboard, and every PromQL expression in it
(panel targets and template queries) names only metrics that exist.

"Exist" means: exported by `wattlab serve` (the names in one scrape of a SIMULATED exporter, plus
the metric table of docs/export.md for readings the simulator lacks), or recorded by
deploy/prometheus/wattlab.rules.yml from such names (the rules' own expressions are checked the
same way, so a recorded name cannot hide a misspelt source). Every expression must also parse:
they are written as recording rules into a temporary file for `promtool check rules` (skipped,
with a note, when promtool is missing; the name check runs regardless).
Usage: grafana_dashboard_test.py REPO_ROOT PATH/TO/wattlab
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

errors = []
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "and", "or",
            "unless", "inf", "nan", "e"}
GRAFANA_VARS = {"$__range": "1h", "$__rate_interval": "1m", "$__interval": "15s"}


def metric_names(expr):
    """Metric names a PromQL expression selects (not functions, keywords, labels or numbers)."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)           # string literals
    s = re.sub(r"\{[^}]*\}", "", s)                          # label matchers
    s = re.sub(r"\[[^\]]*\]", "", s)                         # range and subquery durations
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)  # label lists
    s = re.sub(r"\$\{?\w+\}?", " ", s)                      # Grafana variables
    names = set()
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", s):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in KEYWORDS:
            continue
        names.add(word)
    return names


def exported_by_sim(wattlab):
    with tempfile.TemporaryDirectory(prefix="wattlab-grafana-") as tmp:
        log = os.path.join(tmp, "serve.log")
        with open(log, "w") as err:
            p = subprocess.Popen([wattlab, "serve", "--device", "sim", "--sim-gpus", "2", "--listen", "127.0.0.1:0",
                                  "--duration-s", "30"], stdout=subprocess.DEVNULL, stderr=err)
        try:
            port = None
            for _ in range(200):
                with open(log) as f:
                    m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/metrics", f.read())
                if m:
                    port = m.group(1)
                    break
                if p.poll() is not None:
                    break
                subprocess.run(["sleep", "0.05"])
            if port is None:
                with open(log) as f:
                    print("FAIL: the SIMULATED exporter did not start:\n" + f.read())
                sys.exit(1)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                text = r.read().decode()
        finally:
            p.terminate()
            p.wait(timeout=10)
    return {m.group(1) for m in re.finditer(r"(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]", text)}


def documented(export_md):
    with open(export_md) as f:
        text = f.read()
    table = text[text.index("| metric | type | what |"):]
    table = table[:table.index("\n\n")]
    names = set(re.findall(r"`(wattlab_[a-z0-9_]+)", table))
    # A histogram family is scraped as _bucket, _sum and _count series.
    for n in list(names):
        if n.endswith("_seconds") and "lateness" in n:
            names |= {n + "_bucket", n + "_sum", n + "_count"}
    return names


def recorded(rules_yml, allowed):
    """Recorded names of the rules file, in order; each rule's expression may use earlier ones."""
    with open(rules_yml) as f:
        text = f.read()
    names = set()
    for m in re.finditer(r"(?m)^\s*- (record|alert): (\S+)\n\s+expr: (.+)$", text):
        kind, name, expr = m.groups()
        unknown = metric_names(expr) - allowed - names - {"up"}
        if unknown:
            errors.append(f"rule {name}: unknown metric(s) {sorted(unknown)} in {expr}")
        if kind == "record":
            names.add(name)
    return names


def expressions(dash):
    out = []

    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))

    for p in panels(dash.get("panels", [])):
        for t in p.get("targets", []):
            if t.get("expr"):
                out.append((f"panel '{p.get('title')}' {t.get('refId')}", t["expr"]))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") == "query" and q:
            inner = re.fullmatch(r"label_values\((.*),\s*\w+\)", q)
            out.append((f"variable '{v['name']}'", inner.group(1) if inner else q))
    return out


def promtool_parse(exprs):
    promtool = shutil.which("promtool")
    if promtool is None:
        print("note: promtool is not installed, so the expressions' syntax is not checked")
        return
    with tempfile.TemporaryDirectory(prefix="wattlab-grafana-") as tmp:
        path = os.path.join(tmp, "dashboard.rules.yml")
        with open(path, "w") as f:
            f.write("groups:\n  - name: dashboard\n    rules:\n")
            for i, (_, e) in enumerate(exprs):
                for var, val in GRAFANA_VARS.items():
                    e = e.replace(var, val)
                e = e.replace("$host", ".*")
                f.write(f"      - record: dashboard_expr_{i}\n        expr: {json.dumps(e)}\n")
        r = subprocess.run([promtool, "check", "rules", path], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            errors.append("promtool cannot parse the dashboard's expressions:\n" + r.stdout + r.stderr)


def main():
    if len(sys.argv) != 3:
        print("usage: grafana_dashboard_test.py REPO_ROOT PATH/TO/wattlab")
        sys.exit(2)
    root, wattlab = sys.argv[1], sys.argv[2]
    with open(os.path.join(root, "deploy", "grafana", "wattlab.json")) as f:
        dash = json.load(f)
    for field in ("title", "uid", "panels", "schemaVersion"):
        if field not in dash:
            errors.append(f"the dashboard has no '{field}'")
    sim = exported_by_sim(wattlab)
    allowed = sim | documented(os.path.join(root, "docs", "export.md"))
    if not any(n.startswith("wattlab_") for n in sim):
        errors.append("the SIMULATED exporter's scrape has no wattlab_ metric")
    rec = recorded(os.path.join(root, "deploy", "prometheus", "wattlab.rules.yml"), allowed)
    exprs = expressions(dash)
    if len(exprs) < 10:
        errors.append(f"only {len(exprs)} expressions found in the dashboard")
    used = set()
    for where, e in exprs:
        names = metric_names(e)
        if not names:
            errors.append(f"{where}: no metric in {e!r}")
        unknown = names - allowed - rec
        if unknown:
            errors.append(f"{where}: {sorted(unknown)} neither exported nor recorded: {e}")
        used |= names
    promtool_parse(exprs)
    if errors:
        print("FAIL:\n  " + "\n  ".join(errors))
        sys.exit(1)
    print(f"PASS: {len(exprs)} expressions use {len(used)} metrics "
          f"({len(used & sim)} from the SIMULATED exporter's scrape, {len(used & rec)} recorded by the rules): "
          + ", ".join(sorted(used)))


if __name__ == "__main__":
    main()
