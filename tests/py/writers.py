"""Files as other tools write them, for the reader tests: row-group and file seams, GPUs in later row
groups, every codec, decimal and float16 columns, CSV timestamps of polars and DuckDB, rows grouped
by GPU, an empty companion, rows without a host.

usage: writers.py CASE OUTDIR
       writers.py inspect FILE

Writes the case's files under OUTDIR and prints a JSON object naming them (and any figure the test
derives from the written data); nothing is asserted here.
"""
import json
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

T0 = 1_796_394_585_209_000  # 2026-12-04T14:29:45.209Z in µs
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


def identity(out):
    """GPU identity in later row groups: 2 hosts x 4 GPUs, rows sorted by host and GPU in row groups
    of 500 rows (`sorted.parquet`); and 8 GPUs x 30,000 ticks in time order (`big.parquet`), enough
    for gpumon's own writer to cut several row groups when it converts them."""
    rng = np.random.default_rng(3)
    hosts, gpus, ticks = ["a", "b"], 4, 600
    rows = [(h, g, t) for h in hosts for g in range(gpus) for t in range(ticks)]
    uuid = lambda h, g: f"GPU-{h}{g}-0000-1111-2222-333344445555"
    t = pa.table(
        {
            "timestamp": pa.array([T0 + t * 1_000_000 for _, _, t in rows], UTC),
            "host": pa.array([h for h, _, _ in rows]),
            "index": pa.array([g for _, g, _ in rows], pa.int32()),
            "uuid": pa.array([uuid(h, g) for h, g, _ in rows]),
            "name": pa.array([f"NVIDIA H100 {g}" for _, g, _ in rows]),
            "utilization.gpu": pa.array(rng.integers(0, 101, len(rows)), pa.int16()),
        }
    )
    pq.write_table(t, os.path.join(out, "sorted.parquet"), row_group_size=500)
    gpus, ticks = 8, 30_000
    n = gpus * ticks
    big = pa.table(
        {
            "timestamp": stamps(ticks, gpus),
            "host": pa.array(["h"] * n),
            "index": pa.array(np.tile(np.arange(gpus, dtype=np.int32), ticks)),
            "uuid": pa.array([uuid("h", g) for g in range(gpus)] * ticks),
            "name": pa.array(["NVIDIA H100 80GB HBM3"] * n),
            "pci.bus_id": pa.array([f"00000000:{g:02X}:00.0" for g in range(gpus)] * ticks),
            "power.draw": pa.array(rng.random(n) * 700),
            "memory.used": pa.array(rng.integers(0, 80_000, n), pa.int32()),
        }
    )
    pq.write_table(big, os.path.join(out, "big.parquet"), row_group_size=50_000)
    return {"uuid": {h: [uuid(h, g) for g in range(4)] for h in hosts}}


def metrics(ticks=3000, gpus=4, seed=5):
    """A time-ordered table of `gpus` GPUs with nulls, float and integer columns."""
    rng = np.random.default_rng(seed)
    n = ticks * gpus
    mask = rng.random(n) < 0.05
    return pa.table(
        {
            "timestamp": stamps(ticks, gpus),
            "host": pa.array(["h"] * n),
            "index": pa.array(np.tile(np.arange(gpus, dtype=np.int32), ticks)),
            "utilization.gpu": pa.array(rng.integers(0, 101, n).astype(np.int16), mask=mask),
            "memory.used": pa.array(rng.integers(0, 80_000, n).astype(np.int32)),
            "power.draw": pa.array(np.round(rng.random(n) * 700, 3), mask=mask),
            "energy.total": pa.array(np.repeat(np.arange(ticks) * 150.0, gpus) + 1e6),
        }
    )


def codecs(out):
    """One table with every codec pyarrow offers (zstd is the reference)."""
    t = metrics()
    names = []
    for codec, version in [("zstd", "1.0"), ("gzip", "1.0"), ("gzip", "2.0"), ("brotli", "1.0"), ("brotli", "2.0")]:
        name = f"{codec}-v{version[0]}.parquet"
        pq.write_table(t, os.path.join(out, name), compression=codec, data_page_version=version, row_group_size=5000)
        names.append(name)
    return {"files": names}


def decimals(out):
    """The metrics table with its numbers as decimals of several precisions and scales (stored as
    fixed-length bytes, and as integers where they fit) and half floats; `clocks.sm` as a date, a
    type no field can use. `float.parquet` holds the same values as floats."""
    t = metrics()
    t = t.set_column(t.schema.get_field_index("utilization.gpu"), "utilization.gpu",
                     t["utilization.gpu"].cast(pa.float16()))
    n = t.num_rows
    days = pa.array(np.arange(n) % 1000, pa.int32()).cast(pa.date32())
    pq.write_table(t, os.path.join(out, "float.parquet"), row_group_size=5000)
    d = t
    for col, ty in [
        ("power.draw", pa.decimal128(12, 3)),
        ("energy.total", pa.decimal256(40, 3)),
        ("memory.used", pa.decimal128(10, 0)),
    ]:
        d = d.set_column(d.schema.get_field_index(col), col, d[col].cast(ty))
    d = d.append_column("clocks.sm", days)
    pq.write_table(d, os.path.join(out, "decimal.parquet"), row_group_size=5000)
    pq.write_table(d, os.path.join(out, "decimal-int.parquet"), row_group_size=5000, store_decimal_as_integer=True)
    return {"files": ["decimal.parquet", "decimal-int.parquet"]}


def csvstamps(out):
    """The metrics table as CSV by polars and by DuckDB (each writes its own timestamp style), the
    Parquet it came from, and a CSV whose timestamps no reader knows."""
    import duckdb
    import polars as pl

    t = metrics(ticks=500)
    pq.write_table(t, os.path.join(out, "ref.parquet"))
    pl.from_arrow(t).write_csv(os.path.join(out, "polars.csv"))
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.register("t", t)
    con.execute(f"COPY t TO '{os.path.join(out, 'duckdb.csv')}' (HEADER, DELIMITER ',')")
    with open(os.path.join(out, "bad.csv"), "w") as f:
        f.write("timestamp,host,index,utilization.gpu\n")
        for k in range(5):
            f.write(f"04/12/2026 14h{k:02d},h,0,{k}\n")
    firsts = {}
    for name in ["polars.csv", "duckdb.csv"]:
        with open(os.path.join(out, name)) as f:
            firsts[name] = f.read().splitlines()[1].split(",")[0]
    return {"files": ["polars.csv", "duckdb.csv"], "first": firsts}


def bygpu(out):
    """600 ticks of 4 GPUs with host columns, in time order (`time.parquet`) and sorted by GPU
    (`gpu.parquet`, row groups of 500 rows); GPU 3 lost after tick 300."""
    t = metrics(ticks=600, gpus=4)
    rng = np.random.default_rng(9)
    cpu = np.repeat(np.round(rng.random(600) * 100, 1), 4)
    t = t.append_column("cpu.util", pa.array(cpu))
    keep = ~((np.tile(np.arange(4), 600) == 3) & (np.repeat(np.arange(600), 4) >= 300))
    t = t.filter(pa.array(keep))
    pq.write_table(t, os.path.join(out, "time.parquet"))
    pq.write_table(t.sort_by([("index", "ascending"), ("timestamp", "ascending")]),
                   os.path.join(out, "gpu.parquet"), row_group_size=500)
    return {"ticks": 600}


def emptyprocs(out):
    """A recording whose per-process companion has no rows (pyarrow writes one empty row group with
    empty column chunks at offset 0), and a zero-row metrics file beside a full one."""
    pq.write_table(metrics(ticks=100), os.path.join(out, "run.parquet"))
    procs = pa.table(
        {
            "timestamp": pa.array([], UTC),
            "host": pa.array([], pa.string()),
            "index": pa.array([], pa.int32()),
            "uuid": pa.array([], pa.string()),
            "proc.pid": pa.array([], pa.int32()),
            "proc.user": pa.array([], pa.string()),
            "proc.gpu_memory": pa.array([], pa.int32()),
            "proc.sm": pa.array([], pa.int16()),
        }
    )
    # Without dictionaries every column chunk is empty: offset 0, 0 bytes.
    pq.write_table(procs, os.path.join(out, "run.procs.parquet"), use_dictionary=False)
    pq.write_table(metrics(ticks=100).slice(0, 0), os.path.join(out, "empty.parquet"), use_dictionary=False)
    md = pq.ParquetFile(os.path.join(out, "run.procs.parquet")).metadata
    chunk = md.row_group(0).column(0) if md.num_row_groups else None
    return {"row_groups": md.num_row_groups, "chunk": [chunk.data_page_offset, chunk.total_compressed_size] if chunk else None}


def nullhost(out):
    """Three blocks of 100 ticks: host `a`, rows without a host, host `b` (`mixed.parquet`: the rows
    without one belong to the file's default host, `mixed`); as one row group and as row groups of
    100 rows, and as CSV."""
    t = metrics(ticks=300, gpus=1)
    hosts = ["a"] * 100 + [None] * 100 + ["b"] * 100
    t = t.set_column(t.schema.get_field_index("host"), "host", pa.array(hosts, pa.string()))
    pq.write_table(t, os.path.join(out, "mixed.parquet"))
    os.makedirs(os.path.join(out, "groups"), exist_ok=True)
    pq.write_table(t, os.path.join(out, "groups", "mixed.parquet"), row_group_size=100)
    import pyarrow.csv as pacsv

    pacsv.write_csv(t, os.path.join(out, "mixed.csv"))
    return {"hosts": ["a", "mixed", "b"]}


def days(out):
    """One host and GPU over two days as two files: day 1 ticks 0-99, day 2 ticks 100-199, 60 s
    apart, `energy.total` 100 J x tick, null on day 2's first row, a host column (`cpu.util`): as
    Parquet with row-group statistics (`stats/`), without them (`nostats/`), and as CSV (`csv/`)."""
    n = 200
    tick = np.arange(n, dtype=np.int64)
    mask = np.zeros(n, dtype=bool)
    mask[100] = True
    t = pa.table(
        {
            "timestamp": pa.array(T0 + tick * 60_000_000, UTC),
            "host": pa.array(["h"] * n),
            "index": pa.array(np.zeros(n, dtype=np.int32)),
            "power.draw": pa.array(np.full(n, 150.0)),
            "energy.total": pa.array(100.0 * tick, mask=mask),
            "cpu.util": pa.array(np.round((tick % 7) * 10.0, 1)),
        }
    )
    import pyarrow.csv as pacsv

    for d in ["stats", "nostats", "csv"]:
        os.makedirs(os.path.join(out, d), exist_ok=True)
    for k, part in enumerate([t.slice(0, 100), t.slice(100)], start=1):
        pq.write_table(part, os.path.join(out, "stats", f"day{k}.parquet"))
        pq.write_table(part, os.path.join(out, "nostats", f"day{k}.parquet"), write_statistics=False)
        pacsv.write_csv(part, os.path.join(out, "csv", f"day{k}.csv"))
    return {"wh": 100.0 * (n - 1) / 3600.0, "ticks": n}


def inspect(path):
    """Row groups and null counts per column of a Parquet file."""
    f = pq.ParquetFile(path)
    t = f.read()
    return {"row_groups": f.num_row_groups, "rows": t.num_rows, "nulls": {c: t[c].null_count for c in t.column_names}}


CASES = {"seams": seams, "identity": identity, "codecs": codecs, "decimals": decimals, "csvstamps": csvstamps, "bygpu": bygpu, "emptyprocs": emptyprocs, "nullhost": nullhost, "days": days, "inspect": inspect}


def main():
    case, out = sys.argv[1], sys.argv[2]
    if case != "inspect":
        os.makedirs(out, exist_ok=True)
    print(json.dumps(CASES[case](out)))


if __name__ == "__main__":
    main()
