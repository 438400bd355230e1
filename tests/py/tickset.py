"""Read gpumon files (or every visible file in the directories given) with the tools users use and
print, as JSON, every row's (timestamp in epoch µs, index, missed), sorted, plus per file: rows as
pyarrow, pandas and DuckDB each saw them, the first timestamp, whether a CSV starts with gpumon's header, holds NUL bytes
and ends on a whole line. Used by tests/cli/safety.rs; asserts nothing itself.

usage: tickset.py GROUP...   where a GROUP is PATH[:PATH...]; prints {GROUP: result}
"""
import json
import os
import sys


def files_of(paths):
    for p in paths:
        if os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                full = os.path.join(p, name)
                if name.startswith(".") or not os.path.isfile(full) or name.endswith((".txt", ".log", ".so", ".rc")):
                    continue
                yield full
        else:
            yield p


def read_csv(path, info):
    import duckdb
    import pandas as pd
    import pyarrow.csv as pc

    raw = open(path, "rb").read()
    info["nul"] = b"\0" in raw
    info["header"] = raw.split(b"\n", 1)[0].decode("utf-8", "replace")
    info["whole_lines"] = raw.endswith(b"\n") or not raw
    df = pd.read_csv(path)
    info["readers"] = {
        "pandas": len(df),
        "pyarrow": pc.read_csv(path).num_rows,
        "duckdb": duckdb.connect().execute(f"SELECT count(*) FROM read_csv('{path}', header=true)").fetchone()[0],
    }
    ts = pd.to_datetime(df["timestamp"], utc=True, format="ISO8601").dt.as_unit("us").astype("int64")
    return df, ts


def read_parquet(path, info):
    import duckdb
    import pandas as pd
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    df = pd.read_parquet(path)
    info["readers"] = {
        "pandas": len(df),
        "pyarrow": t.num_rows,
        "duckdb": duckdb.connect().execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchone()[0],
    }
    ts = t.column("timestamp").cast("int64")
    return df, ts.to_pandas()


def read_group(paths):
    out = {"files": {}, "errors": [], "rows": []}
    for path in files_of(paths):
        name = os.path.basename(path)
        info = {}
        try:
            df, ts = (read_parquet if ".parquet" in name else read_csv)(path, info)
            info["rows"] = len(df)
            info["first"] = int(ts.min()) if len(df) else None
            for t, i, m in zip(ts.tolist(), df["index"].tolist(), df["missed"].fillna(0).tolist()):
                out["rows"].append([int(t), int(i), int(m)])
        except Exception as e:  # noqa: BLE001 - reported, the Rust test decides
            out["errors"].append(f"{name}: {type(e).__name__}: {e}")
        out["files"][name] = info
    out["rows"].sort()
    return out


if __name__ == "__main__":
    print(json.dumps({g: read_group(g.split(":")) for g in sys.argv[1:]}))
