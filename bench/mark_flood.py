#!/usr/bin/env python3
"""A flood of phase marks against a recording: what it costs the recorder and the file.

Starts `gpumon record -i 0.1 --duration D -o DIR/run.parquet` under `/usr/bin/time -v`, sends N
marks in T seconds over its control socket (request lines on connections of 1,000 each, paced to
N/T a second), waits for the recording to end, and reports the recorder's peak RSS, the file's
size, ticks (rows) kept, marks kept and refused (footer, answers, stderr), the `ARROW:schema`
footer entry's size, and whether pandas reads the file.

usage: python3 bench/mark_flood.py [--gpumon BIN] [--marks 300000] [--seconds 30] [--duration 40]
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def control_socket(run: Path, timeout: float = 20.0) -> str:
    status = run.with_name(f".{run.name}.status")
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            doc = json.loads(status.read_bytes())
            if doc.get("control"):
                return doc["control"]
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    raise SystemExit(f"no status file naming a socket at {status}")


def flood(sock: str, marks: int, seconds: float) -> tuple[int, int]:
    """Send `marks` marks in about `seconds`; (accepted, refused) as the recorder answered."""
    ok = refused = 0
    per_conn = 1000
    t0 = time.monotonic()
    for start in range(0, marks, per_conn):
        n = min(per_conn, marks - start)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock)
        s.sendall("".join(f"mark flood-{start + i}\n" for i in range(n)).encode())
        s.shutdown(socket.SHUT_WR)
        buf = b""
        while chunk := s.recv(1 << 16):
            buf += chunk
        s.close()
        for line in buf.decode().splitlines():
            if line.startswith("ok "):
                ok += 1
            elif line.startswith("error: "):
                refused += 1
        # Pace to marks/seconds.
        due = t0 + (start + n) * seconds / marks
        if (wait := due - time.monotonic()) > 0:
            time.sleep(wait)
    return ok, refused


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumon", default=str(REPO / "target" / "debug" / "gpumon"))
    ap.add_argument("--marks", type=int, default=300_000)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--duration", type=float, default=40.0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        run = Path(d) / "run.parquet"
        p = subprocess.Popen(
            ["/usr/bin/time", "-v", a.gpumon, "record", "-q", "-i", "0.1", "--duration", f"{a.duration}s",
             "--phases", "-o", str(run)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        sock = control_socket(run)
        t0 = time.monotonic()
        ok, refused = flood(sock, a.marks, a.seconds)
        sent_s = time.monotonic() - t0
        _, err = p.communicate()
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
        import pyarrow.parquet as pq
        md = pq.read_metadata(run)
        kv = md.metadata or {}
        try:
            import pandas as pd
            pandas_ok = len(pd.read_parquet(run)) == md.num_rows
        except Exception as e:  # noqa: BLE001 (any failure to read is the answer)
            pandas_ok = f"failed: {e}"
        warned = [l for l in err.splitlines() if "marks refused" in l]
        out = {
            "gpumon": a.gpumon,
            "marks_sent": a.marks,
            "sent_in_s": round(sent_s, 1),
            "answered_ok": ok,
            "answered_refused": refused,
            "peak_rss_mib": round(rss / 1024, 1),
            "file_bytes": run.stat().st_size,
            "rows": md.num_rows,
            "marks_in_footer": len(json.loads(kv[b"gpumon.marks"])) if b"gpumon.marks" in kv else 0,
            "marks_dropped_in_footer": kv.get(b"gpumon.marks_dropped", b"").decode(),
            "arrow_schema_bytes": len(kv.get(b"ARROW:schema", b"")),
            "gpumon_marks_bytes": len(kv.get(b"gpumon.marks", b"")),
            "stderr_warning": warned,
            "pandas_reads_it": pandas_ok,
            "exit": p.returncode,
        }
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
