#!/usr/bin/env python3
"""The job view at scale: `gpumon summarize --job ID` of a job of 64 nodes x 8 GPUs for a day at 10 s
(512 GPUs x 8,640 ticks, 4.4 M rows in 64 files) next to DuckDB computing the same per-host table
and stragglers from the same files.

usage: python3 bench/jobview.py [--hosts 64] [--runs 3] [--gpumon target/release/gpumon]
                                [--json bench/results/jobview.json]

Input (bench/fleet_tree.py, cached under bench/.data/): `tree DIR --days 1 --interval-s 10
--job-id bench-job --slow-host 5`: every host one node of job `bench-job`, host 5's busy GPUs at
1600 MHz instead of 1980 (the straggler both tools must name).

Measured as bench/fleet.py does (its `run` and `rotate`: each tool a child process, wall time
around it, peak RSS from os.wait4, one untimed warm-up, then RUNS rounds in turn; medians):
  gpumon   `summarize --job bench-job --format json -q TREE`
  duckdb   the query below on `read_parquet('TREE/*/*/run.parquet')`: per GPU its mean utilization
           and power, largest memory.used, energy from the counter's non-negative steps and its
           busy SM clock (mean clocks.sm while utilization >= 80); per host the job view's table
           (means of its GPUs' means, the median busy clock); the GPUs more than 5 % below the
           job's median busy clock.
Both answers are compared (each host's utilization, power, memory and energy, and the straggler
hosts), so a fast wrong answer does not count. Goal: within the fleet benchmark's budget (time
<= 0.5x DuckDB, peak RSS <= 128 MiB).
"""
import argparse
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import fleet  # noqa: E402  (run, rotate, generate, print_tools: the fleet benchmark's harness)

JOB = "bench-job"
SLOW_HOST = 5

QUERY = """
WITH r AS (
  SELECT host, "index" AS gpu, "timestamp" AS t, "utilization.gpu" AS util, "memory.used" AS mem,
         "power.draw" AS power, "energy.total" AS energy, "clocks.sm" AS clock
  FROM read_parquet('{tree}/*/*/run.parquet') WHERE "index" IS NOT NULL
), steps AS (
  SELECT host, gpu, energy - lag(energy) OVER (PARTITION BY host, gpu ORDER BY t) AS step
  FROM r WHERE energy IS NOT NULL
), e AS (
  SELECT host, gpu, sum(CASE WHEN step >= 0 THEN step END) / 3600.0 AS energy_wh FROM steps GROUP BY host, gpu
), g AS (
  SELECT host, gpu, min(t) AS start, max(t) AS "end", avg(util) AS util, avg(power) AS power,
         max(mem) AS mem, avg(clock) FILTER (WHERE util >= 80) AS busy
  FROM r GROUP BY host, gpu
), gj AS (
  SELECT g.*, e.energy_wh, median(busy) OVER () AS job_busy FROM g LEFT JOIN e USING (host, gpu)
)
SELECT host, count(*) AS gpus, min(start) AS start, max("end") AS "end", avg(util) AS util,
       avg(power) AS power, max(mem) AS mem, sum(energy_wh) AS energy_wh, median(busy) AS busy,
       count(*) FILTER (WHERE busy < job_busy * 0.95) AS slow_gpus
FROM gj GROUP BY host ORDER BY host
"""


def peer_duckdb(tree):
    """The child DuckDB run: the per-host table as JSON."""
    import duckdb

    cur = duckdb.connect().execute(QUERY.format(tree=tree))
    names = [d[0] for d in cur.description]
    json.dump([dict(zip(names, r)) for r in cur.fetchall()], sys.stdout, default=str)


def close(a, b, rel=1e-6):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=rel, abs_tol=1e-6)


def compare(duck, job):
    """Each host's figures in both answers, and the straggler hosts; (figures compared, differences)."""
    mine = {h["host"]: h for h in job["hosts"]}
    diffs, n = [], 0
    for d in duck:
        h = mine.get(d["host"])
        if h is None:
            diffs.append(f"{d['host']}: not in gpumon's job view")
            continue
        pairs = [("gpus", d["gpus"], h["gpus"]), ("utilization.gpu.mean", d["util"], h["utilization.gpu.mean"]),
                 ("power.draw.mean", d["power"], h["power.draw.mean"]), ("memory.used.max", d["mem"], h["memory.used.max"]),
                 ("energy_wh", d["energy_wh"], h["energy_wh"]), ("clocks.sm.busy_mean", d["busy"], h["clocks.sm.busy_mean"])]
        for k, a, b in pairs:
            n += 1
            if not close(float(a), b):
                diffs.append(f"{d['host']} {k}: duckdb {a}, gpumon {b}")
    slow_duck = sorted(d["host"] for d in duck if d["slow_gpus"] == d["gpus"])
    slow_mine = sorted(f["host"] for f in job["findings"] if f["rule"] == "straggler" and f["gpu"] is None)
    if slow_duck != slow_mine:
        diffs.append(f"straggler hosts: duckdb {slow_duck}, gpumon {slow_mine}")
    return n, diffs, slow_mine


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gpumon", default=os.path.join(ROOT, "target", "release", "gpumon"))
    ap.add_argument("--json")
    ap.add_argument("--peer-duckdb", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.peer_duckdb:
        return peer_duckdb(a.peer_duckdb)
    os.makedirs(fleet.DATA, exist_ok=True)
    tree = os.path.join(fleet.DATA, f"job-{a.hosts}x8-1d-10s")
    fleet.generate("tree", tree, "--hosts", str(a.hosts), "--days", "1", "--interval-s", "10",
                   "--job-id", JOB, "--slow-host", str(SLOW_HOST))
    for base, _, fs in os.walk(tree):  # warm the page cache
        for f in fs:
            with open(os.path.join(base, f), "rb") as fh:
                fh.read()
    tools = {
        "gpumon": [a.gpumon, "summarize", "--job", JOB, "--format", "json", "-q", tree],
        "duckdb": [sys.executable, os.path.abspath(__file__), "--peer-duckdb", tree],
    }
    load_before = os.getloadavg()
    res, last = fleet.rotate(tools, a.runs)
    job = json.loads(last["gpumon"])["jobs"][0]
    n, diffs, slow = compare(json.loads(last["duckdb"]), job)
    t = {k: r["wall_s_median"] for k, r in res.items()}
    report = {
        "hosts": a.hosts, "gpus": job["gpus"], "ticks": 8640, "rows": job["gpus"] * 8640,
        "tree_bytes": sum(os.path.getsize(os.path.join(b, f)) for b, _, fs in os.walk(tree) for f in fs),
        "cpus": os.cpu_count(), "runs": a.runs, "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
        "tools": res,
        "jobview_vs_duckdb_time": round(t["gpumon"] / t["duckdb"], 3),
        "jobview_peak_rss_mib": res["gpumon"]["peak_rss_mib_max"],
        "duckdb_peak_rss_mib": res["duckdb"]["peak_rss_mib_max"],
        "straggler_hosts": slow,
        "duckdb_check": {"figures": n, "differences": diffs},
    }
    print(f"{job['gpus']} GPUs on {a.hosts} hosts, {report['rows']:,} rows, {os.cpu_count()} CPUs, median of {a.runs}, "
          f"load {load_before[0]:.1f} -> {report['loadavg_after'][0]:.1f}")
    fleet.print_tools(res, 10)
    print(f"job view / DuckDB time: {report['jobview_vs_duckdb_time']:.2f}x (goal <= 0.5), peak RSS "
          f"{report['jobview_peak_rss_mib']:.0f} MiB (goal <= 128); stragglers {slow}; DuckDB vs gpumon: "
          f"{n} figures compared, {len(diffs)} differ")
    for d in diffs[:10]:
        print(f"  {d}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
