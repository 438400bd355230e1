"""gpumon.mark() and gpumon.live() of the Python module against a real recording (the fake NVML).

    PYTHONPATH=python GPUMON_BIN=... GPUMON_NVML_LIB=... FAKE_NVML_SCENARIO=... python3 tests/py/experiments_module.py WORKDIR

Run by tests/cli/experiments.rs; asserts here, prints what it saw as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

import gpumon


def until(cond, timeout=10.0):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def main() -> None:
    work = Path(sys.argv[1])
    out = work / "nb.parquet"
    # No recording to mark: False when that is fine, else gpumon's usage error.
    assert gpumon.mark("bs=1", missing_ok=True) is False
    try:
        gpumon.mark("bs=1")
        raise AssertionError("marking without a recording must fail")
    except gpumon.GpumonError as e:
        assert e.returncode == 2 and "no recording is listening" in e.stderr, e.stderr
    for bad in ["", "a\nb", "x" * 201]:
        try:
            gpumon.mark(bad)
            raise AssertionError(f"label {bad!r} must be refused")
        except ValueError:
            pass

    shown = []
    with gpumon.recording(out, interval=0.2, follow=False, show=False) as rec:
        # The chart starts on a status document with a row: a write landing between its first two
        # reads (before `shown` is attached below) would be a frame no display received.
        until(lambda: (gpumon.status(out) or {}).get("ticks", 0) > 0)
        chart = gpumon.live(every=0.1)
        chart._shows.append(shown.append)  # what a notebook display would get
        assert gpumon.mark("bs=32") is True
        until(lambda: chart.history and chart.history[-1][1] == "bs=32")
        assert rec.mark("bs=64") is True
        until(lambda: chart.history and chart.history[-1][1] == "bs=64")
        page = chart.html()
        time.sleep(0.5)
    chart.wait(10)
    assert chart.ended, chart
    assert "ended" in shown[-1], shown[-1][:300]
    for want in ["phase <b>bs=64</b>", "util 55%", "util 97%", "mem 20480/81920 MiB", "260.5 W", "<polyline", ">bs=64</text>"]:
        assert want in page, (want, page[:2000])
    t = pq.read_table(out)
    phases = t.column("phase").to_pylist()
    # Marked right after the start: every row is bs=32 (an unmarked first row at most), then bs=64.
    first = phases.index("bs=64")
    assert set(phases[:first]) <= {None, "bs=32"} and "bs=32" in phases[:first], phases
    assert set(phases[first:]) == {"bs=64"}, phases
    marks = json.loads(pq.read_metadata(out).metadata[b"gpumon.marks"])
    assert [m["label"] for m in marks] == ["bs=32", "bs=64"], marks
    assert gpumon.status(out) is None, "the status file goes with the run"
    print(json.dumps({"frames": chart.frames, "shown": len(shown), "rows": t.num_rows, "phases": phases}))


if __name__ == "__main__":
    main()
