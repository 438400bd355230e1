#!/usr/bin/env python3
"""The per-tick cost of `gpumon record --pid ROOT`: following a process tree of 1, 16 and 128 processes.

Each case starts a tree of N idle processes:

    sh -c 'i=1; while [ $i -lt N ]; do sleep 1000000 & i=$((i+1)); done; exec sleep 1000000'

so ROOT (the shell, then `sleep` after the exec) has N - 1 `sleep` children, N processes in all
(N = 1 is a lone `sleep`). The script waits until /proc/ROOT/task/ROOT/children lists N - 1 PIDs,
then runs, host only (GPUMON_NVML_LIB points at a file that does not exist):

    gpumon record -q -i 10ms --count 3000 --pid ROOT -o follow-N.csv    (following)
    gpumon record -q -i 10ms --count 3000 -o base.csv                   (baseline, no --pid)

and the same two with `--count 1` three times each, for the start-up cost. As in record.py,
CPU = ru_utime + ru_stime of the finished child (bench/rusage_exec.c), and
    CPU per tick = (CPU long - median CPU short) / (ticks long - 1)
    following cost per tick = CPU per tick following - CPU per tick baseline
    per process             = following cost per tick / N
Ticks are the rows of the CSV (host only: one row per tick). job.procs is read from every row
and must equal N.

gpumon reads /proc/PID/stat and /proc/PID/io of every known process each tick, and looks for
new children at most once a second by walking /proc/PID/task/*/children from the root (not a
scan of /proc). So the cost should grow with the tree and not with the machine. To check that,
the N = 16 case and its baseline are run again while 500 unrelated `sleep` processes exist.

The runs go one at a time (each 30 s at 10 ms), in `--rounds` rounds (default 2) so that the
order does not bias one case; the median over rounds is reported.

usage: python3 bench/job_follow.py [--quick] [--json OUT.json] [--keep DIR] [--rounds R]
build first: cargo build --release
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import record  # noqa: E402  (same directory: launcher, Proc, run_wave)
from record import Proc, build_launcher, proc_stat_cpu, run_wave  # noqa: E402
from portable import portable  # noqa: E402  (results without this machine's paths)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_GPUMON = REPO / "target" / "release" / "gpumon"

SIZES = (1, 16, 128)
CROWD = 500
CROWD_CASE = 16
SHORT_REPEATS = 3
STRACE_TICKS = 500
SUMMARY_RE = re.compile(r"ticks recorded, (\d+) samples late, (\d+) ticks missed")


class Tree:
    """N idle processes: a root and N - 1 `sleep` children."""

    def __init__(self, n: int):
        self.n = n
        script = f"i=1; while [ $i -lt {n} ]; do sleep 1000000 & i=$((i+1)); done; exec sleep 1000000"
        self.p = subprocess.Popen(["sh", "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  start_new_session=True)
        self.root = self.p.pid
        deadline = time.monotonic() + 30
        while True:
            kids = self.children()
            if len(kids) == n - 1 and self.root_is_sleep():
                break
            if time.monotonic() > deadline:
                self.kill()
                sys.exit(f"job_follow.py: tree of {n} did not come up ({len(kids)} children)")
            time.sleep(0.02)

    def children(self) -> list[str]:
        try:
            return Path(f"/proc/{self.root}/task/{self.root}/children").read_text().split()
        except OSError:
            return []

    def root_is_sleep(self) -> bool:
        try:
            return Path(f"/proc/{self.root}/comm").read_text().strip() == "sleep"
        except OSError:
            return False

    def kill(self) -> None:
        # The whole tree is one session/process group that this script started.
        try:
            os.killpg(self.root, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait()


class Crowd:
    """CROWD unrelated idle processes (children of their own shell, not of any followed tree)."""

    def __init__(self, n: int):
        self.t = Tree(n)  # n `sleep` processes in all (a root and its n - 1 children); never followed

    def kill(self) -> None:
        self.t.kill()


def csv_rows(path: Path) -> tuple[int, list[int]]:
    """Rows and the job.procs values of a host-only gpumon CSV."""
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        j = next((i for i, h in enumerate(header) if h.split(" [")[0] == "job.procs"), None)
        rows = list(r)
    procs = [int(row[j]) for row in rows if j is not None and row[j] != ""]
    return len(rows), procs


def process_count() -> int:
    return sum(1 for e in os.listdir("/proc") if e.isdigit())


def strace_counts(path: Path) -> dict[str, int]:
    """Calls per syscall from an `strace -c` summary."""
    out = {}
    for line in path.read_text().splitlines():
        f = line.split()
        # % time, seconds, usecs/call, calls, [errors], syscall
        if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
            try:
                out[f[-1]] = int(f[3])
            except ValueError:
                pass
    return out


def strace_check(gpumon: str, env: dict[str, str], tmp: Path) -> dict:
    """Syscalls per tick following CROWD_CASE processes, without and with CROWD unrelated ones.

    rusage CPU on a shared 2-core machine moves by more than the effect being looked for; syscall
    counts do not. futex and sched_yield depend on timing (and strace slows everything), so the
    comparison is over the file-system calls.
    """
    res = {}
    for label, crowd_n in (("quiet", 0), (f"+{CROWD}", CROWD)):
        crowd = Crowd(crowd_n) if crowd_n else None
        try:
            t = Tree(CROWD_CASE)
            try:
                summary = tmp / f"strace.{crowd_n}.txt"
                out = tmp / f"strace.{crowd_n}.csv"
                subprocess.run(["strace", "-f", "-c", "-o", str(summary), gpumon, "record", "-q", "-i", "10ms",
                                "--count", str(STRACE_TICKS), "--pid", str(t.root), "-o", str(out)],
                               env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                ticks, _ = csv_rows(out)
                counts = strace_counts(summary)
                res[label] = {"ticks": ticks, "processes_on_machine": process_count(), "calls": counts}
            finally:
                t.kill()
        finally:
            if crowd:
                crowd.kill()
    keys = ["openat", "read", "close", "statx", "getdents64"]
    print()
    print(f"syscalls per tick following {CROWD_CASE} processes (strace -f -c, {STRACE_TICKS} ticks at 10 ms; "
          "futex/sched_yield left out: they depend on timing)")
    print("| machine                         | " + " | ".join(f"{k:>10}" for k in keys) + " |")
    print("|---------------------------------|" + "|".join("-" * 12 for _ in keys) + "|")
    for label, r in res.items():
        name = f"{label} ({r['processes_on_machine']} processes)"
        print(f"| {name:<31} | " + " | ".join(f"{r['calls'].get(k, 0) / r['ticks']:>10.2f}" for k in keys) + " |")
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="500 ticks per run, 1 round (about 1 min)")
    ap.add_argument("--count", type=int, help="ticks per long run (default 3000; --quick 500)")
    ap.add_argument("--rounds", type=int, help="rounds over all cases (default 2; --quick 1)")
    ap.add_argument("--json", metavar="OUT", help="write every figure as JSON")
    ap.add_argument("--keep", metavar="DIR", help="keep outputs and stderr in DIR (default: temp dir, removed)")
    ap.add_argument("--no-strace", action="store_true", help="skip the syscall count check (strace -c)")
    ap.add_argument("--gpumon", default=str(DEFAULT_GPUMON))
    args = ap.parse_args()
    if not Path(args.gpumon).exists():
        sys.exit(f"job_follow.py: gpumon not found at {args.gpumon}; build with `cargo build --release`")
    count = args.count or (500 if args.quick else 3000)
    rounds = args.rounds or (1 if args.quick else 2)

    tmp = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="gpumon-follow-"))
    tmp.mkdir(parents=True, exist_ok=True)
    record.LAUNCHER = build_launcher(tmp)
    env = {"GPUMON_NVML_LIB": str(tmp / "no-such-dir" / "libnvidia-ml.so.1")}
    gpumon = str(Path(args.gpumon).resolve())

    started_wall = dt.datetime.now(dt.timezone.utc)
    t_start = time.monotonic()
    load_before = os.getloadavg()
    busy0, total0 = proc_stat_cpu()
    print(f"gpumon job-follow benchmark  {started_wall:%Y-%m-%d %H:%M} UTC  host {platform.node()}  "
          f"{os.cpu_count()} CPUs  {platform.platform()}")
    print(f"gpumon record -q -i 10ms --count {count} [--pid ROOT] -o X.csv, host only; {rounds} round(s); "
          f"{process_count()} processes on the machine at the start")

    # case key -> list over rounds of {"cpu_long", "ticks", "cpu_short", "procs"}
    cases = ["base"] + [f"follow {n}" for n in SIZES] + [f"base +{CROWD}", f"follow {CROWD_CASE} +{CROWD}"]
    meas: dict[str, list[dict]] = {c: [] for c in cases}
    machine_procs: dict[str, list[int]] = {c: [] for c in cases}
    seq = 0

    def measure(case: str, pid: int | None, n: int | None) -> None:
        nonlocal seq
        seq += 1
        tag = case.replace(" ", "_").replace("+", "crowd")
        follow = ["--pid", str(pid)] if pid else []
        out = tmp / f"{tag}.r{seq}.csv"
        long = Proc(case, [gpumon, "record", "-q", "-i", "10ms", "--count", str(count), *follow, "-o", str(out)], env)
        shorts = [Proc(case + " short",
                       [gpumon, "record", "-q", "-i", "10ms", "--count", "1", *follow, "-o", str(tmp / f"{tag}.s{seq}.{i}.csv")],
                       env) for i in range(SHORT_REPEATS)]
        machine_procs[case].append(process_count())
        run_wave([long], tmp)
        for s in shorts:
            run_wave([s], tmp)
        ticks, procs = csv_rows(out)
        m = SUMMARY_RE.search(long.stderr)
        late, missed = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        bad = [ln for ln in long.stderr.splitlines()
               if "NVML" not in ln and "meant for benchmarks" not in ln and "ticks recorded" not in ln and "started" not in ln]
        meas[case].append({
            "cpu_long_s": long.cpu_s, "ticks": ticks, "cpu_short_s": [s.cpu_s for s in shorts],
            "wall_s": long.wall_s, "maxrss_kib": long.maxrss_kib,
            "procs_min": min(procs) if procs else None, "procs_max": max(procs) if procs else None,
            "procs_rows": len(procs), "procs_ok": bool(procs) and n is not None and all(p == n for p in procs),
            "late": late, "missed": missed, "stderr": bad,
        })
        if not args.keep:
            out.unlink(missing_ok=True)
            for i in range(SHORT_REPEATS):
                (tmp / f"{tag}.s{seq}.{i}.csv").unlink(missing_ok=True)

    for r in range(rounds):
        print(f"round {r + 1}/{rounds} ...", flush=True)
        measure("base", None, None)
        for n in SIZES:
            t = Tree(n)
            try:
                measure(f"follow {n}", t.root, n)
            finally:
                t.kill()
        crowd = Crowd(CROWD)
        try:
            t = Tree(CROWD_CASE)
            try:
                measure(f"follow {CROWD_CASE} +{CROWD}", t.root, CROWD_CASE)
            finally:
                t.kill()
            measure(f"base +{CROWD}", None, None)
        finally:
            crowd.kill()

    def per_tick(m: dict) -> float:
        return (m["cpu_long_s"] - statistics.median(m["cpu_short_s"])) / (m["ticks"] - 1)

    def startup(m: dict) -> float:
        return statistics.median(m["cpu_short_s"]) - per_tick(m)

    summary = {}
    for c in cases:
        pts = [per_tick(m) for m in meas[c]]
        summary[c] = {
            "per_tick_s": statistics.median(pts),
            "per_tick_rounds_s": pts,
            "startup_s": statistics.median(startup(m) for m in meas[c]),
            "ticks": [m["ticks"] for m in meas[c]],
            "procs": sorted({(m["procs_min"], m["procs_max"]) for m in meas[c]}, key=str),
            "procs_ok": all(m["procs_ok"] for m in meas[c]) if c.startswith("follow") else None,
            "maxrss_kib": max(m["maxrss_kib"] for m in meas[c]),
            "machine_procs": machine_procs[c],
            "late": sum(m["late"] for m in meas[c]),
            "missed": sum(m["missed"] for m in meas[c]),
        }

    base, base_crowd = summary["base"]["per_tick_s"], summary[f"base +{CROWD}"]["per_tick_s"]
    print()
    print("CPU = ru_utime + ru_stime of the finished child; per tick = (long - median of 3 x 1-tick) / (ticks - 1); "
          "median over rounds; 10 ms interval, host only")
    print("| case                    | processes on machine | ticks | CPU/tick µs (rounds)        | following µs/tick | per process µs/tick | job.procs | start-up ms | peak RSS MiB | late/missed |")
    print("|-------------------------|----------------------|-------|-----------------------------|-------------------|---------------------|-----------|-------------|--------------|-------------|")
    for c in cases:
        s = summary[c]
        n = int(c.split()[1]) if c.startswith("follow") else None
        ref = base_crowd if c.endswith(f"+{CROWD}") else base
        extra = s["per_tick_s"] - ref
        rounds_s = ", ".join(f"{1e6 * p:.1f}" for p in s["per_tick_rounds_s"])
        procs = "-" if n is None else (f"{s['procs'][0][0]}" if len(s["procs"]) == 1 and s["procs"][0][0] == s["procs"][0][1]
                                       else "/".join(f"{a}..{b}" for a, b in s["procs"]))
        if n is not None:
            procs += " ok" if s["procs_ok"] else f" (expected {n})"
        print(f"| {c:<23} | {statistics.median(s['machine_procs']):>20.0f} | {statistics.median(s['ticks']):>5.0f} | "
              f"{1e6 * s['per_tick_s']:>7.1f} ({rounds_s:<17}) | "
              f"{'-' if n is None else f'{1e6 * extra:+.1f}':>17} | {'-' if n is None else f'{1e6 * extra / n:+.2f}':>19} | "
              f"{procs:>9} | {1e3 * s['startup_s']:>11.1f} | {s['maxrss_kib'] / 1024:>12.1f} | "
              f"{s['late']:>5}/{s['missed']:<5} |")
        s["following_per_tick_s"] = None if n is None else extra
        s["per_process_per_tick_s"] = None if n is None else extra / n

    # cost = fixed + per_process * N, least squares over the three sizes
    xs = list(SIZES)
    ys = [summary[f"follow {n}"]["following_per_tick_s"] for n in xs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    print()
    print(f"fit over N = {', '.join(map(str, xs))}: following costs {1e6 * a:+.1f} µs/tick + {1e6 * b:.2f} µs/tick per process "
          f"({1e6 * b * 100:.0f} µs/tick = {b * 100 / 0.01 * 100:.1f} % of a core at 10 ms for 100 processes)")
    fit = {"fixed_per_tick_s": a, "per_process_per_tick_s": b}

    quiet = summary[f"follow {CROWD_CASE}"]["following_per_tick_s"]
    crowded = summary[f"follow {CROWD_CASE} +{CROWD}"]["following_per_tick_s"]
    spread = max(max(s["per_tick_rounds_s"]) - min(s["per_tick_rounds_s"]) for s in summary.values())
    print()
    print(f"following {CROWD_CASE} processes: {1e6 * quiet:+.1f} µs/tick with the machine as is, "
          f"{1e6 * crowded:+.1f} µs/tick with {CROWD} more unrelated processes "
          f"(change {1e6 * (crowded - quiet):+.1f} µs/tick; largest spread between rounds of one case {1e6 * spread:.1f} µs/tick)")
    for c in cases:
        for m in meas[c]:
            for ln in m["stderr"]:
                print(f"note: {c} stderr: {ln}")

    straced = {}
    if not args.no_strace and shutil.which("strace"):
        straced = strace_check(gpumon, env, tmp)

    busy1, total1 = proc_stat_cpu()
    machine_busy = 100 * (busy1 - busy0) / max(1, total1 - total0)
    print(f"machine CPU busy during the run (all processes, all CPUs): {machine_busy:.1f} %   "
          f"load avg 1m before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    print(f"total wall time {time.monotonic() - t_start:.0f} s")
    if args.json:
        result = {
            "started_utc": started_wall.isoformat(timespec="seconds"),
            "machine": {"host": platform.node(), "cpus": os.cpu_count(), "platform": platform.platform()},
            "count": count, "rounds": rounds, "interval": "10ms", "crowd": CROWD,
            "summary": summary, "fit": fit, "strace": straced, "runs": meas, "machine_busy_pct": machine_busy,
            "load_before": load_before, "load_after": os.getloadavg(),
        }
        Path(args.json).write_text(json.dumps(portable(result), indent=1) + "\n")
        print(f"wrote {args.json}")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
