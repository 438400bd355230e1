"""gpumon.summary(by='phase'), gpumon.compare(), Recording(overwrite=True) and GpumonNotFound of the
Python module, on a three-phase recording written by tests/cli/present.rs.

    PYTHONPATH=python GPUMON_BIN=... python3 tests/py/summary_module.py WORKDIR

Asserts here, prints what it saw as JSON.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import gpumon


def main() -> None:
    work = Path(sys.argv[1])
    run = work / "run.csv"
    s = gpumon.summary(run, by="phase", fail_if=["memory.used.max_pct > 90"])
    phases = [p["phase"] for p in s["phases"]]
    assert phases == [None, "warmup", "train", "eval"], phases
    assert s["comparison"]["baseline"] == "warmup", s["comparison"]
    assert s["checks"][0]["passed"] is False, s["checks"]
    c = gpumon.compare(f"{run}@warmup", f"{run}@train")
    assert [r["label"] for r in c["runs"]] == [f"{run}@warmup", f"{run}@train"], c["runs"]
    assert c["findings"][f"{run}@train"][0]["rule"] == "xid", c["findings"]

    # overwrite=True removes every piece of an earlier recording of the same name, companions too.
    rec = work / "rec" / "x.parquet"
    rec.parent.mkdir()
    earlier = [
        "x.parquet",
        "x.20261202T140000.123Z.parquet",
        "x.20261202T140000Z-1.parquet",
        "x.events.parquet",
        "x.procs.20261202T140000.123Z.parquet",
        ".x.20261202T140000.123Z.parquet.partial",
        ".x.parquet.journal",
    ]
    for name in earlier + ["x-other.parquet", "y.parquet"]:
        (rec.parent / name).write_bytes(b"")
    found = sorted(p.name for p in gpumon.Recording(rec, overwrite=True)._earlier_files())
    assert found == sorted(earlier), found

    # Not found: the message says how to get this project, not `pip install gpumon`.
    os.environ.pop("GPUMON_BIN", None)
    os.environ["PATH"] = str(work / "empty")
    try:
        gpumon.binary()
        raise AssertionError("no executable: GpumonNotFound")
    except gpumon.GpumonNotFound as e:
        msg = str(e)
    assert "pip install ." in msg and "unrelated" in msg, msg
    print(json.dumps({"phases": phases, "removed": len(found), "not_found": msg}))


if __name__ == "__main__":
    main()
