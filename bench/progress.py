#!/usr/bin/env python3
"""What work counters cost a recording: `gpumon record -i 200ms --progress samples` (one fake-NVML
GPU, Parquet) beside a job that calls `gpumon.progress(samples=32)` RATE times a second, against the
same run with no reports. The recorder's CPU comes from wait4's rusage (the job is not its child),
ticks and `missed` from the file, and every sample sent is looked for in it. `--every-call` sets the
module's coalescing window to 0, so every call is a round trip over the socket (what `gpumon
progress` from a shell, or a raw socket client, costs the recorder per report). One run per variant;
the figures go to stdout and, with --json, to a file.

usage: python3 bench/progress.py [--gpumon BIN] [--fake-nvml LIB] [--rate 1000] [--secs 20] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
import gpumon  # noqa: E402
import gpumon._progress as gp  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from portable import portable  # noqa: E402  (results without this machine's paths)


def default(name: str) -> Path:
    for profile in ("release", "fast-release", "debug"):
        p = REPO / "target" / profile / name
        if p.exists():
            return p
    return REPO / "target" / "release" / name


def run(a: argparse.Namespace, rate: float, window: float, work: Path) -> dict:
    out = work / f"cost-{int(rate)}-{window}.parquet"
    scenario = work / "scenario.txt"
    scenario.write_text("[device]\nname = NVIDIA H100\nutilization.gpu = 50\nmemory.used = 1000\nmemory.total = 81920\n")
    env = dict(os.environ, GPUMON_NVML_LIB=str(a.fake_nvml), FAKE_NVML_SCENARIO=str(scenario))
    argv = [str(a.gpumon), "record", "-q", "-i", "200ms", "--duration", f"{a.secs}s", "--progress", "samples", "-o", str(out)]
    rec = subprocess.Popen(argv, env=env)
    while not (gpumon.status(out) or {}).get("control"):
        time.sleep(0.01)
    os.environ["GPUMON_CONTROL"] = str(gpumon.status(out)["control"])  # type: ignore[index]
    gp.WINDOW = window
    t0, n, busy = time.monotonic(), 0, 0.0
    while rec.poll() is None and time.monotonic() - t0 < a.secs - 0.5:
        due = int(rate * (time.monotonic() - t0))
        while n < due:
            b = time.perf_counter()
            gpumon.progress(samples=32)
            busy += time.perf_counter() - b
            n += 1
        time.sleep(0.0005)
    gp.flush()
    elapsed = time.monotonic() - t0
    _, _, ru = os.wait4(rec.pid, 0)
    t = pq.read_table(out).to_pandas()
    cpu = ru.ru_utime + ru.ru_stime
    return {
        "rate": rate,
        "window_s": window,
        "calls": n,
        "calls_per_s": round(n / elapsed, 1),
        "us_per_call_in_job": round(1e6 * busy / max(n, 1), 1),
        "ticks": len(t),
        "missed": int(t["missed"].sum()),
        "recorder_cpu_s": round(cpu, 3),
        "recorder_cpu_ms_per_tick": round(1000 * cpu / max(len(t), 1), 3),
        "samples_sent": 32 * n,
        "samples_recorded": float(t["progress.samples"].sum()),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpumon", type=Path, default=default("gpumon"))
    p.add_argument("--fake-nvml", type=Path, default=REPO / "target" / "debug" / "libnvidia_ml.so")
    p.add_argument("--rate", type=float, default=1000.0)
    p.add_argument("--secs", type=int, default=20)
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        res = [run(a, 0, gp.WINDOW, Path(d)), run(a, a.rate, gp.WINDOW, Path(d)), run(a, a.rate, 0.0, Path(d))]
    doc = {"gpumon": str(a.gpumon), "load_avg": os.getloadavg(), "runs": res}
    print(json.dumps(doc, indent=1))
    if a.json:
        a.json.write_text(json.dumps(portable(doc), indent=1) + "\n")


main()
