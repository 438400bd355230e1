"""gpumon.progress() and Recording.progress() of the Python module against a real recording.

    PYTHONPATH=python GPUMON_BIN=... GPUMON_NVML_LIB=... FAKE_NVML_SCENARIO=... python3 tests/py/progress_module.py WORKDIR

Run by tests/cli/progress.rs; asserts here, prints what it saw as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

import gpumon


def main() -> None:
    out = Path(sys.argv[1]) / "nb.parquet"
    assert gpumon.progress(samples=1, missing_ok=True) is False, "no recording: False when that is fine"
    for bad in ({"samples": -1}, {"samples": float("nan")}, {"Samples": 1}, {"samples": "3"}):
        try:
            gpumon.progress(**bad)  # type: ignore[arg-type]
            raise AssertionError(f"{bad} was sent")
        except ValueError:
            pass
    with gpumon.recording(out, interval=0.2, show=False, extra_args=["--progress", "samples,tokens"]) as rec:
        time.sleep(0.5)
        assert rec.progress(samples=10, tokens=2.5)
        time.sleep(0.5)
        assert gpumon.progress(samples=5)  # the latest recording of this process
        try:
            gpumon.progress(steps=1)
            raise AssertionError("an undeclared counter was taken")
        except gpumon.GpumonError as e:
            refused = str(e)
        time.sleep(0.5)
    t = pq.read_table(out)
    assert t.schema.field("progress.samples").type == "double", t.schema
    counted = rec.summary["progress"] if rec.summary else None
    print(json.dumps({"file_sum": sum(v for v in t.column("progress.tokens").to_pylist() if v is not None),
                      "summary": counted, "refused": refused}))


main()
