"""Read a gpumon file back with the tools users use and print what each one saw, as JSON.

usage: readback.py FILE.parquet|FILE.csv
The Rust integration tests run this and assert on the JSON; nothing is asserted here.
"""
import json
import sys


def parquet(path):
    import duckdb
    import pandas as pd
    import polars as pl
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    md = pq.read_metadata(path)
    out = {
        "pyarrow": {
            "rows": t.num_rows,
            "types": {f.name: str(f.type) for f in t.schema},
            "field_meta": {
                f.name: {k.decode(): v.decode() for k, v in (f.metadata or {}).items()} for f in t.schema
            },
            "file_meta": {
                k.decode(): v.decode()
                for k, v in (md.metadata or {}).items()
                if not k.startswith(b"ARROW:")
            },
            "columns": {
                name: [v.isoformat() if hasattr(v, "isoformat") else v for v in t.column(name).to_pylist()]
                for name in t.column_names
            },
            "row_groups": md.num_row_groups,
            "encodings": {
                md.row_group(0).column(i).path_in_schema: list(md.row_group(0).column(i).encodings)
                for i in range(md.num_columns)
            } if md.num_row_groups else {},
        }
    }
    df = pd.read_parquet(path)
    out["pandas"] = {"rows": len(df), "dtypes": {c: str(t) for c, t in df.dtypes.items()}}
    pf = pl.read_parquet(path)
    out["polars"] = {"rows": pf.height, "dtypes": {c: str(t) for c, t in zip(pf.columns, pf.dtypes)}}
    con = duckdb.connect()
    rel = con.sql(f"SELECT * FROM read_parquet('{path}')")
    out["duckdb"] = {
        "rows": con.execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchone()[0],
        "types": {c: str(t) for c, t in zip(rel.columns, rel.types)},
    }
    return out


def csv(path):
    import pandas as pd

    df = pd.read_csv(path)
    ts = pd.to_datetime(df["timestamp"], utc=True, format="ISO8601") if "timestamp" in df else None
    return {
        "pandas": {
            "rows": len(df),
            "dtypes": {c: str(t) for c, t in df.dtypes.items()},
            "timestamp_parsed": ts is not None and not ts.isna().any(),
            "columns": {c: [None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in df[c]] for c in df.columns},
        }
    }


if __name__ == "__main__":
    p = sys.argv[1]
    print(json.dumps(parquet(p) if p.endswith(".parquet") else csv(p)))
