"""The recorder's control socket and status file, shared by marks, live charts and work counters.

A recorder keeps a small status file beside its output (``.run.parquet.status``, JSON: the latest
row of every GPU, the phase, the control socket) and listens for one-line requests (``mark LABEL``,
``end``, ``progress KEY=N``) on that control socket; a wrapped job finds the socket in
``$GPUMON_CONTROL``. :data:`ACTIVE` lists the recordings this process started, latest last. This
module imports nothing else of the package but ``_bin``.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from ._bin import StrPath

#: Environment variable a command started by ``gpumon record ... -- CMD`` inherits.
CONTROL_ENV = "GPUMON_CONTROL"

#: The recordings (:class:`gpumon.Recording`) this process started and has not stopped, latest
#: last: where :func:`gpumon.mark` and :func:`gpumon.progress` go when no run is named.
ACTIVE: List[Any] = []


def status_path(run: StrPath) -> Path:
    """The status file the recorder of ``run`` (the ``-o`` of ``gpumon record``) keeps beside it."""
    p = Path(run)
    return p.with_name(f".{p.name}.status")


def status(run: StrPath) -> Optional[Dict[str, Any]]:
    """The recorder's latest status document for ``run``, or None when nobody is recording it."""
    try:
        doc: Dict[str, Any] = json.loads(status_path(run).read_bytes())
        return doc
    except (OSError, ValueError):
        return None


def _control(run: Optional[StrPath], wait: float) -> Optional[str]:
    """The control socket of ``run`` (from its status file, waiting up to ``wait`` s for one that a
    just started recorder has not written yet), else of ``$GPUMON_CONTROL``."""
    if run is None:
        return os.environ.get(CONTROL_ENV) or None
    end = time.monotonic() + wait
    while True:
        doc = status(run)
        if doc and doc.get("control"):
            return str(doc["control"])
        if time.monotonic() >= end:
            return None
        time.sleep(0.02)


def request(path: str, line: str) -> str:
    """One request line over the control socket at ``path`` and the recorder's one-line answer
    (the socket's errors raised as OSError)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2.0)
        s.connect(path)
        try:
            s.sendall(line.encode())
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # a recorder that turns the sender away may close first; its answer says why
        return s.makefile("rb").readline().decode(errors="replace").strip()
