"""Read every visible gpumon file in each directory given, with pyarrow and DuckDB (Parquet)
or pandas (CSV), and print per directory: files, rows, distinct tick timestamps (epoch µs), and
any file a reader rejected. Used by the crash and rotation tests; asserts nothing itself."""
import json
import os
import sys


def read_dir(d):
    import duckdb
    import pandas as pd
    import pyarrow.parquet as pq

    out = {"files": [], "rows": 0, "ts": set(), "errors": [], "per_file": {}}
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name)
        if name.startswith(".") or not os.path.isfile(path) or name.endswith(".txt") or name.endswith(".log"):
            continue
        out["files"].append(name)
        try:
            if name.endswith(".parquet"):
                t = pq.read_table(path)
                n = duckdb.connect().execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchone()[0]
                if n != t.num_rows:
                    out["errors"].append(f"{name}: duckdb {n} rows, pyarrow {t.num_rows}")
                ts = t.column("timestamp").cast("int64").to_pylist()
            else:
                df = pd.read_csv(path)
                ts = pd.to_datetime(df["timestamp"], utc=True, format="ISO8601").dt.as_unit("us").astype("int64").tolist()
            out["rows"] += len(ts)
            out["ts"].update(ts)
            out["per_file"][name] = {"rows": len(ts), "min": min(ts) if ts else None, "max": max(ts) if ts else None}
        except Exception as e:  # noqa: BLE001 - report, the Rust test decides
            out["errors"].append(f"{name}: {type(e).__name__}: {e}")
    out["ts"] = sorted(out["ts"])
    return out


if __name__ == "__main__":
    print(json.dumps({d: read_dir(d) for d in sys.argv[1:]}))
