#!/usr/bin/env python3
"""Side-by-side benchmark of `gpumon record` against the recorders a user would otherwise run.

One run measures, on this machine:

1. CPU per tick and peak RSS of
   a. gpumon, host only (no loadable NVML), 100 ms for 60 s, to Parquet and to CSV;
   b. gpumon against the fake NVML (tests/fake-nvml) with 8 GPUs, same runs;
   c. sadc (sysstat) at 1 s for 60 samples, its default collection;
   d. the psutil loop (bench/peers/psutil_recorder.py) at 100 ms for 600 ticks.
   CPU = ru_utime + ru_stime and peak RSS = ru_maxrss of the finished child, from wait4() in
   a tiny C launcher (bench/rusage_exec.c, compiled on the fly): a child forked straight from
   Python would report Python's ~17 MiB as its ru_maxrss, because execve() keeps the old
   address space's high-water mark. The launcher's floor (/bin/true) is printed.
   Every tool is also run short (1 tick, 3 times, median), so
       steady-state CPU per tick = (cpu_long - cpu_short) / (ticks_long - ticks_short)
       start-up CPU              =  cpu_short - ticks_short * per_tick
2. Drift over 600 ticks at 100 ms: gpumon (CSV timestamps) next to a sleep-based loop
   (`sample; write time.time(); sleep(0.1)`, the way `nvidia-smi -l` works).
       drift   = (t_last - t_first) - (n - 1) * interval
       max dev = max |t_i - (t_0 + i * interval)|

Scheduling: the long runs go in three 60 s waves of processes that are >95 % idle
(gpumon host/Parquet + sadc + the drift pair; gpumon host/CSV + psutil; the two
8-GPU runs), so the full run takes about 3 minutes. rusage CPU is per process and
barely moves with this much concurrency; `--sequential` runs every long process on
its own (about 7 minutes) to check that.

usage: python3 bench/record.py [--quick] [--sequential] [--json OUT.json] [--keep DIR]
build first: cargo build --release && cargo build --release -p fake-nvml
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_GPUMON = REPO / "target" / "release" / "gpumon"
DEFAULT_FAKE = REPO / "target" / "release" / "libnvidia_ml.so"
DEFAULT_PSUTIL = REPO / "bench" / "peers" / "psutil_recorder.py"
DEFAULT_SADC = Path("/usr/lib/sysstat/sadc")
DEFAULT_NMON = Path("/usr/bin/nmon")
CGROUP_CPUACCT = Path("/sys/fs/cgroup/cpuacct")

INTERVAL_S = 0.1
RSS_TARGET_MIB = 15.0
SHORT_REPEATS = 3
NGPUS = 8

# The `nvidia-smi -l` pattern: sample, write, then sleep a fixed interval.
SLEEP_LOOP = r"""
import sys, time
from portable import portable
n, interval, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
with open(out, "w") as f:
    for i in range(n):
        with open("/proc/stat", "rb") as s:
            s.read()
        f.write(f"{time.time():.6f}\n")
        f.flush()
        if i + 1 < n:
            time.sleep(interval)
"""


# ---------------------------------------------------------------- processes


@dataclass
class Proc:
    """One measured child process."""

    label: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    wall_s: float = 0.0
    utime_s: float = 0.0
    stime_s: float = 0.0
    maxrss_kib: int = 0
    rc: int | None = None
    stderr: str = ""
    cgroup: bool = False  # measure with a cpuacct cgroup (tools that daemonize) instead of wait4
    # (seconds since start, cgroup CPU seconds) every 0.2 s of a cgroup run: the steady-state rate
    # without start-up and exit (see steady_per_tick)
    usage: list[tuple[float, float]] = field(default_factory=list)

    @property
    def cpu_s(self) -> float:
        return self.utime_s + self.stime_s


LAUNCHER: Path | None = None  # set by build_launcher()


def build_launcher(tmp: Path) -> Path:
    """Compile bench/rusage_exec.c (static if the toolchain can) so children fork from a ~1 MiB process."""
    src = Path(__file__).resolve().parent / "rusage_exec.c"
    exe = tmp / "rusage_exec"
    cc = os.environ.get("CC", "cc")
    for extra in (["-static"], []):
        r = subprocess.run([cc, "-O2", *extra, "-o", str(exe), str(src)], capture_output=True, text=True)
        if r.returncode == 0:
            return exe
    sys.exit(f"record.py: cannot build {src} with {cc}:\n{r.stderr}")


def run_wave(procs: list[Proc], workdir: Path) -> None:
    """Start every process at once through the launcher; each child's own rusage comes back in a file."""
    assert LAUNCHER is not None
    import threading

    threads = [threading.Thread(target=run_in_cgroup, args=(p, workdir)) for p in procs if p.cgroup]
    for t in threads:
        t.start()
    running: dict[int, tuple[Proc, subprocess.Popen, Path, Path]] = {}
    for i, p in enumerate(q for q in procs if not q.cgroup):
        tag = f"{p.label.replace(' ', '_').replace('/', '_').replace('>', '')}.{time.monotonic_ns()}.{i}"
        err, ruf = workdir / f"stderr.{tag}", workdir / f"rusage.{tag}"
        env = {**os.environ, **p.env}
        with open(err, "wb") as ef:
            child = subprocess.Popen(
                [str(LAUNCHER), str(ruf), *map(str, p.argv)], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=ef
            )
        running[child.pid] = (p, child, err, ruf)
    while running:
        pid, status, _ = os.wait4(-1, 0)
        if pid not in running:
            continue
        p, child, err, ruf = running.pop(pid)
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keep Popen from waiting again
        p.stderr = err.read_text(errors="replace")
        try:
            rc, ut, st, rss, wall = ruf.read_text().split()
        except (OSError, ValueError):
            sys.exit(f"record.py: no rusage from `{' '.join(map(str, p.argv))}` (launcher exit {child.returncode}):\n{p.stderr}")
        p.rc, p.utime_s, p.stime_s, p.maxrss_kib, p.wall_s = int(rc), float(ut), float(st), int(rss), float(wall)
    for t in threads:
        t.join()
    for p in procs:
        if p.rc != 0:
            sys.exit(f"record.py: `{' '.join(map(str, p.argv))}` exited {p.rc}:\n{p.stderr}")


# ---------------------------------------------------------------- tools


@dataclass
class Tool:
    """A recorder measured long and short; `ticks` reads the tick count back from its output."""

    name: str
    long_argv: list[str]
    short_argv: list[str]  # with {i} for a fresh output name
    env: dict[str, str]
    out_long: Path
    ticks_fn: object  # Callable[[Path], int]
    rows_per_tick: int = 1
    interval_s: float = INTERVAL_S
    long: Proc | None = None
    shorts: list[Proc] = field(default_factory=list)
    cgroup: bool = False


def gpumon_tool(name, gpumon, env, out, long_args, tmp, rows_per_tick, interval_s=INTERVAL_S, cgroup=False):
    suffix = out.suffix
    iv = f"{int(interval_s * 1000)}ms"
    return Tool(
        name=name,
        long_argv=[str(gpumon), "record", "-q", "-i", iv, *long_args, "-o", str(out)],
        short_argv=[str(gpumon), "record", "-q", "-i", iv, "--count", "1", "-o", str(tmp / f"{out.stem}.short{{i}}{suffix}")],
        env=env,
        out_long=out,
        ticks_fn=lambda path, r=rows_per_tick: gpumon_ticks(path, r),
        rows_per_tick=rows_per_tick,
        interval_s=interval_s,
        cgroup=cgroup,
    )


def nmon_snapshots(path: Path) -> int:
    with open(path, errors="replace") as f:
        return sum(1 for line in f if line.startswith("ZZZZ,"))


def run_in_cgroup(p: Proc, workdir: Path) -> None:
    """Run `p` in its own cpuacct cgroup until every process in it has exited (nmon forks into the
    background and its parent exits at once, so wait4 cannot see it). CPU = cpuacct.usage; peak RSS
    = the largest VmHWM read from /proc while it runs (every 0.2 s)."""
    cg = CGROUP_CPUACCT / f"gpumon-bench-{os.getpid()}-{time.monotonic_ns()}"
    cg.mkdir()
    try:
        t0 = time.monotonic()
        with open(workdir / f"stderr.{cg.name}", "wb") as ef:
            child = subprocess.Popen(
                ["sh", "-c", f'echo $$ > {cg}/cgroup.procs && exec "$@"', "sh", *map(str, p.argv)],
                env={**os.environ, **p.env}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=ef,
            )
            hwm = 0
            while True:
                # Poll while the child runs and then while anything is left in the cgroup (a daemon).
                if p.rc is None and child.poll() is not None:
                    p.rc = child.returncode
                pids = (cg / "cgroup.procs").read_text().split()
                if p.rc is not None and not pids:
                    break
                p.usage.append((time.monotonic() - t0, int((cg / "cpuacct.usage").read_text()) / 1e9))
                for pid in pids:
                    try:
                        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                            if line.startswith("VmHWM:"):
                                hwm = max(hwm, int(line.split()[1]))
                    except OSError:
                        pass
                time.sleep(0.2)
        p.wall_s = time.monotonic() - t0
        stat = dict(line.split() for line in (cg / "cpuacct.stat").read_text().splitlines())
        total = int((cg / "cpuacct.usage").read_text()) / 1e9
        user_share = int(stat["user"]) / max(1, int(stat["user"]) + int(stat["system"]))
        p.utime_s, p.stime_s = total * user_share, total * (1 - user_share)
        p.maxrss_kib = hwm
    finally:
        cg.rmdir()


# The steady-state window of a cgroup run: from STEADY_FROM s after the start to STEADY_TAIL s
# before the last reading.
STEADY_FROM, STEADY_TAIL = 10.0, 3.0


def steady_per_tick(p: Proc, interval_s: float) -> float | None:
    """CPU seconds per tick in the middle of a run, from the cgroup's CPU counter read while it runs:
    (usage(b) - usage(a)) / (b - a) * interval. Start-up and exit are outside the window, so a tool
    whose start-up varies by tens of ms (nmon: 80-90 ms) no longer swamps a per-sample cost of well
    under a millisecond, which (long - short) / (ticks - 1) divides by only ~60 ticks at 1 s."""
    if not p.usage:
        return None
    end = p.usage[-1][0] - STEADY_TAIL
    win = [u for u in p.usage if STEADY_FROM <= u[0] <= end]
    if len(win) < 2 or win[-1][0] - win[0][0] < 5.0:
        return None
    (ta, ua), (tb, ub) = win[0], win[-1]
    return (ub - ua) / (tb - ta) * interval_s


def gpumon_rows_and_ticks(path: Path) -> tuple[int, int]:
    if path.suffix == ".parquet":
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        t = pq.read_table(path, columns=["timestamp"])
        return t.num_rows, pc.count_distinct(t.column("timestamp")).as_py()
    with open(path, newline="") as f:
        rows = list(csv.reader(f))[1:]
    return len(rows), len({r[0] for r in rows})


def gpumon_ticks(path: Path, rows_per_tick: int) -> int:
    rows, ticks = gpumon_rows_and_ticks(path)
    if rows != ticks * rows_per_tick:
        print(f"  note: {path.name}: {rows} rows for {ticks} ticks (expected {rows_per_tick} per tick)")
    return ticks


def csv_lines(path: Path, header: int) -> int:
    with open(path, "rb") as f:
        return sum(1 for _ in f) - header


def sadc_records(path: Path) -> int:
    """Samples in a sadc file, read back with sadf (falls back to the requested count)."""
    try:
        out = subprocess.run(["sadf", "-d", str(path), "--", "-u"], capture_output=True, text=True, check=True).stdout
        # sadf prints one line per interval between two records: n records -> n - 1 lines.
        return sum(1 for line in out.splitlines() if line and not line.startswith("#") and "RESTART" not in line) + 1
    except (OSError, subprocess.CalledProcessError):
        return -1


def scenario_text(ngpus: int) -> str:
    """8 busy H100s, static values, every numeric key the fake knows (so every default field is queried)."""
    buses = [0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB]
    lines = [
        "# written by bench/record.py: 8 x H100 SXM in the middle of a training step",
        "init = ok",
        "driver_version = 550.54.15",
        "cuda_version = 12040",
        "nvml_version = 12.550.54.15",
        "",
    ]
    for i in range(ngpus):
        lines += [
            "[device]",
            "name = NVIDIA H100 80GB HBM3",
            f"uuid = GPU-{0x3F2A9C10 + i:08x}-7b4e-4c1d-9e2f-{0x5A1B2C3D4E50 + i:012x}",
            f"pci.bus_id = 00000000:{buses[i % len(buses)]:02X}:00.0",
            "memory.total = 81559",
            f"memory.used = {61234 + 37 * i}",
            "memory.reserved = 529",
            f"utilization.gpu = {93 + i % 5}",
            f"utilization.memory = {41 + i % 7}",
            f"temperature.gpu = {58 + i}",
            f"power.draw = {612.4 + 3.1 * i:.1f}",
            "power.limit = 700",
            f"energy.total = {123456789.0 + 1000 * i:.1f}",
            "clocks.sm = 1980",
            "clocks.mem = 2619",
            "clocks.gr = 1980",
            "clocks.video = 1755",
            f"fan.speed = {30 + i % 3}",
            "num_fans = 1",
            "pstate = 0",
            "clocks_event_reasons.active = 0x0",
            "utilization.encoder = 0",
            "utilization.decoder = 0",
            "pcie.tx = 10240",
            "pcie.rx = 20480",
            "ecc.errors.corrected.volatile.total = 0",
            "ecc.errors.uncorrected.volatile.total = 0",
            "ecc.errors.corrected.aggregate.total = 2",
            "ecc.errors.uncorrected.aggregate.total = 0",
            "persistence_mode = 1",
            "mig_mode = 0",
            f"processes = {41000 + i}:60416",
            "",
        ]
    return "\n".join(lines)


def empty_gpu_columns(path: Path) -> list[str]:
    """GPU columns of a gpumon CSV that are empty on every row (should be none with the scenario)."""
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        filled = [False] * len(header)
        for row in r:
            for j, v in enumerate(row):
                if v:
                    filled[j] = True
    gpu_first = header.index("index")
    header = [h.split(" [")[0] for h in header]  # older gpumon CSVs carried `name [unit]`
    gpu_last = header.index("cpu.util") if "cpu.util" in header else len(header)
    return [header[j] for j in range(gpu_first, gpu_last) if not filled[j]]


# ---------------------------------------------------------------- drift


def parse_ts(s: str) -> float:
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def gpumon_timestamps(path: Path) -> list[float]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))[1:]
    seen, out = set(), []
    for r in rows:
        if r[0] not in seen:
            seen.add(r[0])
            out.append(parse_ts(r[0]))
    return out


def loop_timestamps(path: Path) -> list[float]:
    return [float(x) for x in path.read_text().split()]


def drift_stats(ts: list[float], interval: float) -> dict:
    n = len(ts)
    devs = [t - (ts[0] + i * interval) for i, t in enumerate(ts)]
    gaps = [b - a for a, b in zip(ts, ts[1:])]
    return {
        "ticks": n,
        "drift_ms": ((ts[-1] - ts[0]) - (n - 1) * interval) * 1e3,
        "max_abs_dev_ms": max(abs(d) for d in devs) * 1e3,
        "p99_abs_dev_ms": sorted(abs(d) for d in devs)[min(n - 1, int(0.99 * n))] * 1e3,
        "mean_gap_ms": statistics.fmean(gaps) * 1e3,
        "max_gap_ms": max(gaps) * 1e3,
        "min_gap_ms": min(gaps) * 1e3,
        # deadlines skipped outright (gpumon skips a deadline that is over half an interval late)
        "skipped_slots": round((ts[-1] - ts[0]) / interval) - (n - 1),
    }


# ---------------------------------------------------------------- report


def proc_stat_cpu() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs, to tell whether the machine was quiet during the run."""
    with open("/proc/stat") as f:
        nums = [int(x) for x in f.readline().split()[1:9]]
    idle = nums[3] + nums[4]
    return sum(nums) - idle, sum(nums)


def mib(kib: int) -> float:
    return kib / 1024.0


def summarize(tool: Tool) -> dict:
    long = tool.long
    assert long is not None
    ticks_long = tool.ticks_fn(tool.out_long)
    short_cpu = statistics.median(p.cpu_s for p in tool.shorts)
    ticks_short = 1
    per_tick = (long.cpu_s - short_cpu) / (ticks_long - ticks_short)
    startup = short_cpu - ticks_short * per_tick
    size = tool.out_long.stat().st_size
    steady = steady_per_tick(long, tool.interval_s)
    return {
        "tool": tool.name,
        "command": " ".join(long.argv),
        "env": tool.env,
        "ticks_long": ticks_long,
        "ticks_short": ticks_short,
        "interval_s": tool.interval_s,
        "wall_long_s": long.wall_s,
        "cpu_long_s": long.cpu_s,
        "utime_long_s": long.utime_s,
        "stime_long_s": long.stime_s,
        "cpu_short_s": [p.cpu_s for p in tool.shorts],
        "cpu_short_median_s": short_cpu,
        "cpu_per_tick_ms": per_tick * 1e3,
        "cpu_pct_of_core": 100 * per_tick / tool.interval_s,
        "steady_cpu_per_tick_ms": steady * 1e3 if steady is not None else None,
        "startup_cpu_ms": startup * 1e3,
        "peak_rss_mib": mib(long.maxrss_kib),
        "peak_rss_short_mib": max(mib(p.maxrss_kib) for p in tool.shorts),
        "output_bytes": size,
        "bytes_per_tick": size / ticks_long,
        "stderr": long.stderr.strip().splitlines(),
    }


def print_table(rows: list[dict]) -> None:
    hdr = ["recorder", "ticks", "CPU/tick ms", "steady ms", "% core", "start-up ms", "CPU long s", "peak RSS MiB", "bytes/tick"]
    body = [
        [
            r["tool"],
            f"{r['ticks_long']} @ {r['interval_s']:g}s",
            f"{r['cpu_per_tick_ms']:.3f}",
            f"{r['steady_cpu_per_tick_ms']:.3f}" if r["steady_cpu_per_tick_ms"] is not None else "-",
            f"{r['cpu_pct_of_core']:.2f}",
            f"{r['startup_cpu_ms']:.1f}",
            f"{r['cpu_long_s']:.3f}",
            f"{r['peak_rss_mib']:.1f}",
            f"{r['bytes_per_tick']:.0f}",
        ]
        for r in rows
    ]
    w = [max(len(x) for x in col) for col in zip(hdr, *body)]
    line = lambda cells: "| " + " | ".join(c.ljust(w[j]) if j == 0 else c.rjust(w[j]) for j, c in enumerate(cells)) + " |"
    print(line(hdr))
    print("|" + "|".join("-" * (x + 2) for x in w) + "|")
    for b in body:
        print(line(b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="durations divided by 6 (smoke run, ~40 s)")
    ap.add_argument("--sequential", action="store_true", help="run every long process alone (no waves)")
    ap.add_argument("--json", metavar="OUT", help="write every figure as JSON")
    ap.add_argument("--keep", metavar="DIR", help="keep outputs and the scenario in DIR (default: a temp dir, removed)")
    ap.add_argument("--gpumon", default=str(DEFAULT_GPUMON))
    ap.add_argument("--fake-nvml", default=str(DEFAULT_FAKE))
    ap.add_argument("--psutil-recorder", default=str(DEFAULT_PSUTIL))
    ap.add_argument("--sadc", default=str(DEFAULT_SADC))
    ap.add_argument("--nmon", default=str(DEFAULT_NMON), help="nmon binary ('' to leave nmon out)")
    ap.add_argument("--gpumon-before", help="an older gpumon binary measured host-only in the same waves")
    args = ap.parse_args()

    for what, p in [("gpumon", args.gpumon), ("fake NVML", args.fake_nvml), ("psutil recorder", args.psutil_recorder), ("sadc", args.sadc)]:
        if not Path(p).exists():
            sys.exit(f"record.py: {what} not found at {p}; build with `cargo build --release && cargo build --release -p fake-nvml`")

    div = 6 if args.quick else 1
    secs = 60 // div  # 60 s / 10 s
    ticks = 600 // div  # 600 / 100 ticks at 100 ms
    samples = 60 // div  # sadc samples at 1 s

    if args.keep:
        tmp = Path(args.keep).resolve()
        tmp.mkdir(parents=True, exist_ok=True)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="gpumon-bench-"))
    started = time.monotonic()
    load_before = os.getloadavg()
    busy0, total0 = proc_stat_cpu()
    started_wall = dt.datetime.now(dt.timezone.utc)

    global LAUNCHER
    LAUNCHER = build_launcher(tmp)
    floor = Proc("rss floor", ["/bin/true"])
    run_wave([floor], tmp)

    scenario = tmp / "scenario-8gpu.txt"
    scenario.write_text(scenario_text(NGPUS))
    no_nvml = {"GPUMON_NVML_LIB": str(tmp / "no-such-dir" / "libnvidia-ml.so.1")}
    fake = {"GPUMON_NVML_LIB": str(Path(args.fake_nvml).resolve()), "FAKE_NVML_SCENARIO": str(scenario)}
    dur = ["--duration", f"{secs}s"]
    # The tools at 1 s run in cpuacct cgroups (as nmon must): their CPU counter is read while they run,
    # for the steady-state figure (steady_per_tick).
    cg1 = CGROUP_CPUACCT.is_dir()

    host_pq = gpumon_tool("gpumon host-only -> parquet", args.gpumon, no_nvml, tmp / "host.parquet", dur, tmp, 1)
    host_csv = gpumon_tool("gpumon host-only -> csv", args.gpumon, no_nvml, tmp / "host.csv", dur, tmp, 1)
    fake_pq = gpumon_tool(f"gpumon fake {NGPUS} GPUs -> parquet", args.gpumon, fake, tmp / "fake8.parquet", dur, tmp, NGPUS)
    fake_csv = gpumon_tool(f"gpumon fake {NGPUS} GPUs -> csv", args.gpumon, fake, tmp / "fake8.csv", dur, tmp, NGPUS)
    sadc = Tool(
        name="sadc (sysstat, default)",
        long_argv=[args.sadc, "1", str(samples), str(tmp / "sa.long")],
        short_argv=[args.sadc, "1", "1", str(tmp / "sa.short{i}")],
        env={},
        out_long=tmp / "sa.long",
        ticks_fn=lambda p: (lambda n: n if n > 0 else samples)(sadc_records(p)),
        interval_s=1.0,
        cgroup=cg1,
    )
    psu = Tool(
        name="psutil loop (python)",
        long_argv=[sys.executable, args.psutil_recorder, str(INTERVAL_S), str(ticks), str(tmp / "psutil.csv")],
        short_argv=[sys.executable, args.psutil_recorder, str(INTERVAL_S), "1", str(tmp / "psutil.short{i}.csv")],
        env={},
        out_long=tmp / "psutil.csv",
        ticks_fn=lambda p: csv_lines(p, 1),
    )
    # The same recorders at 1 s (nmon cannot sample faster), side by side with nmon and sadc.
    dur1 = ["--duration", f"{samples}s"]
    host_pq1 = gpumon_tool("gpumon host-only -> parquet @1s", args.gpumon, no_nvml, tmp / "host1.parquet", dur1, tmp, 1, 1.0, cg1)
    host_csv1 = gpumon_tool("gpumon host-only -> csv @1s", args.gpumon, no_nvml, tmp / "host1.csv", dur1, tmp, 1, 1.0, cg1)
    psu1 = Tool(
        name="psutil loop (python) @1s",
        long_argv=[sys.executable, args.psutil_recorder, "1.0", str(samples), str(tmp / "psutil1.csv")],
        short_argv=[sys.executable, args.psutil_recorder, "1.0", "1", str(tmp / "psutil1.short{i}.csv")],
        env={},
        out_long=tmp / "psutil1.csv",
        ticks_fn=lambda p: csv_lines(p, 1),
        interval_s=1.0,
        cgroup=cg1,
    )
    extra = [host_pq1, host_csv1, psu1]
    nmon = None
    if args.nmon and Path(args.nmon).exists() and CGROUP_CPUACCT.is_dir():
        nmon = Tool(
            name="nmon (default collection) @1s",
            long_argv=[args.nmon, "-F", str(tmp / "long.nmon"), "-s", "1", "-c", str(samples)],
            short_argv=[args.nmon, "-F", str(tmp / "short{i}.nmon"), "-s", "1", "-c", "1"],
            env={},
            out_long=tmp / "long.nmon",
            ticks_fn=nmon_snapshots,
            interval_s=1.0,
            cgroup=True,
        )
        extra.append(nmon)
    before = []
    if args.gpumon_before:
        before = [
            gpumon_tool("gpumon BEFORE host-only -> parquet", args.gpumon_before, no_nvml, tmp / "before.parquet", dur, tmp, 1),
            gpumon_tool("gpumon BEFORE host-only -> csv", args.gpumon_before, no_nvml, tmp / "before.csv", dur, tmp, 1),
            gpumon_tool("gpumon BEFORE host-only -> parquet @1s", args.gpumon_before, no_nvml, tmp / "before1.parquet", dur1,
                        tmp, 1, 1.0, cg1),
        ]
    tools = [host_pq, host_csv, fake_pq, fake_csv, sadc, psu, *extra, *before]

    drift_gpumon = Proc(
        "drift gpumon",
        [args.gpumon, "record", "-q", "-i", "100ms", "--count", str(ticks), "-o", str(tmp / "drift-gpumon.csv")],
        no_nvml,
    )
    drift_loop = Proc(
        "drift sleep loop", [sys.executable, "-c", SLEEP_LOOP, str(ticks), str(INTERVAL_S), str(tmp / "drift-loop.txt")]
    )

    host = platform.node()
    print(f"gpumon record benchmark  {started_wall:%Y-%m-%d %H:%M} UTC  host {host}  {os.cpu_count()} CPUs  "
          f"{platform.platform()}  python {platform.python_version()}")
    print(f"work dir {tmp}{'  (quick: durations / 6)' if args.quick else ''}")

    # Short runs: start-up cost. One at a time, each tool SHORT_REPEATS times, interleaved.
    print(f"short runs (1 tick, x{SHORT_REPEATS}) ...", flush=True)
    for i in range(SHORT_REPEATS):
        for t in tools:
            p = Proc(t.name + " short", [a.replace("{i}", str(i)) for a in t.short_argv], t.env, cgroup=t.cgroup)
            run_wave([p], tmp)
            t.shorts.append(p)

    # Long runs.
    for t in tools:
        t.long = Proc(t.name, t.long_argv, t.env, cgroup=t.cgroup)
    if args.sequential:
        waves = [[t.long] for t in tools] + [[drift_gpumon, drift_loop]]
    else:
        waves = [
            [host_pq.long, host_csv.long, sadc.long, drift_gpumon, drift_loop, *(t.long for t in before[:2])],
            [psu.long, *(t.long for t in extra), *(t.long for t in before[2:])],
            [fake_pq.long, fake_csv.long],
        ]
    for k, wave in enumerate(waves, 1):
        print(f"wave {k}/{len(waves)} ({secs} s): " + ", ".join(p.label for p in wave), flush=True)
        run_wave(wave, tmp)

    busy1, total1 = proc_stat_cpu()
    machine_busy_pct = 100.0 * (busy1 - busy0) / max(1, total1 - total0)
    load_after = os.getloadavg()
    rows = [summarize(t) for t in tools]
    by = {t.name: r for t, r in zip(tools, rows)}
    hp, hc, fp, fc, sd, ps = (by[t.name] for t in tools[:6])
    hp1, hc1, ps1 = by[host_pq1.name], by[host_csv1.name], by[psu1.name]
    nm = by[nmon.name] if nmon else None

    d_gpumon = drift_stats(gpumon_timestamps(tmp / "drift-gpumon.csv"), INTERVAL_S)
    d_loop = drift_stats(loop_timestamps(tmp / "drift-loop.txt"), INTERVAL_S)
    d_gpumon.update(cpu_s=drift_gpumon.cpu_s, peak_rss_mib=mib(drift_gpumon.maxrss_kib), stderr=drift_gpumon.stderr.strip().splitlines())
    d_loop.update(cpu_s=drift_loop.cpu_s, peak_rss_mib=mib(drift_loop.maxrss_kib))

    empty_cols = empty_gpu_columns(tmp / "fake8.csv")

    ratios = {
        "gpumon_host_parquet_per_tick_over_sadc_per_sample": hp["cpu_per_tick_ms"] / sd["cpu_per_tick_ms"],
        "gpumon_host_csv_per_tick_over_sadc_per_sample": hc["cpu_per_tick_ms"] / sd["cpu_per_tick_ms"],
        "gpumon_host_parquet_per_tick_over_psutil_per_tick": hp["cpu_per_tick_ms"] / ps["cpu_per_tick_ms"],
        "gpumon_host_csv_per_tick_over_psutil_per_tick": hc["cpu_per_tick_ms"] / ps["cpu_per_tick_ms"],
        "gpumon_fake8_parquet_per_tick_over_psutil_per_tick": fp["cpu_per_tick_ms"] / ps["cpu_per_tick_ms"],
        "gpumon_startup_over_psutil_startup": hp["startup_cpu_ms"] / ps["startup_cpu_ms"],
        "gpumon_peak_rss_over_target": {r["tool"]: r["peak_rss_mib"] / RSS_TARGET_MIB for r in (hp, hc, fp, fc)},
        "gpumon_peak_rss_over_psutil": hp["peak_rss_mib"] / ps["peak_rss_mib"],
        "at_1s": {
            "gpumon_parquet_over_psutil": hp1["cpu_per_tick_ms"] / ps1["cpu_per_tick_ms"],
            "gpumon_csv_over_psutil": hc1["cpu_per_tick_ms"] / ps1["cpu_per_tick_ms"],
            "gpumon_parquet_over_nmon": hp1["cpu_per_tick_ms"] / nm["cpu_per_tick_ms"] if nm else None,
            "gpumon_csv_over_nmon": hc1["cpu_per_tick_ms"] / nm["cpu_per_tick_ms"] if nm else None,
            "gpumon_parquet_over_sadc": hp1["cpu_per_tick_ms"] / sd["cpu_per_tick_ms"],
        },
        # The same at 1 s from the steady-state window (cgroup CPU read while running; None without it).
        "at_1s_steady": {
            f"gpumon_{fmt}_over_{peer}": ours["steady_cpu_per_tick_ms"] / theirs["steady_cpu_per_tick_ms"]
            if theirs and ours["steady_cpu_per_tick_ms"] and theirs["steady_cpu_per_tick_ms"] else None
            for fmt, ours in (("parquet", hp1), ("csv", hc1))
            for peer, theirs in (("nmon", nm), ("sadc", sd), ("psutil", ps1))
        },
        "startup": {
            "gpumon_parquet_over_sadc": hp["startup_cpu_ms"] / sd["startup_cpu_ms"],
            "gpumon_csv_over_sadc": hc["startup_cpu_ms"] / sd["startup_cpu_ms"],
            "gpumon_parquet_over_nmon": hp["startup_cpu_ms"] / nm["startup_cpu_ms"] if nm else None,
        },
    }
    if before:
        bp, bc = by[before[0].name], by[before[1].name]
        ratios["after_over_before"] = {
            "parquet_cpu_per_tick": hp["cpu_per_tick_ms"] / bp["cpu_per_tick_ms"],
            "csv_cpu_per_tick": hc["cpu_per_tick_ms"] / bc["cpu_per_tick_ms"],
            "parquet_startup": hp["startup_cpu_ms"] / bp["startup_cpu_ms"],
            "csv_startup": hc["startup_cpu_ms"] / bc["startup_cpu_ms"],
            "parquet_cpu_per_tick_at_1s": hp1["cpu_per_tick_ms"] / by[before[2].name]["cpu_per_tick_ms"],
        }

    print()
    print(f"peak RSS floor of the launcher (/bin/true): {mib(floor.maxrss_kib):.2f} MiB")
    print(f"CPU = ru_utime + ru_stime of the finished child; per tick = (long - median of {SHORT_REPEATS} x 1-tick) / (ticks - 1); "
          f"start-up = 1-tick run minus one tick")
    print(f"steady = the @1s runs' cgroup CPU counter read every 0.2 s while running: its rate from {STEADY_FROM:g} s after the "
          f"start to {STEADY_TAIL:g} s before the end, times the interval")
    print_table(rows)
    print()
    print("ratios")
    print(f"  gpumon host-only CPU/tick / sadc CPU/sample : parquet {ratios['gpumon_host_parquet_per_tick_over_sadc_per_sample']:.2f}x   "
          f"csv {ratios['gpumon_host_csv_per_tick_over_sadc_per_sample']:.2f}x   (sadc samples 1/s and collects far more)")
    print(f"  gpumon host-only CPU/tick / psutil CPU/tick : parquet {ratios['gpumon_host_parquet_per_tick_over_psutil_per_tick']:.2f}x   "
          f"csv {ratios['gpumon_host_csv_per_tick_over_psutil_per_tick']:.2f}x   (same 100 ms rate)")
    print(f"  gpumon 8 fake GPUs (parquet) / psutil       : {ratios['gpumon_fake8_parquet_per_tick_over_psutil_per_tick']:.2f}x")
    print(f"  gpumon start-up CPU / psutil start-up CPU   : {ratios['gpumon_startup_over_psutil_startup']:.3f}x")
    for k, v in ratios["at_1s"].items():
        print(f"  @1s {k:40s}: " + (f"{v:.3f}x" if v is not None else "-"))
    for k, v in ratios["at_1s_steady"].items():
        print(f"  @1s steady {k:33s}: " + (f"{v:.3f}x" if v is not None else "-"))
    for k, v in ratios["startup"].items():
        print(f"  start-up {k:35s}: " + (f"{v:.3f}x" if v is not None else "-"))
    for k, v in ratios.get("after_over_before", {}).items():
        print(f"  after / before {k:29s}: {v:.3f}x")
    for name, v in ratios["gpumon_peak_rss_over_target"].items():
        r = by[name]
        verdict = "within" if v <= 1 else "OVER"
        print(f"  peak RSS {name:32s}: {r['peak_rss_mib']:.1f} MiB = {v:.2f} x {RSS_TARGET_MIB:g} MiB target ({verdict})")
    print(f"  gpumon host-only peak RSS / psutil peak RSS : {ratios['gpumon_peak_rss_over_psutil']:.2f}x")
    print()
    print(f"drift, {ticks} ticks at {INTERVAL_S * 1e3:.0f} ms (run concurrently; gpumon stamps have 1 ms resolution)")
    for name, d in [("gpumon --count", d_gpumon), ("sleep loop (nvidia-smi -l style)", d_loop)]:
        print(f"  {name:33s}: ticks {d['ticks']}  drift {d['drift_ms']:+8.1f} ms  max |dev| {d['max_abs_dev_ms']:7.1f} ms  p99 |dev| {d['p99_abs_dev_ms']:7.1f} ms  "
              f"gap mean {d['mean_gap_ms']:.2f} / min {d['min_gap_ms']:.1f} / max {d['max_gap_ms']:.1f} ms"
              + (f"  ({d['skipped_slots']} deadline(s) skipped: drift and dev count them)" if d["skipped_slots"] else ""))
    print()
    notes = []
    if empty_cols:
        notes.append(f"fake 8-GPU CSV: GPU columns empty on every row: {', '.join(empty_cols)}")
    else:
        notes.append("fake 8-GPU CSV: every default GPU column filled")
    expected = "recording host metrics only"  # the one warning a host-only run should print
    for r in rows + [{"tool": "drift gpumon", **d_gpumon}]:
        lines = [x for x in r.get("stderr", []) if expected not in x]
        if lines:
            notes.append(f"{r['tool']} stderr: " + " | ".join(lines[:3]) + (" ..." if len(lines) > 3 else ""))
    host_warn = [len([x for x in r["stderr"] if expected in x]) for r in (hp, hc)] + [len([x for x in d_gpumon["stderr"] if expected in x])]
    notes.append(f"host-only gpumon runs printed {host_warn} 'no NVML' warnings (1 each expected)")
    for n in notes:
        print(f"note: {n}")
    total = time.monotonic() - started
    print(f"machine CPU busy during the run (all processes, all {os.cpu_count()} CPUs): {machine_busy_pct:.1f} %   "
          f"load avg 1m before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    print(f"total wall time {total:.0f} s")

    if args.json:
        out = {
            "date_utc": started_wall.isoformat(timespec="seconds"),
            "host": host,
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
            "quick": args.quick,
            "sequential": args.sequential,
            "rss_target_mib": RSS_TARGET_MIB,
            "rss_floor_mib": mib(floor.maxrss_kib),
            "recorders": rows,
            "ratios": ratios,
            "drift": {"interval_s": INTERVAL_S, "gpumon": d_gpumon, "sleep_loop": d_loop},
            "fake_empty_gpu_columns": empty_cols,
            "scenario": scenario.read_text(),
            "total_wall_s": total,
            "machine_busy_pct": machine_busy_pct,
            "loadavg_before": load_before,
            "loadavg_after": load_after,
        }
        Path(args.json).write_text(json.dumps(portable(out), indent=2) + "\n")
        print(f"wrote {args.json}")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
