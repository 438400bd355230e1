#!/usr/bin/env python3
"""What the experiment features cost a recording that takes no marks: CPU per tick of `gpumon record`
with the control socket listening (the default for a file output) against the same run with
`--no-marks` (no socket); with `--phases` too (the `phase` column, all null); and, when given, a build
from before these features (`--before`: no socket, no status file), which prices the status file.

Method (bench/record.py's): every variant is run long (600 ticks at 100 ms, 8 fake GPUs, Parquet)
and short (1 tick, 3 times, median) through the rusage launcher (bench/rusage_exec.c), so
    CPU per tick = (cpu_long - cpu_short) / (ticks_long - ticks_short)
The long runs of all variants go in one wave (they are >95 % idle). Whole-process CPU moves by
±20 % run to run on a shared machine, more than these features cost; so one more run (socket on,
no mark) is sampled per thread from /proc/PID/task just before it ends: the `control` thread (the
socket) and the `status` thread (the status file) are priced on their own, next to the record loop
(`gpumon`). One run; the figures go to stdout and, with --json, to a file.

usage: python3 bench/marks.py [--gpumon BIN] [--fake-nvml LIB] [--before BIN] [--quick] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import record as rec  # noqa: E402  (bench/record.py: launcher, waves, scenario, tick counting)
from portable import portable  # noqa: E402  (results without this machine's paths)

REPO = Path(__file__).resolve().parent.parent


def default(name: str) -> Path:
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / name
        if p.exists():
            return p
    return REPO / "target" / "release" / name


def thread_cpu(gpumon: str, env: dict, out: Path, ticks: int) -> dict[str, float]:
    """CPU seconds per thread name of one recording, read just before it ends, and the ticks by then."""
    import os
    import subprocess
    import time

    hz = os.sysconf("SC_CLK_TCK")
    p = subprocess.Popen([gpumon, "record", "-q", "-i", "100ms", "--count", str(ticks), "-o", str(out)],
                         env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    time.sleep(ticks * 0.1 - 1.0)
    elapsed = time.monotonic() - t0
    cpu: dict[str, float] = {}
    for task in Path(f"/proc/{p.pid}/task").iterdir():
        name = (task / "comm").read_text().strip()
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        cpu[name] = cpu.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / hz
    p.wait()
    cpu["ticks so far"] = elapsed / 0.1
    return cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpumon", default=str(default("gpumon")))
    ap.add_argument("--fake-nvml", default=str(default("libnvidia_ml.so")))
    ap.add_argument("--before", help="a gpumon build without the control socket and status file")
    ap.add_argument("--quick", action="store_true", help="100 ticks instead of 600")
    ap.add_argument("--json", metavar="OUT")
    a = ap.parse_args()
    ticks = 100 if a.quick else 600
    tmp = Path(tempfile.mkdtemp(prefix="gpumon-bench-marks-"))
    rec.LAUNCHER = rec.build_launcher(tmp)
    scenario = tmp / "scenario-8gpu.txt"
    scenario.write_text(rec.scenario_text(rec.NGPUS))
    env = {"GPUMON_NVML_LIB": str(Path(a.fake_nvml).resolve()), "FAKE_NVML_SCENARIO": str(scenario)}
    variants = [
        ("socket on (default), no mark sent", a.gpumon, []),
        ("--no-marks", a.gpumon, ["--no-marks"]),
        ("--phases (socket and phase column)", a.gpumon, ["--phases"]),
    ]
    if a.before:
        variants.append(("before (no socket, no status file)", a.before, []))
    tools = []
    for k, (name, exe, extra) in enumerate(variants):
        out = tmp / f"v{k}.parquet"
        t = rec.gpumon_tool(name, exe, env, out, ["--count", str(ticks), *extra], tmp, rec.NGPUS)
        t.short_argv = [*t.short_argv[:-2], *extra, *t.short_argv[-2:]]
        tools.append(t)
    for t in tools:
        t.long = rec.Proc(t.name, t.long_argv, t.env)
    rec.run_wave([t.long for t in tools], tmp)
    for i in range(rec.SHORT_REPEATS):
        shorts = [rec.Proc(t.name, [s.replace("{i}", str(i)) for s in t.short_argv], t.env) for t in tools]
        rec.run_wave(shorts, tmp)
        for t, p in zip(tools, shorts):
            t.shorts.append(p)
    rows = []
    for t in tools:
        n = t.ticks_fn(t.out_long)
        short = statistics.median(p.cpu_s for p in t.shorts)
        per_tick_ms = (t.long.cpu_s - short) / max(1, n - 1) * 1000
        rows.append({"variant": t.name, "ticks": n, "cpu_long_s": t.long.cpu_s, "cpu_short_s": short,
                     "cpu_per_tick_ms": per_tick_ms, "peak_rss_mib": t.long.maxrss_kib / 1024})
    base = rows[1]["cpu_per_tick_ms"]
    print(f"gpumon {a.gpumon}; {rec.NGPUS} fake GPUs, 100 ms, {ticks} ticks, Parquet")
    for r in rows:
        print(f"  {r['variant']:<38} {r['cpu_per_tick_ms']:.3f} ms/tick ({r['cpu_per_tick_ms'] / base:.2f}x --no-marks), "
              f"peak RSS {r['peak_rss_mib']:.1f} MiB, {r['ticks']} ticks")
    threads = thread_cpu(a.gpumon, env, tmp / "threads.parquet", ticks)
    n = threads.pop("ticks so far")
    print(f"per thread, socket on, no mark ({n:.0f} ticks so far; CPU clock ticks are 10 ms):")
    for name, cpu in sorted(threads.items(), key=lambda kv: -kv[1]):
        if name in ("gpumon", "writer", "status", "control") or cpu > 0:
            print(f"  {name:<10} {cpu * 1000 / n:.3f} ms/tick ({cpu:.2f} s)")
    if a.json:
        doc = {"gpumon": a.gpumon, "ticks": ticks, "rows": rows, "threads_s": threads, "threads_ticks": n}
        Path(a.json).write_text(json.dumps(portable(doc), indent=2) + "\n")


if __name__ == "__main__":
    main()
