"""Validate examples/kubernetes/*.yaml and run their gpumon command lines (scripts/test-install).

    python tests/py/k8s_check.py examples/kubernetes GPUMON_BINARY WORKDIR

- every file parses as YAML; every built-in resource validates against the Kubernetes schemas
  (kubernetes-validate, offline, strict: unknown fields are errors); the ServiceMonitor (a CRD)
  is checked by hand;
- the wiring holds: the Service and ServiceMonitor select the DaemonSet's pod labels and name its
  port, every container port named `metrics` is the one gpumon's --listen binds, every env var a
  `$(VAR)` names is defined, every --output lies on a mounted volume;
- each gpumon container's arguments are run by the real binary (host only here: interval
  shortened, 3 ticks, paths moved to WORKDIR, port moved to a free loopback one) and its /metrics
  answer is taken while it runs.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import kubernetes_validate
import yaml

K8S_VERSION = "1.33.0"


def docs(directory: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    for f in sorted(directory.glob("*.yaml")):
        for d in yaml.safe_load_all(f.read_text()):
            if d is not None and "kind" in d:  # Kubernetes resources, not the Prometheus config
                yield f, d


def pod_spec(d: dict[str, Any]) -> dict[str, Any]:
    return d["spec"]["template"]["spec"] if d["kind"] in ("DaemonSet", "Deployment", "Job") else d["spec"]


def gpumon_containers(d: dict[str, Any]) -> list[dict[str, Any]]:
    if d["kind"] not in ("DaemonSet", "Deployment", "Job", "Pod"):
        return []
    spec = pod_spec(d)
    return [c for c in spec.get("containers", []) + spec.get("initContainers", []) if c["name"] == "gpumon"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_args(binary: str, c: dict[str, Any], work: Path, where: str) -> None:
    env = {e["name"]: e.get("value", f"test-{e['name'].lower()}") for e in c.get("env", [])}
    args = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a) for a in c["args"]]
    mounts = [m["mountPath"] for m in c.get("volumeMounts", [])]
    port = free_port()
    out: list[str] = []
    for a in args:
        key, _, value = a.partition("=")
        if key in ("--interval", "-i"):
            a = f"{key}=300ms"
        elif key in ("--output", "-o"):
            assert any(value.startswith(m + "/") for m in mounts), f"{where}: {value} is on no mounted volume {mounts}"
            a = f"{key}={work / Path(value).name}"
        elif key == "--listen":
            assert value.endswith(":9400"), value
            a = f"{key}=127.0.0.1:{port}"
        out.append(a)
    argv = [binary, *out, "--count", "6"]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    body = ""
    for _ in range(50):
        time.sleep(0.1)
        try:
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            if "gpumon_ticks_total" in body:
                break
        except OSError:
            pass
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, f"{where}: {argv} exited {proc.returncode}: {err}"
    assert "gpumon_up" in body, f"{where}: no /metrics answer while running: {body[:300]}"
    written = [p for p in work.iterdir() if p.suffix == ".parquet"]
    assert written, f"{where}: nothing written to {work}"
    hosts = [a.partition("=")[2] for a in args if a.startswith("--host=")]
    if hosts:
        # --host names the node: it is the metrics' host label and fills {host} in the file name.
        assert f'host="{hosts[0]}"' in body, f"{where}: no host=\"{hosts[0]}\" label: {body[:300]}"
        assert (work / f"{hosts[0]}.parquet").exists(), f"{where}: {[p.name for p in written]}"
    print(f"  {where}: gpumon {' '.join(c['args'])} -> ran ({len(body.splitlines())} metric lines)")


def main() -> None:
    directory, binary, work = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    all_docs = list(docs(directory))
    kinds = {}
    for f, d in all_docs:
        where = f"{f.name}:{d['kind']}/{d['metadata']['name']}"
        kinds.setdefault(d["kind"], []).append(d)
        if d["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # a CRD: checked by hand below
        try:
            kubernetes_validate.validate(d, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            raise AssertionError(f"{where}: {e.message} at {list(e.path)}") from e
        print(f"  {where}: valid against Kubernetes {K8S_VERSION} (strict)")

    [ds] = kinds["DaemonSet"]
    labels = ds["spec"]["template"]["metadata"]["labels"]
    assert ds["spec"]["selector"]["matchLabels"].items() <= labels.items()
    [svc] = [s for s in kinds["Service"] if s["metadata"]["name"] == "gpumon"]
    assert svc["spec"]["selector"].items() <= labels.items(), "the Service selects the DaemonSet's pods"
    [sm] = kinds["ServiceMonitor"]
    assert sm["apiVersion"] == "monitoring.coreos.com/v1"
    assert sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    assert svc["metadata"]["namespace"] in sm["spec"]["namespaceSelector"]["matchNames"]
    svc_ports = {p["name"] for p in svc["spec"]["ports"]}
    for ep in sm["spec"]["endpoints"]:
        assert ep["port"] in svc_ports, f"ServiceMonitor port {ep['port']} not in the Service {svc_ports}"
        assert re.fullmatch(r"\d+[smh]", ep["interval"])
    print("  ServiceMonitor -> Service -> DaemonSet pods: labels, namespace and port agree")

    containers = [(f, d, c) for f, d in all_docs for c in gpumon_containers(d)]
    assert len(containers) >= 2, "the DaemonSet and the training sidecar"
    for f, d, c in containers:
        where = f"{f.name}:{d['kind']}/{d['metadata']['name']}"
        defined = {e["name"] for e in c.get("env", [])}
        used = {v for a in c["args"] for v in re.findall(r"\$\((\w+)\)", a)}
        assert used <= defined, f"{where}: $(...) of undefined env {used - defined}"
        listen = [a.partition("=")[2] for a in c["args"] if a.startswith("--listen")]
        ports = {p["containerPort"] for p in c.get("ports", []) if p.get("name") == "metrics"}
        assert {int(v.rsplit(":", 1)[1]) for v in listen} == ports, f"{where}: --listen {listen} vs ports {ports}"
        if d["kind"] == "Job":
            assert c.get("restartPolicy") == "Always", "the sidecar is a native sidecar (stopped when training ends)"
        sub = work / f"{f.stem}-{d['kind'].lower()}"
        sub.mkdir(parents=True)
        run_args(binary, c, sub, where)
    print("kubernetes ok")


if __name__ == "__main__":
    main()
