"""Checks of the `gpumon` Python module as installed from the wheel (run by scripts/test-install).

    VENV/bin/python tests/py/module_check.py WORKDIR

Runs with the venv's python, not activated (PATH without the venv), so the binary must be found
through the install scheme. Needs pandas and pyarrow in the venv.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import gpumon


def check_binary() -> None:
    exe = Path(gpumon.binary())
    assert exe.parent == Path(sys.executable).parent, f"{exe} is not the venv's own gpumon"
    assert gpumon.version().count(".") == 2, gpumon.version()

    # GPUMON_BIN wins; a wrong one is a clear error, not a fallback.
    os.environ["GPUMON_BIN"] = "/nonexistent/gpumon"
    try:
        gpumon.binary()
        raise AssertionError("a GPUMON_BIN that does not exist must fail")
    except gpumon.GpumonNotFound as e:
        assert "GPUMON_BIN=/nonexistent/gpumon" in str(e), e
    os.environ["GPUMON_BIN"] = str(exe)
    assert gpumon.binary() == str(exe)
    del os.environ["GPUMON_BIN"]

    # No executable anywhere: one clear error that says how to get one.
    import gpumon._bin as b

    saved, path = b._candidates, os.environ["PATH"]
    b._candidates, os.environ["PATH"] = list, "/nonexistent"
    try:
        gpumon.version()
        raise AssertionError("without an executable gpumon.version() must fail")
    except gpumon.GpumonNotFound as e:
        assert "pip install gpumon" in str(e) and "GPUMON_BIN" in str(e), e
    finally:
        b._candidates, os.environ["PATH"] = saved, path

    # gpumon's own errors come back with its message and exit code.
    try:
        gpumon.summary("/nonexistent/run.parquet")
        raise AssertionError("summarizing a missing file must fail")
    except gpumon.GpumonError as e:
        assert e.returncode == 2 and "run.parquet" in e.stderr, (e.returncode, e.stderr)

    # python -m gpumon is the command.
    out = subprocess.run([sys.executable, "-m", "gpumon", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith(gpumon.version()), out.stdout


def check_crash_left_set(work: Path) -> None:
    """read() and summary() take a rotated set whose last file a kill -9 left open (journal only)."""
    path = work / "crash" / "run.parquet"
    path.parent.mkdir(parents=True)
    proc = subprocess.Popen(
        [gpumon.binary(), "record", "-q", "-i", "200ms", "--flush", "200ms", "-o", str(path)],
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)
    proc.send_signal(signal.SIGHUP)  # rotate: the first file is closed, a second one begins
    time.sleep(1.5)
    proc.kill()  # no chance to close the second file
    proc.wait()
    names = sorted(p.name for p in path.parent.iterdir())
    assert any(n.endswith(".journal") for n in names), f"kill -9 should leave a journal: {names}"
    df = gpumon.read(path)
    import pandas as pd

    closed = len(pd.read_parquet(path))  # the first file alone; read() adds the journal's rows
    assert len(df) > closed >= 3, (len(df), closed, names)
    assert str(df["timestamp"].dtype) == "datetime64[us, UTC]", df["timestamp"].dtype
    assert df["timestamp"].is_monotonic_increasing
    s = gpumon.summary(path)
    kinds = sorted(i["kind"] for i in s["inputs"])
    assert "journal" in kinds and "parquet" in kinds, kinds
    assert sum(i["rows"] for i in s["inputs"]) == len(df)
    print(f"crash-left set: {names}, read() {len(df)} rows ({closed} in the closed file)")


def check_recording(work: Path) -> None:
    path = work / "rec" / "block.parquet"
    buf = io.StringIO()
    with redirect_stdout(buf), gpumon.recording(path, interval=0.25) as rec:
        time.sleep(1.6)
    assert rec.returncode == 0, rec.stderr
    assert rec.summary is not None and rec.summary["schema"] == "gpumon.summary/1"
    rows = sum(i["rows"] for i in rec.summary["inputs"])
    assert 4 <= rows <= 8, rows
    assert "gpumon summary" in buf.getvalue(), "outside Jupyter the summary table is printed"
    df = rec.read()
    assert len(df) == rows and df["job.rss"].notna().all(), df.get("job.rss")
    rep = rec.report()
    assert rep.path.is_file() and rep._repr_html_().startswith("<iframe")

    # Re-running the block records afresh (one file, earlier rotated files and crash leftovers
    # gone), and an exception still closes the file.
    for leftover in ("block.20260101T000000Z.parquet", ".block.20260101T000000Z.parquet.journal"):
        (path.parent / leftover).write_bytes(b"")
    (path.parent / "other.parquet").write_bytes(b"")
    try:
        with gpumon.recording(path, interval=0.25, show=False) as rec2:
            time.sleep(0.8)
            raise KeyError("inside the block")
    except KeyError:
        pass
    assert rec2.returncode == 0 and rec2.summary is not None
    assert sum(i["rows"] for i in rec2.summary["inputs"]) < rows, "the first recording was replaced"
    left = sorted(p.name for p in path.parent.iterdir() if p.suffix == ".parquet" or p.name.startswith("."))
    assert left == ["block.parquet", "other.parquet"], left

    # A block shorter than one interval: no row, no summary, no error.
    with gpumon.recording(work / "rec" / "short.parquet", interval=5, show=False) as rec3:
        pass
    assert rec3.returncode == 0
    print(f"recording: {rows} rows in 1.6 s at 250 ms; short block summary = {rec3.summary is not None}")


def main() -> None:
    work = Path(sys.argv[1])
    check_binary()
    check_crash_left_set(work)
    check_recording(work)
    print("module ok")


if __name__ == "__main__":
    main()
