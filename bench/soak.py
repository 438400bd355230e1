#!/usr/bin/env python3
"""Soak test of `gpumon record` for weeks-long recording: a million ticks in one process.

Part 1, soak. One gpumon against the fake NVML (2 GPUs, a scenario the script writes):

    gpumon record -q -v -i 1ms --count 1000000 --rotate-size 8MiB --keep 5 --flush 1s -o soak.parquet

At 1 ms (the shortest interval gpumon accepts) a million ticks is about 17 minutes of
wall time and as many ticks as 11.6 days at 1 s or 1.9 years at 60 s. While it runs, the
script reads gpumon's /proc/PID/status (VmRSS, VmHWM, Threads) and counts /proc/PID/fd every
few seconds, and sums the bytes in the output directory (hidden .partial and .journal files
included). It reports RSS at 5 % (after warm-up), 50 % and 100 % of the run, the maximum, and
the slope of a straight line fitted to RSS over the run after warm-up, which is 0 when memory
is flat. CPU is ru_utime + ru_stime of the finished child (bench/rusage_exec.c). The tick count
comes from gpumon's own `-v` line `N ticks written to ...`: ticks the scheduler skips as missed
are not counted, and `--count` keeps going until N ticks are written.

Part 2, flush cost. The same gpumon (2 fake GPUs, Parquet) for 100,000 ticks with
`--flush 1s` next to `--flush 1h`. A flush drains the buffered rows into the Parquet writer and
the journal and fsyncs the journal; with 1h that happens only at close (the journal is still
appended, unsynced, every 1024 rows). Part 2 runs without rotation by default: when a Parquet
piece reaches the size estimate depends on the flush pattern, so with rotation on the two
settings rotate a different number of times (`--flush-rotate` turns it on anyway). The two
settings run at the same time, in pairs (`--pairs`, default 2), so they see the same machine.
Reported:
    per tick  = median(CPU 1s) / ticks - median(CPU 1h) / ticks
    per flush = (median CPU 1s - median CPU 1h) / (flushes 1s - flushes 1h)
and the same difference for the writer thread alone (where the flush runs), from
/proc/PID/task/TID/schedstat sampled every 0.5 s. The number of flushes is the count of `-v`
lines `gpumon: flushed through ...`. The spread between pairs of one setting is printed as the
noise to hold the difference against.

usage: python3 bench/soak.py [--quick] [--json OUT.json] [--keep DIR] [--ticks N] [--format csv]
                             [--skip-soak | --skip-flush] [--flush-rotate] [--pairs N]
build first: cargo build --release && cargo build --release -p fake-nvml
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import build_launcher, proc_stat_cpu  # noqa: E402  (same directory)
from portable import portable  # noqa: E402  (results without this machine's paths)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_GPUMON = REPO / "target" / "release" / "gpumon"
DEFAULT_FAKE = REPO / "target" / "release" / "libnvidia_ml.so"

ROTATE = ["--rotate-size", "8MiB", "--keep", "5"]
WARMUP_FRACTION = 0.05

TICKS_RE = re.compile(r"gpumon: (\d+) ticks written to")
SUMMARY_RE = re.compile(
    r"(\d+) ticks recorded, (\d+) samples late, (\d+) ticks missed, (\d+) dropped by a full queue, (\d+) lost to write errors"
)


def scenario_text() -> str:
    """2 busy H100s with static values for every key the default fields read."""
    lines = ["# written by bench/soak.py: 2 x H100 SXM in a training step", "init = ok", ""]
    for i in range(2):
        lines += [
            "[device]",
            "name = NVIDIA H100 80GB HBM3",
            f"uuid = GPU-{0x51A0C000 + i:08x}-1111-2222-3333-{0x444455556660 + i:012x}",
            f"pci.bus_id = 00000000:{0x18 + 0x12 * i:02X}:00.0",
            "memory.total = 81559",
            f"memory.used = {61234 + 37 * i}",
            "memory.reserved = 529",
            f"utilization.gpu = {95 + i}",
            "utilization.memory = 41",
            f"temperature.gpu = {58 + i}",
            f"power.draw = {612.4 + 3.1 * i:.1f}",
            "power.limit = 700",
            f"energy.total = {123456789.0 + 1000 * i:.1f}",
            "clocks.sm = 1980",
            "clocks.mem = 2619",
            "fan.speed = 30",
            "num_fans = 1",
            "pstate = 0",
            "clocks_event_reasons.active = 0x0",
            "utilization.encoder = 0",
            "utilization.decoder = 0",
            "ecc.errors.uncorrected.volatile.total = 0",
            "persistence_mode = 1",
            "mig_mode = 0",
            "",
        ]
    return "\n".join(lines)


# ---------------------------------------------------------------- one gpumon process


@dataclass
class Run:
    label: str
    argv: list[str]
    out_dir: Path
    rc: int | None = None
    utime_s: float = 0.0
    stime_s: float = 0.0
    maxrss_kib: int = 0
    wall_s: float = 0.0
    ticks: int = 0
    late: int = 0
    missed: int = 0
    dropped: int = 0
    lost: int = 0
    flushes: int = 0
    files_opened: int = 0
    hang_warnings: int = 0
    stderr_other: list[str] = field(default_factory=list)
    samples: list[dict] = field(default_factory=list)  # RSS sampler, soak only

    @property
    def cpu_s(self) -> float:
        return self.utime_s + self.stime_s


class Launched:
    """A gpumon started through rusage_exec; `pid` is gpumon's own PID (the launcher's child)."""

    def __init__(self, run: Run, launcher: Path, env: dict[str, str], work: Path):
        self.run = run
        tag = run.label.replace(" ", "_")
        self.err_path, self.ru_path = work / f"stderr.{tag}", work / f"rusage.{tag}"
        with open(self.err_path, "wb") as ef:
            self.popen = subprocess.Popen(
                [str(launcher), str(self.ru_path), *run.argv],
                env={**os.environ, **env},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=ef,
            )
        self.pid = None
        children = Path(f"/proc/{self.popen.pid}/task/{self.popen.pid}/children")
        for _ in range(2000):
            try:
                kids = children.read_text().split()
            except OSError:
                kids = []
            if kids:
                self.pid = int(kids[0])
                break
            if self.popen.poll() is not None:
                break
            time.sleep(0.005)

    def finish(self) -> Run:
        self.popen.wait()
        r = self.run
        text = self.err_path.read_text(errors="replace")
        try:
            rc, ut, st, rss, wall = self.ru_path.read_text().split()
        except (OSError, ValueError):
            sys.exit(f"soak.py: no rusage from {r.label} (launcher exit {self.popen.returncode}):\n{text[-3000:]}")
        r.rc, r.utime_s, r.stime_s, r.maxrss_kib, r.wall_s = int(rc), float(ut), float(st), int(rss), float(wall)
        if r.rc != 0:
            sys.exit(f"soak.py: {r.label} exited {r.rc}:\n{text[-3000:]}")
        parse_stderr(r, text)
        return r


def parse_stderr(r: Run, text: str) -> None:
    for line in text.splitlines():
        if line.startswith("gpumon: flushed through "):
            r.flushes += 1
        elif line.startswith("gpumon: writing "):
            r.files_opened += 1
        elif m := TICKS_RE.search(line):
            r.ticks = int(m.group(1))
        elif m := SUMMARY_RE.search(line):
            r.late, r.missed, r.dropped, r.lost = (int(m.group(i)) for i in (2, 3, 4, 5))
        elif "did not answer within" in line:
            r.hang_warnings += 1
            r.stderr_other.append(line)
        elif not line.startswith("gpumon: recording GPU") and "such rates are meant for benchmarks" not in line:
            r.stderr_other.append(line)
    if r.ticks == 0:
        sys.exit(f"soak.py: no `N ticks written` line from {r.label} (is -v on?):\n{text[-3000:]}")


def dir_bytes(d: Path) -> tuple[int, int, int]:
    """Total bytes, number of files, and bytes of Parquet journals in d (hidden .partial/.journal included)."""
    total = n = journal = 0
    try:
        for e in os.scandir(d):
            try:
                size = e.stat(follow_symlinks=False).st_size
            except OSError:
                continue
            total += size
            n += 1
            if e.name.endswith(".journal"):
                journal += size
    except OSError:
        pass
    return total, n, journal


def sample_proc(pid: int) -> dict | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    d = {}
    for line in status.splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            d[k] = int(v.split()[0])
        elif k == "Threads":
            d[k] = int(v)
    d["fds"] = fds
    d["thread_ns"] = thread_cpu_ns(pid)
    return d


def thread_cpu_ns(pid: int) -> dict[str, int]:
    """CPU time (ns, from schedstat) of each of gpumon's threads, summed by thread name (main = "main")."""
    out: dict[str, int] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            name = "main" if tid == str(pid) else Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
            ns = int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        out[name] = out.get(name, 0) + ns
    return out


def thread_rates(samples: list[dict], from_frac: float = 0.1) -> dict[str, float]:
    """CPU seconds per second of run of each thread, between from_frac of the run and the last sample."""
    if len(samples) < 2:
        return {}
    t_end = samples[-1]["t"]
    a = next((x for x in samples if x["t"] >= from_frac * t_end), samples[0])
    b = samples[-1]
    dt_s = b["t"] - a["t"]
    if dt_s <= 0:
        return {}
    return {k: (b["thread_ns"].get(k, 0) - a["thread_ns"].get(k, 0)) / 1e9 / dt_s for k in b["thread_ns"]}


def smaps_by_mapping(pid: int) -> dict[str, int] | None:
    """Resident KiB per mapped file (anonymous mappings as "[anon]"), largest first: what RssFile is."""
    try:
        text = Path(f"/proc/{pid}/smaps").read_text()
    except OSError:
        return None
    out: dict[str, int] = {}
    name = "[anon]"
    for line in text.splitlines():
        parts = line.split()
        if parts and "-" in parts[0] and len(parts) >= 5 and ":" in parts[3]:
            name = parts[5] if len(parts) >= 6 else "[anon]"
        elif parts and parts[0] == "Rss:":
            out[name] = out.get(name, 0) + int(parts[1])
    return dict(sorted(((k, v) for k, v in out.items() if v), key=lambda kv: -kv[1]))


def sampler(l: Launched, every_s: float, stop: threading.Event) -> None:
    t0 = time.monotonic()
    while not stop.is_set() and l.pid is not None:
        s = sample_proc(l.pid)
        if s is None:
            break
        # Where the resident memory is, every 10th sample (the report shows the last one taken).
        if len(l.run.samples) % 10 == 0 and (m := smaps_by_mapping(l.pid)) is not None:
            s["smaps_kib"] = m
        s["t"] = round(time.monotonic() - t0, 3)
        s["dir_bytes"], s["dir_files"], s["journal_bytes"] = dir_bytes(l.run.out_dir)
        l.run.samples.append(s)
        stop.wait(every_s)


# ---------------------------------------------------------------- reports


def at_fraction(samples: list[dict], frac: float) -> dict:
    """The sample nearest frac of the run's sampled time span."""
    t_end = samples[-1]["t"]
    return min(samples, key=lambda s: abs(s["t"] - frac * t_end))


def slope_per_s(samples: list[dict], key: str) -> float:
    pts = [(s["t"], s[key]) for s in samples]
    n = len(pts)
    if n < 3:
        return 0.0
    mt = sum(t for t, _ in pts) / n
    mv = sum(v for _, v in pts) / n
    den = sum((t - mt) ** 2 for t, _ in pts)
    return 0.0 if den == 0 else sum((t - mt) * (v - mv) for t, v in pts) / den


def mib(kib: float) -> float:
    return kib / 1024


def soak_summary(r: Run, interval_s: float) -> dict:
    s = r.samples
    warm = [x for x in s if x["t"] >= WARMUP_FRACTION * s[-1]["t"]]
    start, mid, end = at_fraction(s, WARMUP_FRACTION), at_fraction(s, 0.5), s[-1]
    p10 = at_fraction(s, 0.1)
    return {
        "ticks": r.ticks,
        "wall_s": r.wall_s,
        "ticks_per_s": r.ticks / r.wall_s,
        "equivalent_days_at_1s": r.ticks / 86400,
        "equivalent_days_at_60s": r.ticks * 60 / 86400,
        "cpu_s": r.cpu_s,
        "utime_s": r.utime_s,
        "stime_s": r.stime_s,
        "cpu_per_tick_ms": 1000 * r.cpu_s / r.ticks,
        "pct_core_at_interval": 100 * r.cpu_s / r.ticks / interval_s,
        "rss_kib": {"start": start["VmRSS"], "p10": p10["VmRSS"], "mid": mid["VmRSS"], "end": end["VmRSS"],
                    "max_sampled": max(x["VmRSS"] for x in s), "min_after_warmup": min(x["VmRSS"] for x in warm)},
        "rss_at_s": {"start": start["t"], "p10": p10["t"], "mid": mid["t"], "end": end["t"]},
        "rss_anon_kib": {"p10": p10.get("RssAnon"), "mid": mid.get("RssAnon"), "end": end.get("RssAnon")},
        "rss_file_kib": {"p10": p10.get("RssFile"), "mid": mid.get("RssFile"), "end": end.get("RssFile")},
        "smaps_kib_last": next((x["smaps_kib"] for x in reversed(s) if "smaps_kib" in x), None),
        "rss_slope_kib_per_100k_ticks_after_warmup": slope_per_s(warm, "VmRSS") * 100_000 * r.wall_s / r.ticks,
        "rss_slope_kib_per_100k_ticks_second_half": slope_per_s([x for x in s if x["t"] >= 0.5 * s[-1]["t"]], "VmRSS")
        * 100_000 * r.wall_s / r.ticks,
        "vm_hwm_kib_end": end.get("VmHWM"),
        "ru_maxrss_kib": r.maxrss_kib,
        "threads": sorted({x.get("Threads") for x in s}),
        "fds": {"min": min(x["fds"] for x in s), "max": max(x["fds"] for x in s), "end": end["fds"]},
        "dir_bytes_max": max(x["dir_bytes"] for x in s),
        "dir_files_max": max(x["dir_files"] for x in s),
        "journal_bytes_max": max(x["journal_bytes"] for x in s),
        "files_opened": r.files_opened,
        "rotations": r.files_opened - 1,
        "flushes": r.flushes,
        "late": r.late,
        "missed": r.missed,
        "dropped": r.dropped,
        "lost": r.lost,
        "gpu_hang_warnings": r.hang_warnings,
        "rss_samples": len(s),
        "thread_cpu_per_tick_us": {k: 1e6 * v * r.wall_s / r.ticks for k, v in sorted(thread_rates(s).items())},
    }


def readback(files: list[Path]) -> dict:
    """Rows and row groups of each Parquet file as pyarrow and DuckDB see them."""
    out: dict = {"files": []}
    try:
        import duckdb
        import pyarrow.parquet as pq
    except ImportError as e:
        return {"text": f"not checked ({e})", "files": []}
    for f in files:
        if f.suffix != ".parquet":
            continue
        md = pq.read_metadata(f)
        rows_pa = pq.read_table(f, columns=["timestamp", "utilization.gpu"]).num_rows
        rows_db = duckdb.sql(f"select count(*) from read_parquet('{f}')").fetchall()[0][0]
        out["files"].append({"file": f.name, "bytes": f.stat().st_size, "row_groups": md.num_row_groups,
                             "rows_pyarrow": rows_pa, "rows_duckdb": rows_db,
                             "footer_bytes": md.serialized_size})
    out["text"] = "; ".join(f"{x['file']}: {x['rows_pyarrow']:,} / {x['rows_duckdb']:,} rows, {x['row_groups']} row groups, "
                            f"{x['bytes'] / 2**20:.1f} MiB, footer {x['footer_bytes'] / 1024:.0f} KiB" for x in out["files"])
    return out


def output_files(d: Path) -> list[dict]:
    out = []
    for p in sorted(d.iterdir(), key=lambda p: p.stat().st_mtime):
        if p.name.startswith("."):
            continue
        rows, _, _ = count_rows([p])
        out.append({"name": p.name, "bytes": p.stat().st_size, "ticks": rows // 2})
    return out


def count_rows(files: list[Path]) -> tuple[int, int, int]:
    """Rows, rows with empty GPU fields and the sum of `missed` over the given gpumon files."""
    rows = empty = missed = 0
    for p in files:
        if p.suffix == ".parquet":
            import pyarrow.compute as pc
            import pyarrow.parquet as pq

            t = pq.read_table(p, columns=["utilization.gpu", "missed"])
            rows += t.num_rows
            empty += t.column("utilization.gpu").null_count
            missed += pc.sum(t.column("missed")).as_py() or 0
        else:
            import csv

            with open(p, newline="") as f:
                r = csv.reader(f)
                h = [c.split(" [")[0] for c in next(r)]  # older gpumon CSVs: `name [unit]`
                iu, im = h.index("utilization.gpu"), h.index("missed")
                for row in r:
                    rows += 1
                    empty += row[iu] == ""
                    missed += int(row[im] or 0)
    return rows, empty, missed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100,000-tick soak and 20,000-tick flush pairs (about 3 min)")
    ap.add_argument("--ticks", type=int, help="soak length in ticks (default 1,000,000; --quick 100,000)")
    ap.add_argument("--flush-ticks", type=int, help="length of each flush-cost run (default 100,000; --quick 20,000)")
    ap.add_argument("--pairs", type=int, default=2, help="flush-cost pairs (1s next to 1h), default 2")
    ap.add_argument("--interval", default="1ms", help="gpumon -i (default 1ms, the shortest it accepts)")
    ap.add_argument("--format", choices=["parquet", "csv"], default="parquet", help="soak output format (default parquet)")
    ap.add_argument("--rss-every", type=float, default=3.0, help="seconds between RSS samples (default 3)")
    ap.add_argument("--skip-flush", action="store_true", help="soak only")
    ap.add_argument("--flush-rotate", action="store_true",
                    help="part 2 with the soak's rotation too (off by default: when Parquet pieces rotate depends on --flush, "
                         "so the two settings would rotate a different number of times)")
    ap.add_argument("--skip-soak", action="store_true", help="flush cost only")
    ap.add_argument("--one-file", action="store_true",
                    help="soak into ONE file (no --rotate-size/--keep) and read it back with pyarrow and DuckDB")
    ap.add_argument("--json", metavar="OUT", help="write every figure (and every RSS sample) as JSON")
    ap.add_argument("--keep", metavar="DIR", help="keep outputs, scenario and stderr in DIR (default: temp dir, removed)")
    ap.add_argument("--gpumon", default=str(DEFAULT_GPUMON))
    ap.add_argument("--fake-nvml", default=str(DEFAULT_FAKE))
    args = ap.parse_args()

    for what, p in [("gpumon", args.gpumon), ("fake NVML", args.fake_nvml)]:
        if not Path(p).exists():
            sys.exit(f"soak.py: {what} not found at {p}; build with `cargo build --release && cargo build --release -p fake-nvml`")
    soak_ticks = args.ticks or (100_000 if args.quick else 1_000_000)
    flush_ticks = args.flush_ticks or (20_000 if args.quick else 100_000)
    m = re.fullmatch(r"(\d+)ms", args.interval)
    if not m:
        sys.exit("soak.py: --interval must be in ms, e.g. 1ms")
    interval_s = int(m.group(1)) / 1000

    tmp = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="gpumon-soak-"))
    tmp.mkdir(parents=True, exist_ok=True)
    launcher = build_launcher(tmp)
    scenario = tmp / "scenario-2gpu.txt"
    scenario.write_text(scenario_text())
    env = {"GPUMON_NVML_LIB": str(Path(args.fake_nvml).resolve()), "FAKE_NVML_SCENARIO": str(scenario)}

    started_wall = dt.datetime.now(dt.timezone.utc)
    t_start = time.monotonic()
    load_before = os.getloadavg()
    busy0, total0 = proc_stat_cpu()
    try:
        gpumon_version = subprocess.run([args.gpumon, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        gpumon_version = "?"
    print(f"gpumon soak  {started_wall:%Y-%m-%d %H:%M} UTC  host {platform.node()}  {os.cpu_count()} CPUs  "
          f"{platform.platform()}  {gpumon_version}")
    result: dict = {
        "started_utc": started_wall.isoformat(timespec="seconds"),
        "machine": {"host": platform.node(), "cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "gpumon": {"path": str(args.gpumon), "version": gpumon_version},
        "interval": args.interval,
        "scenario": scenario_text(),
    }

    def gpumon_argv(out: Path, ticks: int, flush: str, rotate: bool = True) -> list[str]:
        return [args.gpumon, "record", "-q", "-v", "-i", args.interval, "--count", str(ticks), *(ROTATE if rotate else []),
                "--flush", flush, "-o", str(out)]

    # ------------------------------------------------------------ part 1: soak
    if not args.skip_soak:
        d = tmp / "soak"
        d.mkdir(exist_ok=True)
        out = d / f"soak.{args.format}"
        run = Run("soak", gpumon_argv(out, soak_ticks, "1s", rotate=not args.one_file), d)
        print(f"\npart 1: soak, {soak_ticks:,} ticks at {args.interval} (about {soak_ticks * interval_s / 60:.0f} min)")
        print("  $ " + " ".join(run.argv[1:]).replace(str(d) + "/", ""))
        sys.stdout.flush()
        l = Launched(run, launcher, env, tmp)
        stop = threading.Event()
        th = threading.Thread(target=sampler, args=(l, args.rss_every, stop), daemon=True)
        th.start()
        l.finish()
        stop.set()
        th.join()
        if len(run.samples) < 3:
            sys.exit("soak.py: too few RSS samples; the run was too short")
        s = soak_summary(run, interval_s)
        files = sorted(p for p in d.iterdir() if not p.name.startswith("."))
        rows, empty, missed_rows = count_rows(files)
        s["kept_files"] = output_files(d)
        s["kept_rows"] = rows
        s["kept_rows_gpu_empty"] = empty
        s["kept_ticks"] = rows // 2
        result["soak"] = {"argv": run.argv, "summary": s, "samples": run.samples, "stderr_other": run.stderr_other}

        rk = s["rss_kib"]
        print()
        print(f"| {'soak':<36} | value |")
        print("|" + "-" * 38 + "|-------|")
        rowsout = [
            ("ticks written (gpumon -v)", f"{s['ticks']:,}"),
            ("wall time", f"{s['wall_s']:.0f} s ({s['ticks_per_s']:.0f} ticks/s)"),
            ("same ticks at -i 1s / -i 60s", f"{s['equivalent_days_at_1s']:.1f} days / {s['equivalent_days_at_60s']:.0f} days"),
            ("CPU total (user + sys)", f"{s['cpu_s']:.1f} s ({s['utime_s']:.1f} + {s['stime_s']:.1f})"),
            ("CPU per tick", f"{s['cpu_per_tick_ms'] * 1000:.1f} µs ({s['pct_core_at_interval']:.0f} % of a core at {args.interval})"),
            (f"RSS at {WARMUP_FRACTION:.0%} (t={s['rss_at_s']['start']:.0f} s)", f"{mib(rk['start']):.2f} MiB"),
            (f"RSS at 10% (t={s['rss_at_s']['p10']:.0f} s)", f"{mib(rk['p10']):.2f} MiB"),
            (f"RSS at 50% (t={s['rss_at_s']['mid']:.0f} s)", f"{mib(rk['mid']):.2f} MiB"),
            (f"RSS at end (t={s['rss_at_s']['end']:.0f} s)", f"{mib(rk['end']):.2f} MiB"),
            ("RSS max sampled / min after warm-up", f"{mib(rk['max_sampled']):.2f} / {mib(rk['min_after_warmup']):.2f} MiB"),
            ("RSS trend (fit), after 5% / 2nd half", f"{s['rss_slope_kib_per_100k_ticks_after_warmup']:+.0f} / "
             f"{s['rss_slope_kib_per_100k_ticks_second_half']:+.0f} KiB per 100k ticks"),
            ("peak RSS (ru_maxrss)", f"{mib(s['ru_maxrss_kib']):.2f} MiB"),
            ("threads / open fds (min-max)", f"{','.join(map(str, s['threads']))} / {s['fds']['min']}-{s['fds']['max']}"),
            ("files opened (rotations)", f"{s['files_opened']} ({s['rotations']})"),
            ("files kept / --keep", f"{len(files)} / 5"),
            ("max bytes in output dir", f"{s['dir_bytes_max'] / 2**20:.1f} MiB in at most {s['dir_files_max']} files"),
            ("largest Parquet journal seen", f"{s['journal_bytes_max'] / 2**20:.1f} MiB"),
            ("kept files: MiB, ticks each", ", ".join(f"{f['bytes'] / 2**20:.2f} ({f['ticks']:,})" for f in s["kept_files"])),
            ("flushes (-v lines)", f"{s['flushes']:,}"),
            ("late / missed / dropped / lost", f"{s['late']} / {s['missed']} / {s['dropped']} / {s['lost']}"),
            ("rows in kept files, GPU empty", f"{rows:,} rows ({rows // 2:,} ticks), {empty} with empty GPU fields"),
            ("RSS samples", f"{s['rss_samples']} (every {args.rss_every:g} s)"),
            ("CPU per tick by thread (schedstat)", ", ".join(f"{k} {v:.0f} µs" for k, v in s["thread_cpu_per_tick_us"].items())),
        ]
        if args.one_file:
            s["readback"] = readback(files)
            rowsout.append(("read back (pyarrow / DuckDB rows)", s["readback"]["text"]))
            ra, rf = s["rss_anon_kib"], s["rss_file_kib"]
            if None not in (*ra.values(), *rf.values()):
                rowsout.append(("RssAnon at 10% / 50% / end", " / ".join(f"{mib(ra[k]):.2f}" for k in ("p10", "mid", "end")) + " MiB"))
                rowsout.append(("RssFile at 10% / 50% / end", " / ".join(f"{mib(rf[k]):.2f}" for k in ("p10", "mid", "end")) + " MiB"))
            if s["smaps_kib_last"]:
                top = list(s["smaps_kib_last"].items())[:5]
                rowsout.append(("resident by mapping (last smaps), KiB", ", ".join(f"{Path(k).name} {v}" for k, v in top)))
            rowsout.append(("RSS 10% -> 100% (max - min of the three)",
                            f"{mib(max(rk['p10'], rk['mid'], rk['end']) - min(rk['p10'], rk['mid'], rk['end'])):.2f} MiB"))
        for k, v in rowsout:
            print(f"| {k:<36} | {v} |")
        for line in run.stderr_other[:6]:
            print(f"  stderr: {line}")

    # ------------------------------------------------------------ part 2: flush cost
    if not args.skip_flush:
        print(f"\npart 2: flush cost, {flush_ticks:,} ticks each, --flush 1s next to --flush 1h, {args.pairs} pairs, Parquet, "
              + ("rotation as in part 1" if args.flush_rotate else "no rotation"))
        runs: dict[str, list[Run]] = {"1s": [], "1h": []}
        for p in range(args.pairs):
            launched = []
            for fl in ("1s", "1h"):
                d = tmp / f"flush{fl}.{p}"
                d.mkdir(exist_ok=True)
                r = Run(f"flush {fl} #{p}", gpumon_argv(d / "f.parquet", flush_ticks, fl, args.flush_rotate), d)
                launched.append(Launched(r, launcher, env, tmp))
            stop = threading.Event()
            ths = [threading.Thread(target=sampler, args=(l, 0.5, stop), daemon=True) for l in launched]
            for th in ths:
                th.start()
            for l in launched:
                r = l.finish()
                runs[r.label.split()[1]].append(r)
            stop.set()
            for th in ths:
                th.join()
            sys.stdout.flush()
        print()
        print("| --flush | pair | ticks   | flushes | files | CPU s  | CPU/tick µs | writer thread ms CPU/s | late/missed |")
        print("|---------|------|---------|---------|-------|--------|-------------|------------------------|-------------|")
        writer = {fl: [thread_rates(r.samples).get("writer", float("nan")) for r in rs] for fl, rs in runs.items()}
        for fl, rs in runs.items():
            for i, r in enumerate(rs):
                print(f"| {fl:<7} | {i:>4} | {r.ticks:>7} | {r.flushes:>7} | {r.files_opened:>5} | {r.cpu_s:>6.2f} | "
                      f"{1e6 * r.cpu_s / r.ticks:>11.2f} | {1e3 * writer[fl][i]:>22.2f} | {r.late:>5}/{r.missed:<5} |")
        med = {fl: statistics.median(r.cpu_s / r.ticks for r in rs) for fl, rs in runs.items()}
        med_cpu = {fl: statistics.median(r.cpu_s for r in rs) for fl, rs in runs.items()}
        med_fl = {fl: statistics.median(r.flushes for r in rs) for fl, rs in runs.items()}
        spread = {fl: (max(r.cpu_s / r.ticks for r in rs) - min(r.cpu_s / r.ticks for r in rs)) for fl, rs in runs.items()}
        diff_tick = med["1s"] - med["1h"]
        dflush = med_fl["1s"] - med_fl["1h"]
        per_flush = (med_cpu["1s"] - med_cpu["1h"]) / dflush if dflush > 0 else float("nan")
        noise = max(spread.values())
        print()
        print(f"  CPU per tick, median: --flush 1s {1e6 * med['1s']:.2f} µs, --flush 1h {1e6 * med['1h']:.2f} µs")
        print(f"  difference per tick : {1e6 * diff_tick:+.2f} µs ({100 * diff_tick / med['1h']:+.1f} %)")
        print(f"  difference per flush: {1e3 * per_flush:+.2f} ms CPU ({dflush:.0f} more flushes with 1s)")
        print(f"  noise: largest spread between pairs of one setting {1e6 * noise:.2f} µs/tick"
              + ("  -> the difference is within the noise" if abs(diff_tick) <= noise else ""))
        w1s, w1h = statistics.median(writer["1s"]), statistics.median(writer["1h"])
        tps = statistics.median(r.ticks / r.wall_s for rs in runs.values() for r in rs)
        wspread = max(max(v) - min(v) for v in writer.values())
        print(f"  writer thread alone (schedstat, 10 % of the run to its end): {1e3 * w1s:.2f} ms CPU per s with 1s, "
              f"{1e3 * w1h:.2f} with 1h -> {1e3 * (w1s - w1h):+.2f} ms per flush, {1e6 * (w1s - w1h) / tps:+.2f} µs per tick "
              f"(spread between pairs {1e3 * wspread:.2f} ms/s)")
        result["flush"] = {
            "ticks": flush_ticks,
            "rotation": args.flush_rotate,
            "argv_1s": runs["1s"][0].argv,
            "runs": {fl: [{k: v for k, v in asdict(r).items() if k != "samples"} | {"cpu_s": r.cpu_s, "last_sample": r.samples[-1] if r.samples else None} for r in rs]
                     for fl, rs in runs.items()},
            "median_cpu_per_tick_s": med,
            "median_flushes": med_fl,
            "diff_per_tick_s": diff_tick,
            "diff_per_flush_s": per_flush,
            "spread_per_tick_s": spread,
            "writer_cpu_s_per_s": writer,
            "writer_diff_per_flush_s": w1s - w1h,
            "writer_diff_per_tick_s": (w1s - w1h) / tps,
        }

    busy1, total1 = proc_stat_cpu()
    machine_busy = 100 * (busy1 - busy0) / max(1, total1 - total0)
    print(f"\nmachine CPU busy during the run (all processes, all CPUs): {machine_busy:.1f} %   "
          f"load avg 1m before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    print(f"total wall time {time.monotonic() - t_start:.0f} s")
    result["machine_busy_pct"] = machine_busy
    result["load_before"], result["load_after"] = load_before, os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(portable(json.loads(json.dumps(result, default=str))), indent=1) + "\n")
        print(f"wrote {args.json}")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
