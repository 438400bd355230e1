#!/usr/bin/env python3
"""`gpumon summarize` next to DuckDB on the same 20-million-row Parquet file, in one run.

usage: python3 bench/summarize.py [--rows 20000000] [--runs 5] [--gpumon target/release/gpumon]
                                  [--before OTHER_GPUMON] [--peers duckdb,polars] [--scale K] [--json OUT]

The input comes from bench/peers/gen_metrics_parquet.py (8 GPUs, 1 s, 30 days) and is cached
under bench/.data/. Each tool runs as a child process; wall time is measured around it and peak RSS is
ru_maxrss from os.wait4. Runs alternate between the tools (warm page cache, one untimed warm-up each)
and the median is reported, with gpumon's time as a ratio of each peer's. The per-GPU results are
compared (count, mean, max, memory peak, power mean) so that a fast wrong answer does not count.
`--before BIN` runs a second gpumon binary (an earlier build) in the same rotation, as `gpumon-before`;
its JSON is compared with gpumon's whole ("same" or "differs").
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from portable import portable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "bench", "peers")


def run(cmd):
    """Run cmd, return (wall seconds, peak RSS MiB, stdout bytes, CPU seconds: user + system)."""
    out_path = os.path.join(ROOT, "bench", ".data", "stdout.tmp")
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err = p.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{cmd[0]} failed ({status}): {err.decode(errors='replace')}")
    with open(out_path, "rb") as f:
        data = f.read()
    return wall, ru.ru_maxrss / 1024.0, data, ru.ru_utime + ru.ru_stime


def ensure_input(rows):
    d = os.path.join(ROOT, "bench", ".data")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"metrics-{rows}.parquet")
    if not os.path.exists(path):
        print(f"generating {path} ...", file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(PEERS, "gen_metrics_parquet.py"), str(rows), path], check=True)
    return path


def scaled_input(base, k):
    """The base file repeated k times, each copy shifted in time by the span of the one before it
    (a k times longer recording), written one row group at a time (memory: one row group)."""
    out = base.replace(".parquet", f"-x{k}.parquet")
    if os.path.exists(out):
        return out
    # Imported only here: a child forked from a process that holds pyarrow would report its RSS
    # (execve folds the old address space's high-water mark into ru_maxrss).
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    print(f"writing {out} ...", file=sys.stderr)
    src = pq.ParquetFile(base)
    ts = pq.read_table(base, columns=["timestamp"]).column(0)
    span_us = (pc.max(ts).value - pc.min(ts).value) + 1_000_000
    tmp = out + ".tmp"
    with pq.ParquetWriter(tmp, src.schema_arrow, compression="zstd") as w:
        for copy in range(k):
            for i in range(src.num_row_groups):
                t = src.read_row_group(i)
                shifted = pc.add(t.column("timestamp").cast(pa.int64()), copy * span_us).cast(t.schema.field("timestamp").type)
                w.write_table(t.set_column(t.schema.get_field_index("timestamp"), "timestamp", shifted))
    os.rename(tmp, out)
    return out


def compare(gpumon_json, peer_json):
    ours = {int(g["index"]): g["stats"] for h in gpumon_json["hosts"] for g in h["gpus"]}
    worst = 0.0
    for r in peer_json["result"]:
        s = ours[int(r["index"])]
        for a, b in [("n", "samples"), ("util_mean", "utilization.gpu.mean"), ("util_max", "utilization.gpu.max"),
                     ("mem_max", "memory.used.max"), ("power_mean", "power.draw.mean"), ("idle_frac", None)]:
            x = float(r[a])
            y = s["utilization.gpu.idle_pct"] / 100 if b is None else float(s[b])
            worst = max(worst, abs(x - y) / max(abs(x), 1e-9))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--gpumon", default=os.path.join(ROOT, "target", "release", "gpumon"))
    ap.add_argument("--before", help="an earlier gpumon binary, run alongside as gpumon-before")
    ap.add_argument("--peers", default="duckdb")
    ap.add_argument("--scale", type=int, default=1, help="repeat the input K times in time (K x rows)")
    ap.add_argument("--json")
    a = ap.parse_args()
    path = ensure_input(a.rows)
    if a.scale > 1:
        path = scaled_input(path, a.scale)
    with open(path, "rb") as f:  # warm the page cache
        while f.read(1 << 24):
            pass
    tools = {"gpumon": [a.gpumon, "summarize", path, "--format", "json", "-q"]}
    if a.before:
        tools["gpumon-before"] = [a.before, "summarize", path, "--format", "json", "-q"]
    for peer in filter(None, a.peers.split(",")):
        tools[peer] = [sys.executable, os.path.join(PEERS, "peer_summary.py"), peer, path]
    res = {k: {"wall_s": [], "rss_mib": [], "cpu_s": []} for k in tools}
    last = {}
    load_before = os.getloadavg()
    for k, cmd in tools.items():
        _, _, last[k], _ = run(cmd)  # warm-up, untimed
    for _ in range(a.runs):
        for k, cmd in tools.items():
            w, rss, out, cpu = run(cmd)
            res[k]["wall_s"].append(w)
            res[k]["rss_mib"].append(rss)
            res[k]["cpu_s"].append(cpu)
            last[k] = out
    ours = json.loads(last["gpumon"])
    report = {"rows": a.rows * a.scale, "file_bytes": os.path.getsize(path), "cpus": os.cpu_count(), "runs": a.runs,
              "loadavg_before": load_before, "loadavg_after": os.getloadavg(), "tools": {}}
    for k in tools:
        report["tools"][k] = {
            "wall_s_median": statistics.median(res[k]["wall_s"]),
            "cpu_s_median": statistics.median(res[k]["cpu_s"]),
            "peak_rss_mib_max": max(res[k]["rss_mib"]),
            "wall_s": res[k]["wall_s"],
            "cpu_s": res[k]["cpu_s"],
        }
    g = report["tools"]["gpumon"]
    print(f"{a.rows * a.scale:,} rows, {report['file_bytes'] / 1e6:.0f} MB, {os.cpu_count()} CPUs, median of {a.runs}, "
          f"load {load_before[0]:.1f} -> {report['loadavg_after'][0]:.1f}")
    print(f"{'tool':14} {'wall s':>8} {'(min-max)':>11} {'CPU s':>6} {'peak RSS MiB':>13} {'time vs gpumon':>15} {'max rel. diff':>14}")
    for k, t in report["tools"].items():
        if k == "gpumon-before":
            diff = "same" if json.loads(last[k]) == ours else "differs"
        else:
            diff = "" if k == "gpumon" else f"{compare(ours, json.loads(last[k])):.1e}"
        ratio = t["wall_s_median"] / g["wall_s_median"]
        t["gpumon_time_ratio"] = g["wall_s_median"] / t["wall_s_median"]
        span = f"{min(t['wall_s']):.2f}-{max(t['wall_s']):.2f}"
        print(f"{k:14} {t['wall_s_median']:8.2f} {span:>11} {t['cpu_s_median']:6.2f} {t['peak_rss_mib_max']:13.0f} {ratio:14.2f}x {diff:>14}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(portable(report), f, indent=1)


if __name__ == "__main__":
    main()
