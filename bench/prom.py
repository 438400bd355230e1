#!/usr/bin/env python3
"""The cost of `gpumon record --listen`: scrape latency and the recorder's CPU per tick with and
without a 1 s scrape, next to node_exporter scraped the same way.

One run, on this machine, four processes side by side for one window (60 s; --quick: 15 s):

  A  gpumon record -i 1s -o a.csv                         (8 fake GPUs, no endpoint)
  B  gpumon record -i 1s -o b.csv --listen 127.0.0.1:0    (endpoint, never scraped)
  C  gpumon record -i 1s -o c.csv --listen 127.0.0.1:0    (scraped every 1 s)
  N  prometheus-node-exporter --web.listen-address=127.0.0.1:PORT   (scraped every 1 s)

CPU is the sum of /proc/PID/task/*/schedstat run time (nanoseconds) over the window, so start-up is
excluded; per tick = CPU / ticks in the window (gpumon_ticks_total read at both ends; for A the
CSV rows). Scrapes go out like Prometheus': a kept-alive HTTP/1.1 connection per target, with
Prometheus 2.x's Accept header (OpenMetrics preferred), C and N half a second apart so they never
coincide. Scrape latency = client wall time from sending the request to the last body byte.
After the window, a burst of 200 back-to-back scrapes of C and N gives latency when a scraper
hammers the endpoint (gpumon serves its cached text; node_exporter collects every time).

usage: python3 bench/prom.py [--quick] [--json OUT.json]
build first: cargo build --release && cargo build --release -p fake-nvml
needs: prometheus-node-exporter (Debian package) for N
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from record import scenario_text  # noqa: E402  (the 8-GPU scenario record.py uses)
from portable import portable  # noqa: E402  (results without this machine's paths)

GPUMON = REPO / "target" / "release" / "gpumon"
FAKE = REPO / "target" / "release" / "libnvidia_ml.so"
NODE_EXPORTER = shutil.which("prometheus-node-exporter") or "/usr/bin/prometheus-node-exporter"
NGPUS = 8
# What Prometheus 2.42 sends.
ACCEPT = (
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)


def cpu_ns(pid: int) -> int:
    """Run time of every live thread of pid, nanoseconds (schedstat's first field)."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(Path(f"/proc/{pid}/task/{t}/schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def thread_ns(pid: int, name: str) -> int:
    """Run time of the threads of pid called `name` (the server thread is `metrics-http`), ns."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            if Path(f"/proc/{pid}/task/{t}/comm").read_text().strip() == name:
                total += int(Path(f"/proc/{pid}/task/{t}/schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_addr(stderr_path: Path, timeout: float = 20) -> str:
    t0 = time.time()
    while time.time() - t0 < timeout:
        m = re.search(r"serving metrics on http://([^/\s]+)/metrics", stderr_path.read_text(errors="replace"))
        if m:
            return m.group(1)
        time.sleep(0.05)
    raise SystemExit(f"gpumon did not report its address: {stderr_path.read_text()}")


class Scraper:
    """A kept-alive connection to one target."""

    def __init__(self, hostport: str):
        host, port = hostport.rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port), timeout=10)
        self.latencies: list[float] = []
        self.sizes: list[int] = []
        self.body = ""

    def scrape(self, record: bool = True) -> str:
        t0 = time.perf_counter()
        try:
            self.conn.request("GET", "/metrics", headers={"Accept": ACCEPT})
            r = self.conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # The server closed the idle keep-alive connection (gpumon after 10 s idle); like Go's
            # HTTP client, retry a GET once on a new connection.
            self.conn.close()
            t0 = time.perf_counter()
            self.conn.request("GET", "/metrics", headers={"Accept": ACCEPT})
            r = self.conn.getresponse()
        body = r.read()
        dt = time.perf_counter() - t0
        if r.status != 200:
            raise SystemExit(f"scrape failed: {r.status}")
        if record:
            self.latencies.append(dt)
            self.sizes.append(len(body))
        self.body = body.decode()
        return self.body


def ticks(body: str) -> float:
    m = re.search(r"^gpumon_ticks_total\{[^}]*\} (\S+)$", body, re.M)
    if not m:
        raise SystemExit("no gpumon_ticks_total in the exposition")
    return float(m.group(1))


def series(body: str) -> int:
    return sum(1 for line in body.splitlines() if line and not line.startswith("#"))


def ms(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {
        "n": len(xs),
        "median_ms": round(statistics.median(xs) * 1e3, 3),
        "p99_ms": round(xs[min(len(xs) - 1, int(len(xs) * 0.99))] * 1e3, 3),
        "max_ms": round(xs[-1] * 1e3, 3),
    }


def run_once(args, window: float, tmp: Path, env: dict) -> dict:
    """One window with A, B, C and N side by side; every figure of that run."""
    procs: dict[str, subprocess.Popen] = {}
    errs: dict[str, Path] = {}
    try:
        for name, extra in (("A", []), ("B", ["--listen", "127.0.0.1:0"]), ("C", ["--listen", "127.0.0.1:0"])):
            errs[name] = tmp / f"{name}.err"
            out = tmp / f"{name}.csv"
            out.unlink(missing_ok=True)
            cmd = [args.gpumon, "record", "-q", "-i", "1s", "-o", str(out), *extra]
            procs[name] = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=errs[name].open("w"))
        node_port = free_port()
        errs["N"] = tmp / "N.err"
        procs["N"] = subprocess.Popen(
            [args.node_exporter, f"--web.listen-address=127.0.0.1:{node_port}"],
            stdout=subprocess.DEVNULL,
            stderr=errs["N"].open("w"),
        )
        b_addr, c_addr = wait_addr(errs["B"]), wait_addr(errs["C"])
        b, c, n = Scraper(b_addr), Scraper(c_addr), Scraper(f"127.0.0.1:{node_port}")
        # Let every process settle (first ticks, node_exporter start-up), then warm the connections.
        time.sleep(3)
        for s in (b, c, n):
            s.scrape(record=False)

        # The window: C and N scraped every second, half a second apart; A and B left alone.
        load0 = os.getloadavg()[0]
        t_start = time.perf_counter()
        cpu0 = {k: cpu_ns(p.pid) for k, p in procs.items()}
        http0 = {k: thread_ns(procs[k].pid, "metrics-http") for k in ("B", "C")}
        b_ticks0, c_ticks0 = ticks(b.scrape(record=False)), ticks(c.scrape(record=False))
        k = 0
        while True:
            k += 1
            due = t_start + k
            if due > t_start + window:
                break
            time.sleep(max(0.0, due - time.perf_counter()))
            c.scrape()
            time.sleep(max(0.0, due + 0.5 - time.perf_counter()))
            n.scrape()
        b_ticks1, c_ticks1 = ticks(b.scrape(record=False)), ticks(c.scrape(record=False))
        cpu1 = {k: cpu_ns(p.pid) for k, p in procs.items()}
        http1 = {k: thread_ns(procs[k].pid, "metrics-http") for k in ("B", "C")}
        elapsed = time.perf_counter() - t_start
        load1 = os.getloadavg()[0]

        # Burst: 200 back-to-back scrapes each.
        cb, nb = Scraper(c_addr), Scraper(f"127.0.0.1:{node_port}")
        for _ in range(200):
            cb.scrape()
        for _ in range(200):
            nb.scrape()

        for name in ("A", "B", "C", "N"):
            procs[name].send_signal(signal.SIGTERM)
        for p in procs.values():
            p.wait(timeout=30)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
    # A has no endpoint to ask; at 1 s its ticks in the window are the window's length (within 1).
    a_ticks = round(elapsed)
    d = {k: (cpu1[k] - cpu0[k]) / 1e6 for k in procs}  # ms
    g = {
        "A_no_endpoint": {"cpu_ms": round(d["A"], 2), "ticks": a_ticks, "cpu_ms_per_tick": round(d["A"] / a_ticks, 3)},
        "B_endpoint_unscraped": {
            "cpu_ms": round(d["B"], 2),
            "ticks": b_ticks1 - b_ticks0,
            "cpu_ms_per_tick": round(d["B"] / (b_ticks1 - b_ticks0), 3),
            # Two scrapes read the tick counter at the ends of the window.
            "server_thread_cpu_ms": round((http1["B"] - http0["B"]) / 1e6, 3),
        },
        "C_scraped_1s": {
            "cpu_ms": round(d["C"], 2),
            "ticks": c_ticks1 - c_ticks0,
            "scrapes": len(c.latencies),
            "cpu_ms_per_tick": round(d["C"] / (c_ticks1 - c_ticks0), 3),
            "server_thread_cpu_ms": round((http1["C"] - http0["C"]) / 1e6, 3),
            # The server thread's CPU per scrape (+2 for the tick-counter reads): accept/parse/encode/write.
            "server_thread_cpu_ms_per_scrape": round((http1["C"] - http0["C"]) / 1e6 / (len(c.latencies) + 2), 3),
            "latency": ms(c.latencies),
            "burst_latency": ms(cb.latencies),
            "body_bytes": c.sizes[-1],
            "series": series(c.body),
        },
    }
    node = {
        "cpu_ms": round(d["N"], 2),
        "scrapes": len(n.latencies),
        "cpu_ms_per_scrape": round(d["N"] / len(n.latencies), 3),
        "latency": ms(n.latencies),
        "burst_latency": ms(nb.latencies),
        "body_bytes": n.sizes[-1],
        "series": series(n.body),
    }
    scrape_cost = g["C_scraped_1s"]["cpu_ms_per_tick"] - g["B_endpoint_unscraped"]["cpu_ms_per_tick"]
    return {
        "window_s": round(elapsed, 2),
        "loadavg_1m": [round(load0, 2), round(load1, 2)],
        "gpumon": g,
        "node_exporter": node,
        "derived": {
            "endpoint_idle_cpu_ms_per_tick": round(
                g["B_endpoint_unscraped"]["cpu_ms_per_tick"] - g["A_no_endpoint"]["cpu_ms_per_tick"], 3
            ),
            "scrape_cpu_ms": round(scrape_cost, 3),
            "node_exporter_cpu_per_scrape_over_gpumon_server_thread": round(
                node["cpu_ms_per_scrape"] / max(1e-9, g["C_scraped_1s"]["server_thread_cpu_ms_per_scrape"]), 1
            ),
        },
    }


def median_of(runs: list[dict], *path: str) -> float:
    vals = []
    for r in runs:
        v = r
        for k in path:
            v = v[k]
        vals.append(v)
    return round(statistics.median(vals), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="15 s window instead of 60 s, one run")
    ap.add_argument("--repeat", type=int, default=3, help="runs; the summary gives medians (default 3)")
    ap.add_argument("--json", metavar="OUT", help="also write every figure as JSON")
    ap.add_argument("--gpumon", default=str(GPUMON))
    ap.add_argument("--fake-nvml", default=str(FAKE))
    ap.add_argument("--node-exporter", default=NODE_EXPORTER)
    args = ap.parse_args()
    for p in (args.gpumon, args.fake_nvml, args.node_exporter):
        if not Path(p).exists():
            raise SystemExit(f"missing {p} (see the usage line)")
    window = 15.0 if args.quick else 60.0
    repeat = 1 if args.quick else max(1, args.repeat)

    tmp = Path(tempfile.mkdtemp(prefix="gpumon-prom-bench-"))
    try:
        scen = tmp / "scenario-8gpu.txt"
        scen.write_text(scenario_text(NGPUS))
        env = dict(os.environ, GPUMON_NVML_LIB=str(Path(args.fake_nvml).resolve()), FAKE_NVML_SCENARIO=str(scen))
        runs = []
        for i in range(repeat):
            runs.append(run_once(args, window, tmp, env))
            print(f"run {i + 1}/{repeat}: {json.dumps(runs[-1]['derived'])}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    version = subprocess.run([args.node_exporter, "--version"], capture_output=True, text=True)
    summary = {
        "gpumon_cpu_ms_per_tick": {
            k: median_of(runs, "gpumon", k, "cpu_ms_per_tick")
            for k in ("A_no_endpoint", "B_endpoint_unscraped", "C_scraped_1s")
        },
        "gpumon_server_thread_cpu_ms_per_scrape": median_of(
            runs, "gpumon", "C_scraped_1s", "server_thread_cpu_ms_per_scrape"
        ),
        "gpumon_server_thread_cpu_ms_unscraped_window": median_of(
            runs, "gpumon", "B_endpoint_unscraped", "server_thread_cpu_ms"
        ),
        "gpumon_scrape_latency_median_ms": median_of(runs, "gpumon", "C_scraped_1s", "latency", "median_ms"),
        "gpumon_scrape_latency_p99_ms": median_of(runs, "gpumon", "C_scraped_1s", "latency", "p99_ms"),
        "gpumon_burst_latency_median_ms": median_of(runs, "gpumon", "C_scraped_1s", "burst_latency", "median_ms"),
        "gpumon_series": runs[-1]["gpumon"]["C_scraped_1s"]["series"],
        "gpumon_body_bytes": runs[-1]["gpumon"]["C_scraped_1s"]["body_bytes"],
        "node_exporter_cpu_ms_per_scrape": median_of(runs, "node_exporter", "cpu_ms_per_scrape"),
        "node_exporter_scrape_latency_median_ms": median_of(runs, "node_exporter", "latency", "median_ms"),
        "node_exporter_scrape_latency_p99_ms": median_of(runs, "node_exporter", "latency", "p99_ms"),
        "node_exporter_burst_latency_median_ms": median_of(runs, "node_exporter", "burst_latency", "median_ms"),
        "node_exporter_series": runs[-1]["node_exporter"]["series"],
        "node_exporter_body_bytes": runs[-1]["node_exporter"]["body_bytes"],
        "endpoint_idle_cpu_ms_per_tick": median_of(runs, "derived", "endpoint_idle_cpu_ms_per_tick"),
        "scrape_cpu_ms": median_of(runs, "derived", "scrape_cpu_ms"),
        "node_exporter_cpu_per_scrape_over_gpumon_server_thread": median_of(
            runs, "derived", "node_exporter_cpu_per_scrape_over_gpumon_server_thread"
        ),
    }
    res = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "gpus": NGPUS,
        "interval_s": 1.0,
        "window_s": window,
        "node_exporter_version": (version.stdout or version.stderr).splitlines()[0:1],
        "summary_medians": summary,
        "runs": runs,
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(portable(res), indent=2) + "\n")


if __name__ == "__main__":
    main()
