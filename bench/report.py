#!/usr/bin/env python3
"""`gpumon report` on the 20-million-row Parquet file (8 GPUs, 1 s, ~29 days), next to the pandas +
matplotlib script a user would otherwise write to plot the same columns from the same file.

usage: python3 bench/report.py [--rows 20000000] [--runs 3] [--gpumon target/release/gpumon]
                               [--skip-full] [--json OUT]
needs: pip install pandas pyarrow matplotlib websocket-client; chromium (apt-get install chromium)

Measured, each as a child process (wall time around it; gpumon's peak RSS = ru_maxrss through the C
launcher bench/rusage_exec.c, so it does not inherit Python's high-water mark; the peers' peak RSS is
polled from /proc and ru_maxrss, and a peer is stopped past --peer-timeout or --peer-rss-cap):
  gpumon   `gpumon report FILE -o report.html`: wall time (median of --runs after one warm-up),
           peak RSS, size of the HTML; then the time headless Chromium takes to load and render the
           page with its script (the interactive charts; tests/py/browser.py --scripts, median of 5
           loads: load event, and two animation frames after
           it = laid out and painted).
  full     pandas.read_parquet of the charted columns, then matplotlib (Agg) draws every sample:
           5 charts per GPU (utilization, memory, power, temperature, SM clock), host CPU and RAM,
           and a utilization heatmap (imshow of 1200 bins), saved as one PNG.
  binned   the same figure from 1200 time bins per series (pandas resample: min/max/mean, drawn as
           fill_between + line): what a careful user does to keep spikes visible in less time.
The input is cached under bench/.data/ (shared with bench/summarize.py: metrics-ROWS.parquet).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from portable import portable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "bench", "peers")
DATA = os.path.join(ROOT, "bench", ".data")

GPU_COLS = ["utilization.gpu", "memory.used", "power.draw", "temperature.gpu", "clocks.sm"]
HOST_COLS = ["cpu.util", "mem.used"]


def ensure_input(rows):
    os.makedirs(DATA, exist_ok=True)
    path = os.path.join(DATA, f"metrics-{rows}.parquet")
    if not os.path.exists(path):
        print(f"generating {path} ...", file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(PEERS, "gen_metrics_parquet.py"), str(rows), path], check=True)
    return path


def launcher(tmp):
    """bench/rusage_exec.c compiled (static when the toolchain can); None without a C compiler."""
    exe = os.path.join(tmp, "rusage_exec")
    for extra in (["-static"], []):
        r = subprocess.run(["cc", "-O2", *extra, "-o", exe, os.path.join(ROOT, "bench", "rusage_exec.c")],
                           capture_output=True)
        if r.returncode == 0:
            return exe
    return None


def run(cmd, tmp, exe):
    """(wall s, peak RSS MiB) of cmd; exits on failure."""
    if exe:
        out = os.path.join(tmp, "rusage.txt")
        p = subprocess.run([exe, out, *cmd], capture_output=True)
        if p.returncode != 0:
            sys.exit(f"{cmd} failed ({p.returncode}): {p.stderr.decode(errors='replace')[-2000:]}")
        rc, _ut, _st, rss_kib, wall = open(out).read().split()
        return float(wall), float(rss_kib) / 1024.0
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{cmd} failed: {p.stderr.read().decode(errors='replace')[-2000:]}")
    return wall, ru.ru_maxrss / 1024.0


def run_capped(cmd, timeout_s, cap_mib):
    """(wall s, peak RSS MiB, None) of cmd, or (s, MiB, why) when it was stopped: past timeout_s or cap_mib
    of RSS (polled from /proc twice a second; the full-resolution plot would otherwise take the machine)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak, why = 0.0, None
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        try:
            with open(f"/proc/{p.pid}/status") as f:
                rss = next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0) / 1024.0
            peak = max(peak, rss)
        except OSError:
            pass
        wall = time.perf_counter() - t0
        if wall > timeout_s or peak > cap_mib:
            why = f"stopped after {wall:.0f} s at {peak:.0f} MiB RSS (limits: {timeout_s} s, {cap_mib} MiB)"
            p.kill()
            _, status, ru = os.wait4(p.pid, 0)
            break
        time.sleep(0.5)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if why is None and p.returncode != 0:
        sys.exit(f"{cmd} failed: {p.stderr.read().decode(errors='replace')[-2000:]}")
    return wall, max(peak, ru.ru_maxrss / 1024.0), why


def peer(path, out, binned):
    """The pandas + matplotlib plot (runs in a child: `report.py --peer full|binned FILE OUT.png`)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd
    import pyarrow.parquet as pq

    have = set(pq.ParquetFile(path).schema_arrow.names)
    cols = [c for c in ["timestamp", "index", *GPU_COLS, *HOST_COLS] if c in have]
    df = pd.read_parquet(path, columns=cols)
    gpus = sorted(df["index"].unique())
    span = df["timestamp"].max() - df["timestamp"].min()
    rule = span / 1200
    rows = len(gpus) * 3 + 2
    fig, axes = plt.subplots(rows, 2, figsize=(12.8, 2.2 * rows), constrained_layout=True)
    by_gpu = {g: d.set_index("timestamp") for g, d in df.groupby("index")}
    heat = []
    for i, g in enumerate(gpus):
        d = by_gpu[g]
        for k, c in enumerate([c for c in GPU_COLS if c in d]):
            ax = axes[i * 3 + k // 2][k % 2]
            if binned:
                r = d[c].resample(rule).agg(["min", "max", "mean"])
                ax.fill_between(r.index, r["min"], r["max"], alpha=0.25, linewidth=0)
                ax.plot(r.index, r["mean"], linewidth=1)
            else:
                ax.plot(d.index, d[c], linewidth=0.5)
            ax.set_title(f"GPU {g}: {c}", fontsize=9)
        heat.append(d["utilization.gpu"].resample(rule).mean().to_numpy())
        axes[i * 3 + 2][1].axis("off")
    host = by_gpu[gpus[0]]
    for k, c in enumerate([c for c in HOST_COLS if c in host]):
        ax = axes[len(gpus) * 3][k]
        if binned:
            r = host[c].resample(rule).agg(["min", "max", "mean"])
            ax.fill_between(r.index, r["min"], r["max"], alpha=0.25, linewidth=0)
            ax.plot(r.index, r["mean"], linewidth=1)
        else:
            ax.plot(host.index, host[c], linewidth=0.5)
        ax.set_title(f"host: {c}", fontsize=9)
    n = min(len(h) for h in heat)
    hm = axes[len(gpus) * 3 + 1][0]
    hm.imshow(np.vstack([h[:n] for h in heat]), aspect="auto", interpolation="nearest", cmap="YlGnBu")
    hm.set_title("utilization.gpu by GPU", fontsize=9)
    axes[len(gpus) * 3 + 1][1].axis("off")
    fig.savefig(out, dpi=100)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--peer":
        peer(sys.argv[3], sys.argv[4], sys.argv[2] == "binned")
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gpumon", default=os.path.join(ROOT, "target", "release", "gpumon"))
    ap.add_argument("--skip-full", action="store_true", help="leave out the full-resolution matplotlib run")
    ap.add_argument("--peer-timeout", type=int, default=600, help="seconds before a peer run is stopped")
    ap.add_argument("--peer-rss-cap", type=int, default=6144, help="MiB of RSS at which a peer run is stopped")
    ap.add_argument("--json")
    a = ap.parse_args()
    path = ensure_input(a.rows)
    res = {"rows": a.rows, "input": path, "input_bytes": os.path.getsize(path), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        exe = launcher(tmp)
        html = os.path.join(DATA, "report-20M.html" if a.rows == 20_000_000 else f"report-{a.rows}.html")
        cmd = [a.gpumon, "report", "-q", path, "-o", html]
        run(cmd, tmp, exe)  # warm-up (page cache)
        runs = [run(cmd, tmp, exe) for _ in range(a.runs)]
        res["gpumon"] = {
            "wall_s": statistics.median(w for w, _ in runs), "wall_s_all": [w for w, _ in runs],
            "rss_mib": max(r for _, r in runs), "html_bytes": os.path.getsize(html),
        }
        b = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "py", "browser.py"), html, "--scripts", "--repeat", "5",
                            "--screenshot", os.path.join(DATA, "report-20M.png")], capture_output=True)
        if b.returncode != 0:
            sys.exit(f"browser.py failed: {b.stderr.decode(errors='replace')}")
        br = json.loads(b.stdout)
        res["chromium"] = {k: br[k] for k in ["load_ms", "render_ms", "load_ms_all", "render_ms_all", "errors"]}
        res["chromium"]["charts"] = br["dom"]["chart_count"]
        for kind in (["binned"] if a.skip_full else ["binned", "full"]):
            png = os.path.join(DATA, f"peer-{kind}.png")
            if os.path.exists(png):
                os.remove(png)
            cmd = [sys.executable, os.path.abspath(__file__), "--peer", kind, path, png]
            wall, rss, why = run_capped(cmd, a.peer_timeout, a.peer_rss_cap)
            size = os.path.getsize(png) if os.path.exists(png) else None
            res[f"matplotlib_{kind}"] = {"wall_s": wall, "rss_mib": rss, "png_bytes": size, "stopped": why}
        res["launcher"] = bool(exe)
    g = res["gpumon"]
    print(f"input: {a.rows:,} rows, {res['input_bytes'] / 1e6:.0f} MB Parquet, {res['cpus']} CPUs")
    print(f"gpumon report      {g['wall_s']:6.2f} s  {g['rss_mib']:7.0f} MiB  HTML {g['html_bytes'] / 1e6:.2f} MB"
          f"  (Chromium: load {res['chromium']['load_ms']:.0f} ms, rendered {res['chromium']['render_ms']:.0f} ms,"
          f" {res['chromium']['charts']} charts)")
    for kind in ["binned", "full"]:
        m = res.get(f"matplotlib_{kind}")
        if m and m["stopped"]:
            print(f"pandas+mpl {kind:7} did not finish: {m['stopped']}")
        elif m:
            print(f"pandas+mpl {kind:7} {m['wall_s']:6.2f} s  {m['rss_mib']:7.0f} MiB  PNG {m['png_bytes'] / 1e6:.2f} MB"
                  f"  ({m['wall_s'] / g['wall_s']:.1f}x gpumon's time)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(portable(res), f, indent=2)


if __name__ == "__main__":
    main()
