#!/usr/bin/env python3
"""CPU cost of MIG sampling: `gpumon record` on 8 fake H100s, whole, next to the same node with
every GPU split `3g.40gb+2g.20gb+1g.10gb` (one row per instance per tick: memory and GPM of each).

One run: two recorders side by side at 100 ms for N seconds against the fake NVML
(tests/fake-nvml) playing bench/gpm.py's 8 busy H100s (every GPM metric scripted), the second
node with a MIG layout on each GPU (each instance scripting its own sm.active). Both record the
default fields; the MIG run's file has 4 rows per GPU per tick instead of 1 (its mig.* columns
added).

CPU per tick as in bench/record.py (whose launcher and helpers this reuses): the child's
ru_utime + ru_stime from wait4(), long run minus the median of three 1-tick runs, divided by the
tick difference. The fake NVML runs inside gpumon's process, so its share is included.

usage: python3 bench/mig.py [--gpumon PATH] [--fake-nvml PATH] [--seconds N] [--json OUT.json]
build first: cargo build -p gpumon && cargo build -p fake-nvml   (or --release, for release figures)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpm  # noqa: E402  (the 8-GPU GPM scenario)
import record as rec  # noqa: E402  (the launcher, wave runner and tick counting)
from portable import portable

REPO = Path(__file__).resolve().parent.parent
NGPUS = 8
LAYOUT = "3g.40gb:used=30000:gpm.sm_util=80;2g.20gb:used=12000:gpm.sm_util=40;1g.10gb:used=9000:gpm.sm_util=0"
INSTANCES = 3


def mig_scenario() -> str:
    """bench/gpm.py's node with every GPU split into LAYOUT."""
    parts = gpm.scenario().replace("mig_mode = 0", "mig_mode = 1").split("[device]")
    return parts[0] + "".join("[device]" + p.rstrip("\n") + f"\nmig = {LAYOUT}\n\n" for p in parts[1:])


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
    with tempfile.TemporaryDirectory(prefix="gpumon-mig-bench-") as d:
        tmp = Path(d)
        rec.LAUNCHER = rec.build_launcher(tmp)
        lib = str(Path(args.fake_nvml).resolve())
        whole, split = tmp / "whole.txt", tmp / "mig.txt"
        whole.write_text(gpm.scenario())
        split.write_text(mig_scenario())
        dur = ["--duration", f"{args.seconds}s"]
        env = lambda sc: {"GPUMON_NVML_LIB": lib, "FAKE_NVML_SCENARIO": str(sc)}  # noqa: E731
        tools = [
            rec.gpumon_tool("8 whole GPUs", args.gpumon, env(whole), tmp / "whole.csv", dur, tmp, NGPUS),
            rec.gpumon_tool(
                f"8 GPUs x {INSTANCES} MIG instances", args.gpumon, env(split), tmp / "mig.csv", dur, tmp,
                NGPUS * (1 + INSTANCES),
            ),
        ]
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
        plain, mig = rows
        delta = mig["cpu_per_tick_ms"] - plain["cpu_per_tick_ms"]
        n = NGPUS * INSTANCES
        print(f"{'run':40} {'CPU/tick ms':>12} {'% of a core':>12} {'peak RSS MiB':>13}")
        for r in rows:
            print(f"{r['tool']:40} {r['cpu_per_tick_ms']:12.3f} {r['cpu_pct_of_core']:12.2f} {r['peak_rss_mib']:13.1f}")
        print(f"MIG sampling: +{delta:.3f} ms CPU per tick for {n} instances = {1000 * delta / n:.1f} µs per instance "
              f"per tick ({mig['cpu_per_tick_ms'] / plain['cpu_per_tick_ms']:.2f}x)")
        if args.json:
            Path(args.json).write_text(
                json.dumps(
                    portable({
                        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
                        "gpumon": args.gpumon,
                        "runs": rows,
                        "mig_extra_ms_per_tick": delta,
                        "mig_extra_us_per_instance": 1000 * delta / n,
                        "ratio": mig["cpu_per_tick_ms"] / plain["cpu_per_tick_ms"],
                        "scenario_mig": split.read_text(),
                    }),
                    indent=2,
                )
                + "\n"
            )


if __name__ == "__main__":
    main()
