"""Files as other tools write them, for the reader tests: row-group and file seams, GPUs in later row
groups, every codec, decimal and float16 columns, CSV timestamps of polars and DuckDB, rows grouped
by GPU, an empty companion, rows without a host.

usage: writers.py CASE OUTDIR

Writes the case's files under OUTDIR and prints a JSON object naming them (and any figure the test
derives from the written data); nothing is asserted here.
"""
import json
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

T0 = 1_796_394_585_000_000  # 2026-12-04T14:29:45Z in µs
UTC = pa.timestamp("us", tz="UTC")


def stamps(ticks, gpus=1):
    return pa.array(np.repeat(T0 + np.arange(ticks, dtype=np.int64) * 1_000_000, gpus), UTC)


def seams(out):
    """1 GPU, 2000 ticks, +100 J a tick, the counter null at row 1000: one file in row groups of
    1000 rows, the same table as one row group, and as two pieces of one set split at the null."""
    n = 2000
    energy = 1_000.0 + 100.0 * np.arange(n)
    mask = np.zeros(n, dtype=bool)
    mask[1000] = True
    t = pa.table(
        {
            "timestamp": stamps(n),
            "host": pa.array(["h"] * n),
            "index": pa.array(np.zeros(n, dtype=np.int32)),
            "power.draw": pa.array(np.full(n, 200.0)),
            "energy.total": pa.array(energy, mask=mask),
        }
    )
    pq.write_table(t, os.path.join(out, "groups.parquet"), row_group_size=1000)
    pq.write_table(t, os.path.join(out, "whole.parquet"))
    os.makedirs(os.path.join(out, "set"), exist_ok=True)
    first = os.path.join(out, "set", "run.20261204T142945.000Z.parquet")
    second = os.path.join(out, "set", "run.20261204T144625.000Z.parquet")
    pq.write_table(t.slice(0, 1000), first)
    pq.write_table(t.slice(1000), second)
    os.utime(first, (1_000_000_000, 1_000_000_000))
    os.utime(second, (1_000_000_100, 1_000_000_100))
    return {"wh": (energy[-1] - energy[0]) / 3600.0}


CASES = {"seams": seams}


def main():
    case, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    print(json.dumps(CASES[case](out)))


if __name__ == "__main__":
    main()
