#!/usr/bin/env python3
"""deploy/systemd/wattlab-serve.service: its hardening, its command line run against the SIMULATED
device, and `systemd-analyze verify` and `security --offline` where systemd-analyze exists.

The unit names /usr/bin/wattlab, where the .deb installs it; verify wants the binary to exist, so
it checks a copy whose ExecStart names the built binary instead. Exit 1 on a failed check."""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

# The most exposure `systemd-analyze security` may rate the unit (0 = locked down, 10 = none);
# what is left is the network (it serves) and the NVIDIA devices (it measures).
MAX_EXPOSURE = 3.0


def check(ok, msg):
    if not ok:
        print(f"FAIL: {msg}")
        sys.exit(1)


def parse(path):
    """{section: [(key, value), ...]} in file order; keys may repeat, as systemd allows."""
    sections, current = {}, None
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("[") and line.endswith("]"):
                current = line[1:-1]
                sections.setdefault(current, [])
                continue
            check(current is not None and "=" in line, f"not a unit line: {raw!r}")
            key, value = line.split("=", 1)
            sections[current].append((key.strip(), value.strip()))
    return sections


def values(sections, section, key):
    return [v for k, v in sections.get(section, []) if k == key]


def one(sections, section, key):
    vs = values(sections, section, key)
    check(len(vs) == 1, f"[{section}] {key}= is set {len(vs)} times, expected once")
    return vs[0]


def check_hardening(s):
    for key, want in [("DynamicUser", "yes"), ("ProtectSystem", "strict"), ("ProtectHome", "yes"),
                      ("PrivateTmp", "yes"), ("NoNewPrivileges", "yes"), ("DevicePolicy", "closed"),
                      ("CapabilityBoundingSet", ""), ("RestrictNamespaces", "yes")]:
        check(one(s, "Service", key) == want, f"{key}= is not '{want}'")
    # PrivateDevices would hide /dev/nvidia*; the devices are allowed one group at a time instead.
    check(not values(s, "Service", "PrivateDevices"), "PrivateDevices= hides the NVIDIA devices")
    allowed = values(s, "Service", "DeviceAllow")
    check(allowed == ["char-nvidia-frontend rw"],
          f"DeviceAllow= should open the NVIDIA frontend devices (nvidiactl, nvidiaN) and nothing else: {allowed}")
    check(one(s, "Install", "WantedBy") == "multi-user.target", "not wanted by multi-user.target")


def exec_args(s):
    args = shlex.split(one(s, "Service", "ExecStart"))
    check(args[:2] == ["/usr/bin/wattlab", "serve"], f"ExecStart does not run /usr/bin/wattlab serve: {args}")
    env = dict(v.split("=", 1) for v in values(s, "Service", "Environment"))
    cred = one(s, "Service", "LoadCredential")
    check(re.fullmatch(r"token:/\S+", cred), f"LoadCredential= is not token:PATH: {cred}")
    check("--token-file" in args and args[args.index("--token-file") + 1] == "${CREDENTIALS_DIRECTORY}/token",
          f"--token-file is not the credential 'token': {args}")
    check(args[args.index("--device") + 1] == "nvml", f"the service does not measure NVML devices: {args}")
    return args, env


def run_args(wattlab, args, env, tmp):
    """The unit's command line, its variables expanded as systemd does, on the SIMULATED device for 1 s."""
    with open(os.path.join(tmp, "token"), "w") as f:
        f.write("secret\n")
    values_by_name = dict(env, CREDENTIALS_DIRECTORY=tmp)
    expanded = [re.sub(r"\$\{(\w+)\}", lambda m: values_by_name[m.group(1)], a) for a in args]
    check(expanded[expanded.index("--listen") + 1].endswith(":9464"), f"the unit does not listen on 9464: {expanded}")
    swapped = {"--device": "sim", "--listen": "127.0.0.1:0"}
    cmd = [wattlab, "serve"]
    rest = expanded[2:]
    for i, a in enumerate(rest):
        cmd.append(swapped[rest[i - 1]] if i > 0 and rest[i - 1] in swapped else a)
    cmd += ["--duration-s", "1"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and re.search(r"listening on http://127\.0\.0\.1:\d+/metrics .*bearer token required", r.stderr),
          f"the unit's command line did not serve: {cmd} exited {r.returncode}:\n{r.stderr}")
    print(f"ran: {' '.join(cmd)}")


def systemd_checks(unit, wattlab, tmp):
    tool = shutil.which("systemd-analyze")
    if not tool:
        print("SKIP: systemd-analyze not found (Debian's 'systemd'); verify and security not run")
        return
    copy = os.path.join(tmp, "wattlab-serve.service")
    with open(unit) as f:
        text = f.read()
    with open(copy, "w") as f:
        f.write(text.replace("ExecStart=/usr/bin/wattlab ", f"ExecStart={wattlab} "))
    r = subprocess.run([tool, "verify", "--man=no", copy], capture_output=True, text=True, timeout=60)
    # Lines about other units (the host's, in a container without systemd running) are not ours.
    ours = [l for l in (r.stdout + r.stderr).splitlines() if "wattlab-serve" in l]
    check(r.returncode == 0 and not ours, f"systemd-analyze verify exited {r.returncode}:\n{r.stdout}{r.stderr}")
    print("systemd-analyze verify: clean")
    r = subprocess.run([tool, "security", "--offline=yes", f"--threshold={int(MAX_EXPOSURE * 10)}", copy],
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", r.stdout + r.stderr)
    check(m is not None, f"systemd-analyze security gave no exposure level:\n{r.stdout}{r.stderr}")
    exposure = float(m.group(1))
    check(r.returncode == 0 and exposure <= MAX_EXPOSURE,
          f"exposure {exposure} is above {MAX_EXPOSURE}:\n{r.stdout}")
    print(f"systemd-analyze security: exposure {exposure} (at most {MAX_EXPOSURE})")


def main():
    if len(sys.argv) != 3:
        print("usage: systemd_unit_test.py deploy/systemd/wattlab-serve.service PATH/TO/wattlab")
        sys.exit(2)
    unit, wattlab = sys.argv[1], os.path.abspath(sys.argv[2])
    s = parse(unit)
    check_hardening(s)
    args, env = exec_args(s)
    with tempfile.TemporaryDirectory() as tmp:
        run_args(wattlab, args, env, tmp)
        systemd_checks(unit, wattlab, tmp)
    print("ok")


if __name__ == "__main__":
    main()
