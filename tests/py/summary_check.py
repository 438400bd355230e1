"""Independent per-GPU figures for an nvidia-smi --format=csv log, computed with pandas/numpy, as JSON.

usage: summary_check.py LOG [--columns a,b,c] [--interleaved K]

The Rust integration tests compare `gpumon summarize --format json` against this; nothing is asserted
here. Definitions (the ones docs/summary-json.md states):
  - p95: nearest rank (numpy method="inverted_cdf")
  - interval: median of the positive steps between a GPU's consecutive samples
  - energy_wh: sum of power.draw[i] * step[i] over the positive steps no longer than 3 intervals
    (the power of a row covers the step that ends at it), / 3600
Parsing is written from scratch: header lines (repeated ones start a new run), `--columns` for
headerless logs, NUL bytes dropped, a last line without a newline dropped, units stripped from cells,
`[N/A]`-style cells missing; GPUs from the index column, else position modulo K within a run.
Timestamps are read as UTC (the tests run gpumon with --tz UTC).
"""
import json
import re
import sys

import numpy as np
import pandas as pd


def parse_args(argv):
    path = argv[1]
    columns = None
    k = None
    if "--columns" in argv:
        columns = [c.strip() for c in argv[argv.index("--columns") + 1].split(",")]
    if "--interleaved" in argv:
        k = int(argv[argv.index("--interleaved") + 1])
    return path, columns, k


def name_of(cell):
    return re.sub(r"\s*\[.*\]$", "", cell.strip())


def number(cell):
    cell = cell.strip()
    if not cell or cell.startswith("["):
        return np.nan
    m = re.match(r"^([-+0-9.eE]+)", cell)
    return float(m.group(1)) if m else np.nan


def main():
    path, columns, k = parse_args(sys.argv)
    raw = open(path, "rb").read().replace(b"\0", b"")
    text = raw.decode("utf-8", "replace")
    lines = text.split("\n")
    lines = lines[:-1]  # the part after the last newline is not a complete line
    header = columns
    records = []  # (run, position in run, dict)
    run, pos = 0, 0
    for line in lines:
        line = line.rstrip("\r")
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if "timestamp" in [name_of(c) for c in cells]:
            header = [name_of(c) for c in cells]
            run, pos = run + 1, 0
            continue
        if header is None or len(cells) != len(header):
            continue
        rec = dict(zip(header, cells))
        records.append((run, pos, rec))
        pos += 1
    df = pd.DataFrame([r[2] for r in records])
    df["_run"] = [r[0] for r in records]
    df["_pos"] = [r[1] for r in records]
    df["ts"] = pd.to_datetime(df["timestamp"], format="%Y/%m/%d %H:%M:%S.%f")
    if "index" in df.columns:
        df["gpu"] = df["index"].astype(int)
    elif k:
        df["gpu"] = df["_pos"] % k
    else:
        df["gpu"] = 0
    for c in ["utilization.gpu", "memory.used", "power.draw"]:
        if c in df.columns:
            df[c] = df[c].map(number)
    out = {}
    for gpu, g in df.groupby("gpu", sort=True):
        r = {"samples": int(len(g))}
        if "utilization.gpu" in g.columns:
            u = g["utilization.gpu"].dropna().to_numpy()
            if len(u):
                r["util_mean"] = float(u.mean())
                r["util_p50"] = float(np.percentile(u, 50, method="inverted_cdf"))
                r["util_p95"] = float(np.percentile(u, 95, method="inverted_cdf"))
                r["util_max"] = float(u.max())
                r["idle_pct"] = float((u < 5).mean() * 100)
        if "memory.used" in g.columns:
            r["mem_max"] = float(g["memory.used"].max())
        t = (g["ts"] - pd.Timestamp(0)).dt.total_seconds().to_numpy()
        step = np.diff(t)
        pos = step[step > 0]
        if len(pos):
            med = float(np.median(pos))
            r["interval_s"] = med
            r["gaps"] = int((pos > 3 * med).sum())
            if "power.draw" in g.columns:
                p = g["power.draw"].to_numpy()[1:]
                keep = (step > 0) & (step <= 3 * med) & ~np.isnan(p)
                r["energy_wh"] = float((p[keep] * step[keep]).sum() / 3600)
        out[str(gpu)] = r
    print(json.dumps({"gpus": out}))


if __name__ == "__main__":
    main()
