"""Arithmetic on gpumon files the way users write it, in pandas, polars and DuckDB, and print what
each tool computed as JSON. Differences that go negative must come out negative (unsigned columns
wrap to 246 in pandas/polars and make DuckDB fail with an overflow).

usage: arith.py FILE.parquet|FILE.csv ...
For each file and tool: `utilization.memory - utilization.gpu` and the row-to-row difference of
`memory.used` (GPU 0, in time order), or the error the tool raised. For Parquet files also the
Arrow schema metadata (pyarrow) and DataFrame.attrs (pandas). For every file, what `load` (one
pandas function for both formats) returns: column names and values. Asserts nothing itself.
"""
import json
import sys


def load(path):
    """One pandas function for gpumon CSV and Parquet: the column names are the same."""
    import pandas as pd

    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    df = pd.read_csv(path)
    df["timestamp"] = pd.to_datetime(df["timestamp"], utc=True, format="ISO8601")
    return df


def plain(v):
    """A JSON-friendly scalar (NaN and NA as None)."""
    import pandas as pd

    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return None
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v.item() if hasattr(v, "item") else v


def with_pandas(path):
    df = load(path)
    g = df[df["index"] == 0].sort_values("timestamp")
    return {
        "util_diff": [plain(v) for v in (g["utilization.memory"] - g["utilization.gpu"])],
        "mem_step": [plain(v) for v in g["memory.used"].diff().iloc[1:]],
    }


def with_polars(path):
    import polars as pl

    df = pl.read_parquet(path) if path.endswith(".parquet") else pl.read_csv(path)
    g = df.filter(pl.col("index") == 0).sort("timestamp")
    return {
        "util_diff": (g["utilization.memory"] - g["utilization.gpu"]).to_list(),
        "mem_step": g["memory.used"].diff().to_list()[1:],
    }


def with_duckdb(path):
    import duckdb

    src = f"read_parquet('{path}')" if path.endswith(".parquet") else f"read_csv('{path}')"
    rows = duckdb.connect().execute(
        f"""SELECT "utilization.memory" - "utilization.gpu",
                   "memory.used" - lag("memory.used") OVER (ORDER BY "timestamp")
            FROM {src} WHERE "index" = 0 ORDER BY "timestamp" """
    ).fetchall()
    return {"util_diff": [r[0] for r in rows], "mem_step": [r[1] for r in rows[1:]]}


def one(path):
    out = {}
    for name, f in [("pandas", with_pandas), ("polars", with_polars), ("duckdb", with_duckdb)]:
        try:
            out[name] = f(path)
        except Exception as e:  # reported, asserted on by the Rust test
            out[name] = {"error": f"{type(e).__name__}: {e}"}
    df = load(path)
    out["load"] = {"columns": list(df.columns), "values": {c: [plain(v) for v in df[c]] for c in df.columns}}
    if path.endswith(".parquet"):
        import pandas as pd
        import pyarrow.parquet as pq

        md = pq.read_table(path).schema.metadata or {}
        out["schema_metadata"] = {k.decode(): v.decode() for k, v in md.items()}
        out["pandas_attrs"] = {k: str(v) for k, v in pd.read_parquet(path).attrs.items()}
    return out


if __name__ == "__main__":
    print(json.dumps({p: one(p) for p in sys.argv[1:]}))
