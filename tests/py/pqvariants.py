"""One table written by pyarrow in many page layouts (codecs, page versions, dictionary fallback,
page and row-group sizes), for a test that every layout summarizes to the same figures.

usage: pqvariants.py OUTDIR

Writes OUTDIR/<variant>.parquet, each holding the same 8-GPU table (interleaved rows, nulls in
several columns, runs and noise, narrow and wide integers, float32 and float64, UTC timestamps), and
prints the variant names as a JSON list; a variant named `lz4...` is the reference for those after it. The Rust test summarizes each
and compares the figures; nothing is asserted here.
"""
import json
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

TICKS = 9_000
GPUS = 8


def table():
    rng = np.random.default_rng(7)
    n = TICKS * GPUS
    ts = np.repeat(1_700_000_000_000_000 + np.arange(TICKS, dtype=np.int64) * 1_000_000, GPUS)
    # A gap and a repeated tick, so the timing has something to find.
    ts[GPUS * 4000 :] += 30_000_000
    index = np.tile(np.arange(GPUS, dtype=np.uint8), TICKS)
    busy = np.repeat(rng.random(TICKS // 50 + 1) < 0.7, 50)[:TICKS]
    util = np.where(np.repeat(busy, GPUS), rng.integers(80, 101, n), rng.integers(0, 5, n)).astype(np.uint8)
    mem = (np.repeat(rng.integers(10_000, 80_000, TICKS // 20 + 1), 20)[:TICKS].repeat(GPUS)).astype(np.uint32)
    power = (100 + 600 * rng.random(n)).astype(np.float32)
    temp = rng.integers(30, 90, n).astype(np.uint8)
    clocks = np.where(rng.random(n) < 0.9, 1980, rng.integers(300, 1980, n)).astype(np.uint16)
    cpu = np.round(100 * rng.random(n), 1)

    def nulls(a, every):
        mask = np.zeros(len(a), dtype=bool)
        mask[::every] = True
        return pa.array(a, mask=mask)

    return pa.table(
        {
            "timestamp": pa.array(ts, pa.timestamp("us", tz="UTC")),
            "index": pa.array(index),
            "utilization.gpu": nulls(util, 97),
            "utilization.memory": pa.array((util // 2).astype(np.uint8)),
            "memory.used": nulls(mem, 1013),
            "memory.total": pa.array(np.full(n, 81_559, dtype=np.uint32)),
            "temperature.gpu": pa.array(temp),
            "power.draw": nulls(power, 89),
            "clocks.sm": pa.array(clocks),
            "cpu.util": pa.array(cpu),
        }
    )


VARIANTS = {
    # The reference, with the row groups of the variants below it.
    "lz4": dict(compression="lz4"),
    "snappy-v1": dict(),
    "zstd-v2": dict(compression="zstd", data_page_version="2.0"),
    "plain-uncompressed": dict(compression="none", use_dictionary=False),
    "small-pages-dict-fallback": dict(
        compression="zstd", data_page_size=2048, dictionary_pagesize_limit=300, data_page_version="2.0"
    ),
    "lz4-small-row-groups": dict(compression="lz4", row_group_size=7_777),
    "small-row-groups": dict(compression="snappy", row_group_size=7_777, data_page_size=4096),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    t = table()
    for name, opts in VARIANTS.items():
        pq.write_table(t, os.path.join(out, f"{name}.parquet"), **opts)
    print(json.dumps(list(VARIANTS)))


if __name__ == "__main__":
    main()
