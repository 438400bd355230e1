#!/usr/bin/env python3
"""`gpumon summarize` of a fleet's hive tree next to DuckDB, and what `summarize --by phase` costs.

usage: python3 bench/fleet.py [--hosts 64] [--days 30] [--runs 3] [--gpumon target/release/gpumon]
                              [--before OTHER_GPUMON] [--marked-days 3] [--json bench/results/fleet.json]

Inputs (bench/fleet_tree.py, cached under bench/.data/, schema from a fake-NVML recording when
bench/.data/fleet-template.parquet exists):
  tree    HOSTS x DAYS files `host=H/date=D/run.parquet`, 8 GPUs, 60 s (64 x 30: 1,920 files of 11,520 rows)
  merged  the same rows with one file per host (HOSTS files of DAYS x 11,520 rows)
  marked  one host, MARKED_DAYS days at 1 s, 8 GPUs, 6 phases marked in the footer

Measured in one run, each tool a child process (wall time around it; peak RSS = ru_maxrss from
os.wait4; CPU = user + system), one untimed warm-up each, then RUNS rounds taking the tools in turn;
medians reported:
  1. summarize of the tree vs DuckDB running docs/fleet.md's query on the same tree
     (`read_parquet('TREE/*/*/run.parquet', hive_partitioning = true)`); every per-GPU figure compared
     (tests/py/fleet_check.py), so a fast wrong answer does not count. Goals: time <= 0.5x DuckDB,
     peak RSS <= 128 MiB.
  2. per-file cost: (summarize of the tree - summarize of `merged`) / (files of the tree - files of
     merged): what a file costs beyond its rows. Goal: <= 1 ms.
  3. `summarize --by phase` vs plain summarize of `marked`. Goal: <= 1.3x.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "bench", ".data")
GEN = os.path.join(ROOT, "bench", "fleet_tree.py")
TEMPLATE = os.path.join(DATA, "fleet-template.parquet")
sys.path.insert(0, os.path.join(ROOT, "tests", "py"))
import fleet_check  # noqa: E402  (docs/fleet.md's queries and the comparison)


def run(cmd):
    """Run cmd; (wall s, peak RSS MiB, CPU s, stdout bytes)."""
    out_path = os.path.join(DATA, "fleet-stdout.tmp")
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{cmd} failed ({status}): {err.decode(errors='replace')}")
    with open(out_path, "rb") as f:
        return wall, ru.ru_maxrss / 1024.0, ru.ru_utime + ru.ru_stime, f.read()


def print_tools(res, width):
    """One line per tool of `rotate`'s results: median wall time, its range, CPU time, peak RSS."""
    print(f"{'tool':{width}} {'wall s':>8} {'(min-max)':>13} {'CPU s':>7} {'peak RSS MiB':>13}")
    for k, r in res.items():
        span = f"{min(r['wall_s']):.2f}-{max(r['wall_s']):.2f}"
        print(f"{k:{width}} {r['wall_s_median']:8.3f} {span:>13} {r['cpu_s_median']:7.2f} {r['peak_rss_mib_max']:13.0f}")


def generate(kind, path, *args):
    if os.path.exists(path):
        return
    template = ["--template", TEMPLATE] if os.path.exists(TEMPLATE) else []
    print(f"generating {path} ...", file=sys.stderr)
    subprocess.run([sys.executable, GEN, kind, path + ".tmp", *args, *template], check=True, stdout=subprocess.DEVNULL)
    os.rename(path + ".tmp", path)


def merged(tree, out):
    """The tree's rows, one file per host (in a child: the parent stays free of pyarrow)."""
    if os.path.exists(out):
        return
    code = f"""
import os, pyarrow.parquet as pq
from portable import portable
tree, out = {tree!r}, {out!r}
os.makedirs(out + ".tmp")
for h in sorted(os.listdir(tree)):
    files = sorted(os.path.join(tree, h, d, "run.parquet") for d in os.listdir(os.path.join(tree, h)))
    schema = pq.read_schema(files[0])
    strings = [f.name for f in schema if str(f.type) == "string"]
    with pq.ParquetWriter(os.path.join(out + ".tmp", h + ".parquet"), schema, compression="zstd", use_dictionary=strings) as w:
        for f in files:
            w.write_table(pq.read_table(f))
os.rename(out + ".tmp", out)
"""
    print(f"writing {out} ...", file=sys.stderr)
    subprocess.run([sys.executable, "-c", code], check=True)


def rotate(tools, runs):
    """Each tool once untimed, then `runs` rounds in turn; per tool the lists and the last stdout."""
    res = {k: {"wall_s": [], "rss_mib": [], "cpu_s": []} for k in tools}
    last = {k: run(cmd)[3] for k, cmd in tools.items()}
    for _ in range(runs):
        for k, cmd in tools.items():
            wall, rss, cpu, out = run(cmd)
            res[k]["wall_s"].append(round(wall, 4))
            res[k]["rss_mib"].append(round(rss, 1))
            res[k]["cpu_s"].append(round(cpu, 4))
            last[k] = out
    for r in res.values():
        r["wall_s_median"] = statistics.median(r["wall_s"])
        r["cpu_s_median"] = statistics.median(r["cpu_s"])
        r["peak_rss_mib_max"] = max(r["rss_mib"])
    return res, last


def peer_duckdb(tree):
    """The child DuckDB run: docs/fleet.md's query on the tree, rows as JSON."""
    rows = fleet_check.duckdb_rows(fleet_check.queries(tree)["duckdb"])
    json.dump(rows, sys.stdout, default=str)


def count_files(d):
    return sum(len(fs) for _, _, fs in os.walk(d))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--marked-days", type=int, default=3)
    ap.add_argument("--gpumon", default=os.path.join(ROOT, "target", "release", "gpumon"))
    ap.add_argument("--before", help="an earlier gpumon binary, run on the tree in the same rotation as gpumon-before")
    ap.add_argument("--json")
    ap.add_argument("--peer-duckdb", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.peer_duckdb:
        return peer_duckdb(a.peer_duckdb)
    os.makedirs(DATA, exist_ok=True)
    tree = os.path.join(DATA, f"fleet-{a.hosts}x{a.days}")
    generate("tree", tree, "--hosts", str(a.hosts), "--days", str(a.days))
    one = tree + "-merged"
    merged(tree, one)
    marked = os.path.join(DATA, f"fleet-marked-{a.marked_days}d.parquet")
    generate("marked", marked, "--days", str(a.marked_days))
    for d in (tree, one):  # warm the page cache
        for base, _, fs in os.walk(d):
            for f in fs:
                with open(os.path.join(base, f), "rb") as fh:
                    fh.read()
    g = [a.gpumon, "summarize", "--format", "json", "-q"]
    tools = {
        "gpumon": g + [tree],
        "duckdb": [sys.executable, os.path.abspath(__file__), "--peer-duckdb", tree],
        "gpumon-merged": g + [one],
        "gpumon-marked": g + [marked],
        "gpumon-marked-by-phase": g + ["--by", "phase", marked],
    }
    if a.before:
        tools["gpumon-before"] = [a.before] + g[1:] + [tree]
    load_before = os.getloadavg()
    res, last = rotate(tools, a.runs)
    check = fleet_check.compare(json.loads(last["duckdb"]), json.loads(last["gpumon"]))
    files, files_merged = count_files(tree), count_files(one)
    t = {k: r["wall_s_median"] for k, r in res.items()}
    report = {
        "hosts": a.hosts, "days": a.days, "files": files, "files_merged": files_merged,
        "rows": files * 11520, "tree_bytes": sum(os.path.getsize(os.path.join(b, f)) for b, _, fs in os.walk(tree) for f in fs),
        "marked_rows": a.marked_days * 86400 * 8,
        "cpus": os.cpu_count(), "runs": a.runs, "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
        "tools": res,
        "summarize_vs_duckdb_time": round(t["gpumon"] / t["duckdb"], 3),
        "summarize_peak_rss_mib": res["gpumon"]["peak_rss_mib_max"],
        "per_file_ms": round(1000 * (t["gpumon"] - t["gpumon-merged"]) / (files - files_merged), 4),
        "summarize_s_per_file_ms": round(1000 * t["gpumon"] / files, 4),
        "by_phase_vs_plain_time": round(t["gpumon-marked-by-phase"] / t["gpumon-marked"], 3),
        "before_vs_duckdb_time": round(t["gpumon-before"] / t["duckdb"], 3) if a.before else None,
        "duckdb_check": {k: v for k, v in check.items() if k != "mismatches"} | {"mismatches": len(check["mismatches"])},
    }
    print(f"{files} files ({files_merged} merged), {report['rows']:,} rows, {os.cpu_count()} CPUs, median of {a.runs}, "
          f"load {load_before[0]:.1f} -> {report['loadavg_after'][0]:.1f}")
    print_tools(res, 24)
    print(f"summarize / DuckDB time: {report['summarize_vs_duckdb_time']:.2f}x (goal <= 0.5), peak RSS "
          f"{report['summarize_peak_rss_mib']:.0f} MiB (goal <= 128), per-file cost {report['per_file_ms']:.3f} ms "
          f"(goal <= 1; {report['summarize_s_per_file_ms']:.2f} ms a file in all), --by phase / plain: "
          f"{report['by_phase_vs_plain_time']:.2f}x (goal <= 1.3); DuckDB figures vs gpumon: "
          f"{check['figures']} compared, {len(check['mismatches'])} differ")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(portable(report), f, indent=1)


if __name__ == "__main__":
    main()
