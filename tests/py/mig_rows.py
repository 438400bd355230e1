"""Read a gpumon Parquet file of a MIG node with pandas and print, as JSON, what a user sees per tick.

usage: mig_rows.py FILE.parquet
The Rust integration tests run this and assert on the JSON; nothing is asserted here.
"""
import json
import sys

import pandas as pd

df = pd.read_parquet(sys.argv[1])
ticks = []
for ts, g in df.groupby("timestamp", sort=True):
    rows = []
    for _, r in g.iterrows():
        rows.append({
            "index": int(r["index"]),
            "gi": None if pd.isna(r["mig.gi"]) else int(r["mig.gi"]),
            "ci": None if pd.isna(r["mig.ci"]) else int(r["mig.ci"]),
            "profile": None if pd.isna(r["mig.profile"]) else r["mig.profile"],
            "uuid": None if pd.isna(r["mig.uuid"]) else r["mig.uuid"],
            "memory.used": None if pd.isna(r["memory.used"]) else int(r["memory.used"]),
            "memory.total": None if pd.isna(r["memory.total"]) else int(r["memory.total"]),
            "utilization.gpu": None if pd.isna(r["utilization.gpu"]) else int(r["utilization.gpu"]),
            "power.draw": None if pd.isna(r["power.draw"]) else float(r["power.draw"]),
        })
    ticks.append(rows)
print(json.dumps({"columns": list(df.columns), "dtypes": {c: str(t) for c, t in df.dtypes.items()}, "ticks": ticks}))
