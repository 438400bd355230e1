#!/usr/bin/env python3
"""Instructions per tick of `gpumon record`, counted by callgrind: a figure that does not move with the
machine's load, for comparing builds where CPU time moves by +-30 % from run to run.

For each recording below and each binary given, two runs of N1 and N2 ticks under
`valgrind --tool=callgrind` (user-space instructions of every thread, the kernel not included);
instructions per tick = (I(N2) - I(N1)) / (N2 - N1), so start-up and close cancel out.

| recording | command |
|---|---|
| host-only CSV | `record -q -i 20ms --count N -o x.csv` (no loadable NVML) |
| host-only Parquet | the same with `-o x.parquet` (one flush a 10 s: none in these runs but the close) |
| host-only Parquet, flush every 10 ticks | `--flush 200ms`: per tick plus a tenth of a flush |
| 8 fake GPUs, the nvidia-ml-py loop's fields, CSV | `record -q -i 100ms --fields <gpu_peers.py's LOOP_FIELDS>` on tests/fake-nvml (8 x H100) |
| 8 fake GPUs, default fields, Parquet | `record -q -i 100ms -o x.parquet` (every default field) |
| 8 fake GPUs, default fields less the board configuration, Parquet | the same with `--fields` = the default list less `BOARD` (clocks.max.sm, the PCIe link and the power limits): what those fields cost per tick |

Half of the 8-GPU figure is the fake library itself (the same for every NVML client).

usage: python3 bench/tick_instructions.py [--gpumon BIN ...] [--fake-nvml LIB] [--json OUT]
needs: valgrind; cargo build --release && cargo build --release -p fake-nvml
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_peers  # noqa: E402  (LOOP_FIELDS)
import record as rb  # noqa: E402  (the 8-GPU scenario, default paths)
from portable import portable  # noqa: E402  (results without this machine's paths)

CASES = [
    # name, interval, N1, N2, extra args, output suffix, needs the fake NVML
    ("host-only CSV", "20ms", 21, 221, [], "csv", False),
    ("host-only Parquet", "20ms", 21, 221, [], "parquet", False),
    ("host-only Parquet, flush every 10 ticks", "20ms", 21, 221, ["--flush", "200ms"], "parquet", False),
    ("8 fake GPUs, loop's fields, CSV", "100ms", 21, 121, ["--fields", gpu_peers.LOOP_FIELDS], "csv", True),
    ("8 fake GPUs, default fields, Parquet", "100ms", 21, 121, [], "parquet", True),
    ("8 fake GPUs, default fields less the board configuration, Parquet", "100ms", 21, 121, ["--fields", "DEFAULT-BOARD"], "parquet", True),
]


# The board's configuration, recorded by default (the fixed ones read once) since 0.1.0 of 2026-12-06.
BOARD = ["clocks.max.sm", "pcie.link.gen.current", "pcie.link.gen.max", "pcie.link.width.current",
         "pcie.link.width.max", "power.default_limit", "power.max_limit"]


def default_fields(gpumon: str, board: bool) -> str:
    """The binary's default field list (`gpumon fields --format json`), less BOARD unless `board`."""
    out = subprocess.run([gpumon, "fields", "--format", "json"], capture_output=True, text=True, check=True).stdout
    names = [f["name"] for f in json.loads(out) if f.get("default")]
    return ",".join(n for n in names if board or n not in BOARD)


def instructions(gpumon: str, interval: str, n: int, extra: list[str], out: Path, env: dict) -> int:
    cg = out.with_suffix(".callgrind")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", gpumon, "record", "-q", "-i", interval,
           "--count", str(n), *extra, "-o", str(out)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit(f"error: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpumon", action="append", help="a gpumon binary (repeat to compare builds)")
    ap.add_argument("--fake-nvml", default=str(rb.DEFAULT_FAKE))
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args()
    bins = args.gpumon or [str(rb.DEFAULT_GPUMON)]
    results: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="gpumon-instr-") as d:
        tmp = Path(d)
        scenario = tmp / "scenario-8gpu.txt"
        scenario.write_text(rb.scenario_text(gpu_peers.NGPUS))
        base = {k: v for k, v in os.environ.items() if k not in ("GPUMON_NVML_LIB", "FAKE_NVML_SCENARIO")}
        # Host-only: a library path that does not exist (one clear warning, no GPU columns filled).
        host_env = {**base, "GPUMON_NVML_LIB": str(tmp / "no-libnvidia-ml.so.1")}
        gpu_env = {**base, "GPUMON_NVML_LIB": str(Path(args.fake_nvml).resolve()), "FAKE_NVML_SCENARIO": str(scenario)}
        for name, interval, n1, n2, extra, suffix, gpus in CASES:
            for i, b in enumerate(bins):
                env = gpu_env if gpus else host_env
                args_b = ["--fields", default_fields(b, False)] if extra == ["--fields", "DEFAULT-BOARD"] else extra
                counts = [instructions(b, interval, n, args_b, tmp / f"r{i}-{n}.{suffix}", env) for n in (n1, n2)]
                per_tick = (counts[1] - counts[0]) // (n2 - n1)
                results.setdefault(name, {})[b] = per_tick
                for f in tmp.glob(f"*r{i}-*"):
                    if f.is_file() and f != scenario:
                        f.unlink()
    width = max(len(n) for n in results)
    print(f"instructions per tick (callgrind, user space), {' | '.join(bins)}")
    for name, per in results.items():
        figs = [per[b] for b in bins]
        ratio = f"   {figs[0] / figs[1]:.3f}x of the second" if len(figs) == 2 and figs[1] else ""
        print(f"  {name:<{width}}  " + "  ".join(f"{x:>9,}" for x in figs) + ratio)
    if args.json:
        Path(args.json).write_text(json.dumps(portable({"binaries": bins, "per_tick": results}), indent=1) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
