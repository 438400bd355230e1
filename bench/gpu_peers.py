#!/usr/bin/env python3
"""gpumon against the Python GPU recorders people use, all reading the same fake NVML with 8 GPUs.

Every tool dlopens libnvidia-ml: gpumon through GPUMON_NVML_LIB, the Python tools through
LD_LIBRARY_PATH (a directory with a `libnvidia-ml.so.1` symlink to tests/fake-nvml's library).
FAKE_NVML_SCENARIO is the 8 x H100 scenario of record.py (every default gpumon GPU field filled).

| tool | what one tick does |
|---|---|
| gpumon -> csv / parquet | `gpumon record -q -i 100ms --count N`: the default fields of 8 GPUs + host, one row per GPU |
| gpumon -> csv, loop's fields | the same with `--fields` = the loop's fields (no host read, no host columns) |
| gpumon BEFORE -> csv (, loop's fields) | `--gpumon-before`: an older build run the same two ways in the same rounds |
| nvidia-ml-py loop | the NVML calls gpumon makes for its default GPU fields, per GPU, one CSV line per GPU |
| gpustat | `gpustat.new_query()` (its fields, with the GPU processes), one CSV line per GPU |
| nvitop collector | `ResourceMetricCollector(Device.all(), interval)` sampling in its thread, `collect()` once per tick, one CSV line per tick |

CPU = ru_utime + ru_stime of the finished child (bench/rusage_exec.c, as in record.py), per tick =
(long run - median of 3 one-tick runs) / (ticks - 1). The long runs of a round go side by side; the
figures are the median over the rounds, with the range.

usage: python3 bench/gpu_peers.py [--rounds 2] [--ticks 300] [--json OUT] [--gpumon BIN] [--fake-nvml LIB]
needs: pip install nvidia-ml-py gpustat nvitop; cargo build --release && cargo build --release -p fake-nvml
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import record as rb  # noqa: E402  (the launcher, the scenario and the tick readers)

NGPUS = 8

# The fields the nvidia-ml-py loop reads and writes (gpumon adds `host` and `missed`): gpumon with
# these is the like-for-like row; its default run also reads the host (/proc) and writes its columns.
LOOP_FIELDS = ("timestamp,index,uuid,name,pci.bus_id,utilization.gpu,utilization.memory,memory.used,memory.total,"
               "memory.free,temperature.gpu,power.draw,power.limit,energy.total,clocks.sm,clocks.mem,fan.speed,pstate,"
               "clocks_event_reasons.active,utilization.encoder,utilization.decoder,ecc.errors.uncorrected.volatile.total")

PYNVML_LOOP = r"""
import sys, time
import pynvml as N
interval, count, out = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
MIB = 1 << 20
N.nvmlInit()
hs = [N.nvmlDeviceGetHandleByIndex(i) for i in range(N.nvmlDeviceGetCount())]
ids = [(N.nvmlDeviceGetUUID(h), N.nvmlDeviceGetName(h), N.nvmlDeviceGetPciInfo(h).busId) for h in hs]
def safe(f, *a):
    try:
        return f(*a)
    except N.NVMLError:
        return None
with open(out, "w") as f:
    t0 = time.monotonic()
    for k in range(count):
        d = t0 + (k + 1) * interval - time.monotonic()
        if d > 0:
            time.sleep(d)
        ts = time.time()
        for i, h in enumerate(hs):
            u, m = safe(N.nvmlDeviceGetUtilizationRates, h), safe(N.nvmlDeviceGetMemoryInfo, h)
            enc, dec = safe(N.nvmlDeviceGetEncoderUtilization, h), safe(N.nvmlDeviceGetDecoderUtilization, h)
            vals = [f"{ts:.3f}", i, *ids[i], u and u.gpu, u and u.memory,
                    m and m.used // MIB, m and m.total // MIB, m and m.free // MIB,
                    safe(N.nvmlDeviceGetTemperature, h, N.NVML_TEMPERATURE_GPU),
                    safe(N.nvmlDeviceGetPowerUsage, h), safe(N.nvmlDeviceGetEnforcedPowerLimit, h),
                    safe(N.nvmlDeviceGetTotalEnergyConsumption, h),
                    safe(N.nvmlDeviceGetClockInfo, h, N.NVML_CLOCK_SM), safe(N.nvmlDeviceGetClockInfo, h, N.NVML_CLOCK_MEM),
                    safe(N.nvmlDeviceGetFanSpeed, h), safe(N.nvmlDeviceGetPerformanceState, h),
                    safe(N.nvmlDeviceGetCurrentClocksEventReasons, h), enc and enc[0], dec and dec[0],
                    safe(N.nvmlDeviceGetTotalEccErrors, h, N.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, N.NVML_VOLATILE_ECC)]
            f.write(",".join("" if v is None else str(v) for v in vals) + "\n")
        f.flush()
"""

GPUSTAT_LOOP = r"""
import sys, time
import gpustat
interval, count, out = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
keys = None
with open(out, "w") as f:
    t0 = time.monotonic()
    for k in range(count):
        d = t0 + (k + 1) * interval - time.monotonic()
        if d > 0:
            time.sleep(d)
        q = gpustat.new_query()
        for g in q.gpus:
            e = g.entry
            keys = keys or [x for x in e if x != "processes"]
            f.write(f"{time.time():.3f}," + ",".join(str(e[x]) for x in keys) + f",{len(e.get('processes') or [])}\n")
        f.flush()
"""

NVITOP_COLLECTOR = r"""
import sys, time
from nvitop import Device, ResourceMetricCollector
from portable import portable
interval, count, out = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
c = ResourceMetricCollector(Device.all(), interval=interval)
c.start(tag="run")
keys = None
with open(out, "w") as f:
    t0 = time.monotonic()
    for k in range(count):
        d = t0 + (k + 1) * interval - time.monotonic()
        if d > 0:
            time.sleep(d)
        m = c.collect()
        keys = keys or sorted(x for x in m if x.endswith("/last") and "/gpu:" in x)
        f.write(f"{time.time():.3f}," + ",".join(str(m.get(x, "")) for x in keys) + "\n")
        f.flush()
c.stop()
"""


def lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--ticks", type=int, default=300, help="ticks of a long run at 100 ms")
    ap.add_argument("--json", metavar="OUT")
    ap.add_argument("--gpumon", default=str(rb.DEFAULT_GPUMON))
    ap.add_argument("--fake-nvml", default=str(rb.DEFAULT_FAKE))
    ap.add_argument("--keep", metavar="DIR")
    ap.add_argument("--gpumon-before", help="an older gpumon binary run the same way in the same rounds")
    args = ap.parse_args()

    tmp = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="gpumon-gpu-peers-"))
    tmp.mkdir(parents=True, exist_ok=True)
    rb.LAUNCHER = rb.build_launcher(tmp)
    scenario = tmp / "scenario-8gpu.txt"
    scenario.write_text(rb.scenario_text(NGPUS))
    libdir = tmp / "nvml"
    libdir.mkdir(exist_ok=True)
    link = libdir / "libnvidia-ml.so.1"
    if not link.exists():
        link.symlink_to(Path(args.fake_nvml).resolve())
    py_env = {"LD_LIBRARY_PATH": str(libdir), "FAKE_NVML_SCENARIO": str(scenario)}
    gm_env = {"GPUMON_NVML_LIB": str(Path(args.fake_nvml).resolve()), "FAKE_NVML_SCENARIO": str(scenario)}
    scripts = {}
    for name, text in [("pynvml_loop.py", PYNVML_LOOP), ("gpustat_loop.py", GPUSTAT_LOOP), ("nvitop_collector.py", NVITOP_COLLECTOR)]:
        scripts[name] = tmp / name
        scripts[name].write_text(text)

    iv, n = 0.1, args.ticks
    # (name, argv for (ticks, out), env, ticks read back from the output)
    tools = [
        ("gpumon -> csv", lambda k, o: [args.gpumon, "record", "-q", "-i", "100ms", "--count", str(k), "-o", f"{o}.csv"], gm_env,
         lambda o: rb.gpumon_rows_and_ticks(Path(f"{o}.csv"))[1]),
        ("gpumon -> parquet", lambda k, o: [args.gpumon, "record", "-q", "-i", "100ms", "--count", str(k), "-o", f"{o}.parquet"], gm_env,
         lambda o: rb.gpumon_rows_and_ticks(Path(f"{o}.parquet"))[1]),
        ("gpumon -> csv, loop's fields", lambda k, o: [args.gpumon, "record", "-q", "-i", "100ms", "--count", str(k), "--fields", LOOP_FIELDS,
                                                      "-o", f"{o}.csv"], gm_env, lambda o: rb.gpumon_rows_and_ticks(Path(f"{o}.csv"))[1]),
        ("nvidia-ml-py loop", lambda k, o: [sys.executable, scripts["pynvml_loop.py"], str(iv), str(k), o], py_env, lambda o: lines(Path(o)) // NGPUS),
        ("gpustat new_query loop", lambda k, o: [sys.executable, scripts["gpustat_loop.py"], str(iv), str(k), o], py_env, lambda o: lines(Path(o)) // NGPUS),
        ("nvitop ResourceMetricCollector", lambda k, o: [sys.executable, scripts["nvitop_collector.py"], str(iv), str(k), o], py_env, lambda o: lines(Path(o))),
    ]
    if args.gpumon_before:
        b = args.gpumon_before
        tools.insert(2, ("gpumon BEFORE -> csv", lambda k, o: [b, "record", "-q", "-i", "100ms", "--count", str(k), "-o", f"{o}.csv"], gm_env,
                         lambda o: rb.gpumon_rows_and_ticks(Path(f"{o}.csv"))[1]))
        tools.insert(4, ("gpumon BEFORE -> csv, loop's fields", lambda k, o: [b, "record", "-q", "-i", "100ms", "--count", str(k), "--fields",
                                                                    LOOP_FIELDS, "-o", f"{o}.csv"], gm_env,
                         lambda o: rb.gpumon_rows_and_ticks(Path(f"{o}.csv"))[1]))
    started = time.monotonic()
    load_before = os.getloadavg()
    busy0, total0 = rb.proc_stat_cpu()
    results: dict[str, list[dict]] = {t[0]: [] for t in tools}
    for rnd in range(args.rounds):
        shorts = {t[0]: [] for t in tools}
        for i in range(3):
            for name, argv, env, _ in tools:
                p = rb.Proc(name + " short", [str(a) for a in argv(1, str(tmp / f"short-{rnd}-{i}-{name.replace(' ', '_').replace('>', '')}"))], env)
                rb.run_wave([p], tmp)
                shorts[name].append(p)
        longs = []
        for name, argv, env, ticks in tools:
            out = str(tmp / f"long-{rnd}-{name.replace(' ', '_').replace('>', '')}")
            longs.append((name, rb.Proc(name, [str(a) for a in argv(n, out)], env), ticks, out))
        print(f"round {rnd + 1}/{args.rounds}: {len(longs)} long runs side by side, {n} ticks at {iv * 1e3:.0f} ms ...", flush=True)
        rb.run_wave([p for _, p, _, _ in longs], tmp)
        for name, p, ticks, out in longs:
            k = ticks(out)
            short = statistics.median(s.cpu_s for s in shorts[name])
            per_tick = (p.cpu_s - short) / (k - 1)
            results[name].append({
                "ticks": k, "cpu_long_s": p.cpu_s, "cpu_short_s": [s.cpu_s for s in shorts[name]],
                "cpu_per_tick_ms": per_tick * 1e3, "startup_cpu_ms": (short - per_tick) * 1e3,
                "peak_rss_mib": rb.mib(p.maxrss_kib), "command": " ".join(p.argv), "stderr_tail": p.stderr.strip().splitlines()[-3:],
            })
    busy1, total1 = rb.proc_stat_cpu()

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in results[name])

    def rng(name: str, key: str) -> str:
        v = [r[key] for r in results[name]]
        return f"{min(v):.3f}-{max(v):.3f}"

    peers = [t[0] for t in tools if not t[0].startswith("gpumon")]
    best = min(peers, key=lambda p: med(p, "cpu_per_tick_ms"))
    print()
    print(f"8 fake GPUs, {n} ticks at 100 ms, {args.rounds} rounds (median, range); CPU = rusage of the finished child")
    print("| tool | CPU/tick ms | range | start-up ms | peak RSS MiB | / best peer |")
    print("|---|---|---|---|---|---|")
    for name, *_ in tools:
        print(f"| {name} | {med(name, 'cpu_per_tick_ms'):.3f} | {rng(name, 'cpu_per_tick_ms')} | {med(name, 'startup_cpu_ms'):.1f} | "
              f"{med(name, 'peak_rss_mib'):.1f} | {med(name, 'cpu_per_tick_ms') / med(best, 'cpu_per_tick_ms'):.3f}x |")
    ours = [t[0] for t in tools if t[0].startswith("gpumon") and "BEFORE" not in t[0]]
    ratios = {f"{g}_over_best_peer": med(g, "cpu_per_tick_ms") / med(best, "cpu_per_tick_ms") for g in ours}
    per_round = [
        {g: results[g][r]["cpu_per_tick_ms"] / min(results[p][r]["cpu_per_tick_ms"] for p in peers) for g in ours}
        for r in range(args.rounds)
    ]
    print(f"best peer: {best}; gpumon/best peer: " + ", ".join(f"{k} {v:.3f}x" for k, v in ratios.items())
          + "; per round: " + "; ".join(", ".join(f"{v:.3f}" for v in d.values()) for d in per_round))
    machine = 100.0 * (busy1 - busy0) / max(1, total1 - total0)
    print(f"machine CPU busy during the run: {machine:.1f} %, load avg 1m before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}; "
          f"total {time.monotonic() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(portable({
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": " ".join(sys.argv),
            "ticks": n, "interval_s": iv, "rounds": args.rounds, "results": results, "best_peer": best,
            "ratios": ratios, "ratios_per_round": per_round, "machine_busy_pct": machine,
            "loadavg_before": load_before, "loadavg_after": os.getloadavg(), "scenario": scenario.read_text(),
        }), indent=2) + "\n")
        print(f"wrote {args.json}")
    if not args.keep:
        # Outputs, the launcher and the scenario: scratch unless --keep asked for them.
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
