#!/usr/bin/env python3
"""deploy/kubernetes/daemonset.yaml: parses, has the fields Kubernetes requires, asks for no
privilege it does not need, agrees with prometheus.yml, and its wattlab arguments run.

Checks: every document has apiVersion, kind and metadata.name (and a namespace, except the
Namespace); nothing anywhere says privileged: true, hostPID/hostNetwork/hostIPC: true, adds a
capability or mounts a hostPath; the pod runs as non-root with a read-only root filesystem, all
capabilities dropped, no privilege escalation and RuntimeDefault seccomp; it requests no
nvidia.com/gpu (that would take GPUs from jobs); requests and limits are set; there is a readiness
probe; the token comes from a Secret volume at the path --token-file names; the port is the same in
--listen, the container, the Service, the annotation and prometheus.yml; the headless Service's DNS
name is the one prometheus.yml discovers. Then the container's own arguments run against the
SIMULATED device (device, address and token path swapped for test ones) and serve, and an empty
token file is refused with exit 2, as docs/deploy.md says.
Needs python3-yaml (Debian package; scripts/install-deps.sh installs it); skips (exit 77) without it.
Usage: kubernetes_manifest_test.py DEPLOY_DIR PATH/TO/wattlab
"""
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed (scripts/install-deps.sh installs it)")
    sys.exit(SKIP)

errors = []


def check(ok, msg):
    if not ok:
        errors.append(msg)


def walk(node, path=""):
    """Every (path, key, value) of a parsed document."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield path, k, v
            yield from walk(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, f"{path}[{i}]")


def arg_value(args, flag):
    for a in args:
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None


def check_documents(docs):
    by_kind = {}
    for i, d in enumerate(docs):
        check(isinstance(d, dict), f"document {i} is not a mapping")
        for field in ("apiVersion", "kind"):
            check(field in d, f"document {i} has no {field}")
        meta = d.get("metadata", {})
        check("name" in meta, f"document {i} ({d.get('kind')}) has no metadata.name")
        if d.get("kind") != "Namespace":
            check("namespace" in meta, f"{d.get('kind')}/{meta.get('name')} has no namespace")
        by_kind[d.get("kind")] = d
        for path, k, v in walk(d):
            check(not (k == "privileged" and v is True), f"{d['kind']}{path}: privileged: true")
            check(not (k in ("hostPID", "hostNetwork", "hostIPC") and v is True), f"{d['kind']}{path}: {k}: true")
            check(k != "hostPath", f"{d['kind']}{path}: a hostPath volume")
            check(not (k == "add" and path.endswith("capabilities")), f"{d['kind']}{path}: adds capabilities {v}")
            check(k != "nvidia.com/gpu", f"{d['kind']}{path}: requests nvidia.com/gpu (takes GPUs from jobs)")
    for kind in ("Namespace", "ServiceAccount", "DaemonSet", "Service", "NetworkPolicy"):
        check(kind in by_kind, f"no {kind}")
    return by_kind


def check_pod(ds):
    check(ds["apiVersion"] == "apps/v1", "DaemonSet apiVersion is not apps/v1")
    tmpl = ds["spec"]["template"]
    spec = tmpl["spec"]
    sel = ds["spec"]["selector"]["matchLabels"]
    check(all(tmpl["metadata"]["labels"].get(k) == v for k, v in sel.items()), "selector does not match the pod labels")
    check(spec.get("hostPID") is False, "hostPID is not spelled out as false")
    check(spec.get("automountServiceAccountToken") is False, "the pod mounts a service-account token it never uses")
    psc = spec.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True, "pod runAsNonRoot is not true")
    check(isinstance(psc.get("runAsUser"), int) and psc["runAsUser"] != 0, "pod runAsUser is missing or root")
    check(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "seccomp is not RuntimeDefault")
    containers = spec["containers"]
    check(len(containers) == 1, "expected one container")
    c = containers[0]
    sc = c.get("securityContext", {})
    check(sc.get("readOnlyRootFilesystem") is True, "root filesystem is not read-only")
    check(sc.get("allowPrivilegeEscalation") is False, "privilege escalation is not off")
    check(sc.get("capabilities", {}).get("drop") == ["ALL"], "capabilities are not all dropped")
    res = c.get("resources", {})
    for part in ("requests", "limits"):
        for r in ("cpu", "memory"):
            check(r in res.get(part, {}), f"resources.{part}.{r} missing")
    check("readinessProbe" in c, "no readiness probe")
    env = {e["name"]: e for e in c.get("env", [])}
    check(env.get("NVIDIA_VISIBLE_DEVICES", {}).get("value") == "all", "NVIDIA_VISIBLE_DEVICES is not 'all'")
    check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName",
          "NODE_NAME does not come from spec.nodeName")
    args = c["args"]
    check(args[0] == "serve", "the container does not run `wattlab serve`")
    token_path = arg_value(args, "--token-file")
    check(token_path is not None, "no --token-file: the exporter would serve without a token")
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    mounted_secret = None
    for m in c.get("volumeMounts", []):
        if token_path and token_path.startswith(m["mountPath"].rstrip("/") + "/"):
            mounted_secret = volumes.get(m["name"], {}).get("secret", {}).get("secretName")
            check(m.get("readOnly") is True, "the token mount is not read-only")
    check(mounted_secret == "wattlab-token", f"--token-file {token_path} is not in the wattlab-token Secret's mount")
    listen = arg_value(args, "--listen") or ""
    port = int(listen.rsplit(":", 1)[1]) if ":" in listen else None
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    check(ports.get("metrics") == port, f"containerPort {ports} differs from --listen {listen}")
    check(str(port) == tmpl["metadata"].get("annotations", {}).get("prometheus.io/port"),
          "prometheus.io/port annotation differs from --listen")
    return spec, args, port


def check_service(svc, ds, port, prometheus_yml):
    check(svc["spec"].get("clusterIP") == "None", "the Service is not headless")
    check(svc["spec"].get("publishNotReadyAddresses") is True, "not-ready exporters would vanish from DNS")
    check(svc["spec"]["selector"] == ds["spec"]["selector"]["matchLabels"], "the Service selects other pods")
    check([p["port"] for p in svc["spec"]["ports"]] == [port], "the Service port differs from --listen")
    name = f"{svc['metadata']['name']}.{svc['metadata']['namespace']}.svc.cluster.local"
    with open(prometheus_yml) as f:
        prom = yaml.safe_load(f)
    jobs = {j["job_name"]: j for j in prom["scrape_configs"]}
    dns = jobs.get("wattlab", {}).get("dns_sd_configs", [{}])[0]
    check(name in dns.get("names", []), f"prometheus.yml does not discover {name}")
    check(dns.get("port") == port, "prometheus.yml scrapes another port")


def run_args(wattlab, args, tmp):
    """The container's arguments against the SIMULATED device on loopback, for 1 s."""
    token = os.path.join(tmp, "token")
    with open(token, "w") as f:
        f.write("secret\n")
    swapped = {"--device": "sim", "--listen": "127.0.0.1:0", "--token-file": token, "--host-label": "node-1"}
    cmd = [wattlab] + [a.split("=", 1)[0] + "=" + swapped[a.split("=", 1)[0]] if a.split("=", 1)[0] in swapped else a
                       for a in args] + ["--duration-s", "1"]
    check(not any("$(" in a for a in cmd), f"an unexpanded variable is left: {cmd}")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and re.search(r"listening on http://127\.0\.0\.1:\d+/metrics \(host label \"node-1\", "
                                          r"bearer token required\)", r.stderr),
          f"the manifest's arguments did not serve: {cmd} exited {r.returncode}:\n{r.stderr}")
    with open(token, "w") as f:
        f.write("\n")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and "is empty" in r.stderr,
          f"an empty token file was not refused with exit 2: exited {r.returncode}:\n{r.stderr}")
    print(f"ran: {' '.join(cmd)}")


def main():
    if len(sys.argv) != 3:
        print("usage: kubernetes_manifest_test.py DEPLOY_DIR PATH/TO/wattlab")
        sys.exit(2)
    deploy, wattlab = sys.argv[1], sys.argv[2]
    with open(os.path.join(deploy, "kubernetes", "daemonset.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    by_kind = check_documents(docs)
    if "DaemonSet" in by_kind:
        _, args, port = check_pod(by_kind["DaemonSet"])
        if "Service" in by_kind:
            check_service(by_kind["Service"], by_kind["DaemonSet"], port, os.path.join(deploy, "prometheus", "prometheus.yml"))
        with tempfile.TemporaryDirectory(prefix="wattlab-k8s-") as tmp:
            run_args(wattlab, args, tmp)
    if errors:
        print("FAIL:\n  " + "\n  ".join(errors))
        sys.exit(1)
    print(f"PASS: {len(docs)} documents ({', '.join(d['kind'] for d in docs)})")


if __name__ == "__main__":
    main()
