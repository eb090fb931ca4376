#!/usr/bin/env python3
"""promtool on deploy/prometheus: `check config`, `check rules`, `test rules`.

promtool check config also checks that the files the configuration names exist, so the check runs on
a copy whose token path (CREDENTIALS) points at a temporary file; nothing else is changed.
Skips (exit 77) when promtool is missing (Debian package 'prometheus', scripts/install-deps.sh).
Usage: promtool_checks.py DEPLOY/PROMETHEUS
"""
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
CREDENTIALS = "/etc/prometheus/secrets/wattlab-token/token"


def run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60)
    out = (r.stdout + r.stderr).strip()
    print(f"$ {' '.join(cmd)}\n{out}")
    if r.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {r.returncode}")
        sys.exit(1)


def main():
    if len(sys.argv) != 2:
        print("usage: promtool_checks.py DEPLOY/PROMETHEUS")
        sys.exit(2)
    src = sys.argv[1]
    promtool = shutil.which("promtool")
    if promtool is None:
        print("SKIP: promtool is not installed (Debian package 'prometheus'; scripts/install-deps.sh installs it)")
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory(prefix="wattlab-promtool-") as tmp:
        with open(os.path.join(src, "prometheus.yml")) as f:
            cfg = f.read()
        if CREDENTIALS not in cfg:
            print(f"FAIL: prometheus.yml no longer names {CREDENTIALS}; update this check")
            sys.exit(1)
        token = os.path.join(tmp, "token")
        with open(token, "w") as f:
            f.write("token\n")
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write(cfg.replace(CREDENTIALS, token))
        shutil.copy(os.path.join(src, "wattlab.rules.yml"), tmp)
        run([promtool, "check", "config", "prometheus.yml"], tmp)
    run([promtool, "check", "rules", "wattlab.rules.yml"], src)
    run([promtool, "test", "rules", "wattlab.rules.test.yml"], src)
    print("PASS")


if __name__ == "__main__":
    main()
