#!/usr/bin/env python3
"""CPU cost of GPM sampling: `gpumon record` with 8 fake GPUs, with and without the GPM fields.

One run: two recorders side by side at 100 ms for 60 s against the fake NVML (tests/fake-nvml)
playing 8 busy H100s that script every GPM metric gpumon reads:

  with GPM     the default fields (sm.active, sm.occupancy, tensor.active, dram.active,
               fp16/fp32/fp64.active, pcie/nvlink tx/rx bytes: one GPM sample and one
               metrics call per GPU per tick, on each GPU's worker thread);
  without GPM  `--fields` = the same default columns minus the GPM ones (no GPM call at all).

CPU per tick is measured as in bench/record.py (whose launcher and helpers this reuses): the
child's ru_utime + ru_stime from wait4(), long run minus the median of three 1-tick runs, divided
by the tick difference. The fake NVML runs inside gpumon's process, so its share is included
(real NVML's GPM calls cost what the driver charges, not what the fake does).

usage: python3 bench/gpm.py [--gpumon PATH] [--fake-nvml PATH] [--seconds N] [--json OUT.json]
build first: cargo build -p gpumon && cargo build -p fake-nvml   (or --release, for release figures)
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import record as rec  # noqa: E402  (the launcher, wave runner and tick counting)
from portable import portable

REPO = Path(__file__).resolve().parent.parent
NGPUS = 8
GPM_FIELDS = [
    "sm.active",
    "sm.occupancy",
    "tensor.active",
    "dram.active",
    "fp16.active",
    "fp32.active",
    "fp64.active",
    "pcie.tx.bytes",
    "pcie.rx.bytes",
    "nvlink.tx.bytes",
    "nvlink.rx.bytes",
]
GPM_KEYS = {
    "sm_util": 72.5,
    "sm_occupancy": 41.0,
    "any_tensor_util": 38.0,
    "dram_bw_util": 55.0,
    "fp16_util": 30.0,
    "fp32_util": 6.0,
    "fp64_util": 0.0,
    "pcie_tx_per_sec": 120.0,
    "pcie_rx_per_sec": 950.0,
    "nvlink_total_tx_per_sec": 41000.0,
    "nvlink_total_rx_per_sec": 41000.0,
}


def scenario() -> str:
    """bench/record.py's 8 H100s, plus every GPM metric and a watched (quiet) event set."""
    out = rec.scenario_text(NGPUS).split("[device]")
    text = out[0]
    gpm = "".join(f"gpm.{k} = 0, {v}\n" for k, v in GPM_KEYS.items())
    for block in out[1:]:
        text += "[device]" + block.rstrip("\n") + "\n" + gpm + "events = none\n\n"
    return text


def header(path: Path) -> list[str]:
    with open(path, newline="") as f:
        return [c.split(" [")[0] for c in next(csv.reader(f))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    release = REPO / "target" / "release"
    debug = REPO / "target" / "debug"
    pick = lambda name: release / name if (release / name).exists() else debug / name  # noqa: E731
    ap.add_argument("--gpumon", default=str(pick("gpumon")))
    ap.add_argument("--fake-nvml", default=str(pick("libnvidia_ml.so")))
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpumon-gpm-bench-") as d:
        tmp = Path(d)
        rec.LAUNCHER = rec.build_launcher(tmp)
        sc = tmp / "scenario-8gpu-gpm.txt"
        sc.write_text(scenario())
        env = {"GPUMON_NVML_LIB": str(Path(args.fake_nvml).resolve()), "FAKE_NVML_SCENARIO": str(sc)}
        # The default columns, read from a one-tick run; without GPM = those minus the GPM fields.
        probe = rec.Proc("probe", [args.gpumon, "record", "-q", "--count", "1", "-o", str(tmp / "probe.csv")], env)
        rec.run_wave([probe], tmp)
        cols = header(tmp / "probe.csv")
        missing = [f for f in GPM_FIELDS if f not in cols]
        if missing:
            sys.exit(f"gpm.py: the default columns lack {missing}: is this gpumon built with GPM fields?")
        without = ",".join(c for c in cols if c not in GPM_FIELDS)
        dur = ["--duration", f"{args.seconds}s"]
        tools = [
            rec.gpumon_tool("8 GPUs, with GPM (default fields)", args.gpumon, env, tmp / "gpm.csv", dur, tmp, NGPUS),
            rec.gpumon_tool("8 GPUs, without GPM", args.gpumon, env, tmp / "nogpm.csv", [*dur, "--fields", without], tmp, NGPUS),
        ]
        tools[1].short_argv[5:5] = ["--fields", without]
        print(f"long runs: {args.seconds} s at 100 ms, both at once; short runs: 1 tick, 3 times each")
        for t in tools:
            t.long = rec.Proc(t.name, t.long_argv, t.env)
        rec.run_wave([t.long for t in tools], tmp)
        for i in range(rec.SHORT_REPEATS):
            shorts = [rec.Proc(t.name + " short", [a.replace("{i}", str(i)) for a in t.short_argv], t.env) for t in tools]
            rec.run_wave(shorts, tmp)
            for t, p in zip(tools, shorts):
                t.shorts.append(p)
        rows = [rec.summarize(t) for t in tools]
        filled = [sum(1 for c in GPM_FIELDS if c in header(t.out_long)) for t in tools]
        with_gpm, without_gpm = rows
        delta = with_gpm["cpu_per_tick_ms"] - without_gpm["cpu_per_tick_ms"]
        print(f"{'run':40} {'CPU/tick ms':>12} {'% of a core':>12} {'peak RSS MiB':>13} {'GPM columns':>12}")
        for r, n in zip(rows, filled):
            print(f"{r['tool']:40} {r['cpu_per_tick_ms']:12.3f} {r['cpu_pct_of_core']:12.2f} {r['peak_rss_mib']:13.1f} {n:12d}")
        print(f"GPM sampling: +{delta:.3f} ms CPU per tick for {NGPUS} GPUs = {1000 * delta / NGPUS:.1f} µs per GPU per sample "
              f"({with_gpm['cpu_per_tick_ms'] / without_gpm['cpu_per_tick_ms']:.2f}x)")
        if args.json:
            Path(args.json).write_text(
                json.dumps(
                    portable({
                        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
                        "gpumon": args.gpumon,
                        "runs": rows,
                        "gpm_extra_ms_per_tick": delta,
                        "gpm_extra_us_per_gpu_sample": 1000 * delta / NGPUS,
                        "ratio": with_gpm["cpu_per_tick_ms"] / without_gpm["cpu_per_tick_ms"],
                        "scenario": sc.read_text(),
                    }),
                    indent=2,
                )
                + "\n"
            )


if __name__ == "__main__":
    main()
