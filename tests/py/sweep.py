"""gpumon's own recording rewritten by pyarrow, pandas, polars, DuckDB and fastparquet with their
common settings, for a test that every rewrite summarizes to the same figures as the recording.

usage: sweep.py base OUTDIR          writes OUTDIR/base.parquet (4 GPUs x 300 ticks, gpumon's columns)
       sweep.py variants FILE OUTDIR rewrites FILE (gpumon's Parquet) into OUTDIR/<variant>.<ext>

`variants` prints a JSON object: `variants` (name, file, rel: the relative tolerance the rewrite's
types allow), `skipped` (name, reason: a variant the writer cannot produce), and `headline` (per GPU
index: mean and max utilization.gpu and counter energy in Wh, computed by DuckDB on FILE). Nothing
is asserted here.
"""
import csv
import json
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

GPUS, TICKS = 4, 300
T0 = 1_796_394_585_209  # 2026-12-04T14:29:45.209Z in ms
CODECS = ["none", "snappy", "gzip", "brotli", "zstd", "lz4"]
EXACT = 1e-9


def base(out):
    rng = np.random.default_rng(11)
    n = GPUS * TICKS
    idx = np.tile(np.arange(GPUS, dtype=np.int32), TICKS)
    mask = rng.random(n) < 0.03
    power = np.round(100 + 600 * rng.random(n), 2)
    energy = 5e6 + np.cumsum(np.round(power * 2, 2).reshape(TICKS, GPUS), axis=0).reshape(n)
    t = pa.table(
        {
            "timestamp": pa.array(np.repeat(T0 + np.arange(TICKS, dtype=np.int64) * 2000, GPUS) * 1000,
                                  pa.timestamp("us", tz="UTC")),
            "host": pa.array(["h"] * n),
            "index": pa.array(idx),
            "uuid": pa.array([f"GPU-{i}0000000-1111-2222-3333-444455556666" for i in idx]),
            "name": pa.array(["NVIDIA H100 80GB HBM3"] * n),
            "utilization.gpu": pa.array(rng.integers(0, 101, n).astype(np.int16), mask=mask),
            "memory.used": pa.array(rng.integers(0, 80_000, n).astype(np.int32)),
            "temperature.gpu": pa.array(rng.integers(30, 90, n).astype(np.int16)),
            "power.draw": pa.array(power, mask=mask),
            # Null counters on the first rows of GPUs 0 and 1 in the 5th block of 100 rows: a seam
            # when a writer cuts row groups of 100.
            "energy.total": pa.array(energy, mask=np.isin(np.arange(n), [400, 401, 801])),
        }
    )
    pq.write_table(t, os.path.join(out, "base.parquet"))


def retype(t, name, typ):
    i = t.schema.get_field_index(name)
    return t.set_column(i, name, pc.cast(t.column(name), typ)) if i >= 0 else t


def casts(t):
    """Tables whose column types differ from gpumon's, and the tolerance each cast allows."""
    ts = t.schema.field("timestamp").type
    out = {
        "float32": (retype(retype(t, "power.draw", pa.float32()), "energy.total", pa.float64()), 1e-6),
        "float16": (retype(t, "power.draw", pa.float16()), 1e-3),
        "decimal128": (retype(retype(t, "power.draw", pa.decimal128(12, 3)), "energy.total", pa.decimal128(20, 3)), EXACT),
        "ints-wide": (retype(retype(t, "utilization.gpu", pa.int64()), "memory.used", pa.int64()), EXACT),
        "ints-narrow": (retype(retype(t, "utilization.gpu", pa.uint8()), "memory.used", pa.uint32()), EXACT),
        "ts-ms": (retype(t, "timestamp", pa.timestamp("ms", tz="UTC")), EXACT),
        "ts-ns": (retype(t, "timestamp", pa.timestamp("ns", tz="UTC")), EXACT),
        "ts-naive": (retype(t, "timestamp", pa.timestamp(ts.unit)), EXACT),
        "ts-berlin": (retype(t, "timestamp", pa.timestamp(ts.unit, tz="Europe/Berlin")), EXACT),
        "large-string": (retype(retype(t, "host", pa.large_string()), "uuid", pa.large_string()), EXACT),
        "dict-strings": (t.set_column(t.schema.get_field_index("uuid"), "uuid", pc.dictionary_encode(t.column("uuid")))
                         .set_column(t.schema.get_field_index("name"), "name", pc.dictionary_encode(t.column("name"))), EXACT),
    }
    return out


def encodings(t):
    """pyarrow's column_encoding where each encoding is legal for the column's type."""
    enc = {}
    for f in t.schema:
        if pa.types.is_integer(f.type) or pa.types.is_timestamp(f.type):
            enc[f.name] = "DELTA_BINARY_PACKED"
        elif pa.types.is_floating(f.type):
            enc[f.name] = "BYTE_STREAM_SPLIT"
        elif pa.types.is_string(f.type):
            enc[f.name] = "DELTA_BYTE_ARRAY"
    plain = {k: "PLAIN" for k in enc}
    bss = {k: "BYTE_STREAM_SPLIT" for k, e in enc.items() if e != "DELTA_BYTE_ARRAY"}
    return {"delta-bss": enc, "plain": plain, "bss-all": bss}


def pyarrow_variants(t, add):
    for c in CODECS:
        for v in ["1.0", "2.0"]:
            add(f"pyarrow-{c}-v{v[0]}", "parquet", lambda p, c=c, v=v: pq.write_table(t, p, compression=c, data_page_version=v))
    add("pyarrow-nodict", "parquet", lambda p: pq.write_table(t, p, use_dictionary=False))
    for name, enc in encodings(t).items():
        add(f"pyarrow-enc-{name}", "parquet",
            lambda p, enc=enc: pq.write_table(t, p, use_dictionary=False, column_encoding=enc, data_page_version="2.0"))
    add("pyarrow-rg100-tinypages", "parquet",
        lambda p: pq.write_table(t, p, row_group_size=100, data_page_size=256, write_batch_size=16))
    add("pyarrow-large-rg", "parquet", lambda p: pq.write_table(t, p, row_group_size=1 << 24, data_page_size=1 << 22))
    add("pyarrow-nostats", "parquet", lambda p: pq.write_table(t, p, write_statistics=False))
    add("pyarrow-page-index", "parquet", lambda p: pq.write_table(t, p, write_page_index=True, row_group_size=300))
    add("pyarrow-int96", "parquet", lambda p: pq.write_table(t, p, use_deprecated_int96_timestamps=True))
    add("pyarrow-by-gpu-nostats", "parquet",
        lambda p: pq.write_table(t.sort_by("index"), p, row_group_size=100, write_statistics=False))
    add("pyarrow-by-gpu", "parquet",
        lambda p: pq.write_table(t.sort_by([("index", "ascending"), ("timestamp", "ascending")]), p, row_group_size=100))
    for name, (ct, rel) in casts(t).items():
        add(f"pyarrow-cast-{name}", "parquet", lambda p, ct=ct: pq.write_table(ct, p), rel)
    add("pyarrow-csv", "csv", lambda p: pcsv.write_csv(t, p))


def pandas_variants(t, add, skip):
    df = t.to_pandas()
    add("pandas-pyarrow", "parquet", lambda p: df.to_parquet(p, engine="pyarrow", index=False))
    add("pandas-csv", "csv", lambda p: df.to_csv(p, index=False))
    add("pandas-index", "parquet", lambda p: df.set_index("index", drop=False).rename_axis("i").to_parquet(p))
    add("pandas-csv-index", "csv", lambda p: df.to_csv(p))
    add("pandas-csv-crlf-quoted-bom", "csv",
        lambda p: df.to_csv(p, index=False, lineterminator="\r\n", quoting=csv.QUOTE_ALL, encoding="utf-8-sig"))
    add("pandas-csv-iso-z", "csv", lambda p: df.to_csv(p, index=False, date_format="%Y-%m-%dT%H:%M:%S.%fZ"))
    nullable = df.convert_dtypes()
    add("pandas-nullable", "parquet", lambda p: nullable.to_parquet(p, index=False))
    add("pandas-nullable-csv", "csv", lambda p: nullable.to_csv(p, index=False))
    naive = df.assign(timestamp=df["timestamp"].dt.tz_localize(None))
    add("pandas-naive-csv", "csv", lambda p: naive.to_csv(p, index=False))
    berlin = df.assign(timestamp=df["timestamp"].dt.tz_convert("Europe/Berlin"))
    add("pandas-berlin-csv", "csv", lambda p: berlin.to_csv(p, index=False))
    try:
        import fastparquet
    except ImportError as e:
        skip("fastparquet-*", f"fastparquet not importable: {e}")
        return
    for c in CODECS:
        codec = None if c == "none" else c.upper()
        add(f"fastparquet-{c}", "parquet", lambda p, codec=codec: fastparquet.write(p, df, compression=codec))
    add("fastparquet-rg100-nostats", "parquet",
        lambda p: fastparquet.write(p, df, row_group_offsets=100, stats=False))
    # fastparquet 2026.9 writes INT96 of microsecond datetimes (pandas 3's unit here) 1000x too small,
    # read back as 1970 by fastparquet, pyarrow and DuckDB alike: the INT96 file is written from ns.
    ns = df.assign(timestamp=df["timestamp"].dt.as_unit("ns"))
    add("fastparquet-int96", "parquet", lambda p: fastparquet.write(p, ns, times="int96"))
    skip("fastparquet-v2", "fastparquet writes version 1 data pages only (write() has no page-version option)")


def polars_variants(t, add):
    import polars as pl
    df = pl.from_arrow(t)
    for c in ["uncompressed", "snappy", "gzip", "brotli", "zstd", "lz4"]:
        add(f"polars-{c}", "parquet", lambda p, c=c: df.write_parquet(p, compression=c))
    add("polars-rg100-nostats", "parquet", lambda p: df.write_parquet(p, row_group_size=100, statistics=False))
    add("polars-tinypages", "parquet", lambda p: df.write_parquet(p, data_page_size=256, row_group_size=300))
    add("polars-by-gpu", "parquet", lambda p: df.sort(["index", "timestamp"]).write_parquet(p))
    add("polars-csv", "csv", lambda p: df.write_csv(p))


def duckdb_variants(src, add):
    import duckdb
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    q = f"SELECT * FROM read_parquet('{src}')"
    for c in ["uncompressed", "snappy", "gzip", "brotli", "zstd", "lz4"]:
        add(f"duckdb-{c}", "parquet", lambda p, c=c: con.execute(f"COPY ({q}) TO '{p}' (FORMAT parquet, COMPRESSION {c})"))
    add("duckdb-rg100-v2", "parquet",
        lambda p: con.execute(f"COPY ({q}) TO '{p}' (FORMAT parquet, ROW_GROUP_SIZE 100, PARQUET_VERSION v2)"))
    add("duckdb-per-thread-dir", "d",
        lambda p: con.execute(f"COPY ({q}) TO '{p}' (FORMAT parquet, PER_THREAD_OUTPUT, ROW_GROUP_SIZE 100)"))
    add("duckdb-by-gpu", "parquet",
        lambda p: con.execute(f"COPY ({q} ORDER BY \"index\", timestamp) TO '{p}' (FORMAT parquet)"))
    add("duckdb-decimal", "parquet", lambda p: con.execute(
        f"COPY (SELECT * REPLACE (CAST(\"power.draw\" AS DECIMAL(12,3)) AS \"power.draw\", "
        f"CAST(\"energy.total\" AS DECIMAL(18,3)) AS \"energy.total\") FROM read_parquet('{src}')) TO '{p}' (FORMAT parquet)"))
    add("duckdb-csv", "csv", lambda p: con.execute(f"COPY ({q}) TO '{p}' (FORMAT csv, HEADER)"))
    add("duckdb-types", "parquet", lambda p: con.execute(
        f"COPY (SELECT * REPLACE (CAST(timestamp AS TIMESTAMP_NS) AS timestamp, CAST(\"index\" AS HUGEINT) AS \"index\", "
        f"CAST(\"utilization.gpu\" AS UTINYINT) AS \"utilization.gpu\", CAST(\"memory.used\" AS UBIGINT) AS \"memory.used\") "
        f"FROM read_parquet('{src}')) TO '{p}' (FORMAT parquet)"))

    def berlin_csv(p):
        con.execute("SET TimeZone='Europe/Berlin'")
        con.execute(f"COPY ({q}) TO '{p}' (FORMAT csv, HEADER)")
        con.execute("SET TimeZone='UTC'")

    add("duckdb-berlin-csv", "csv", berlin_csv)


def headline(src):
    import duckdb
    rows = duckdb.sql(
        f"SELECT \"index\", avg(\"utilization.gpu\"), max(\"utilization.gpu\"), "
        f"(max(\"energy.total\") - min(\"energy.total\")) / 3600 FROM read_parquet('{src}') GROUP BY 1 ORDER BY 1"
    ).fetchall()
    return {str(i): {"util_mean": m, "util_max": x, "energy_wh": e} for i, m, x, e in rows}


def variants(src, out):
    os.makedirs(out, exist_ok=True)
    t = pq.read_table(src)
    made, skipped = [], []

    def skip(name, reason):
        skipped.append({"name": name, "reason": reason})

    def add(name, ext, write, rel=EXACT):
        path = os.path.join(out, f"{name}.{ext}")
        try:
            write(path)
        except Exception as e:  # a writer that refuses a setting: named, not silently dropped
            skip(name, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            return
        made.append({"name": name, "file": path, "rel": rel})

    pyarrow_variants(t, add)
    pandas_variants(t, add, skip)
    polars_variants(t, add)
    duckdb_variants(src, add)
    print(json.dumps({"variants": made, "skipped": skipped, "headline": headline(src)}))


def main():
    if sys.argv[1] == "base":
        base(sys.argv[2])
    else:
        variants(sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
