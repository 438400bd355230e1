"""Work counters from Python: :func:`progress` reports work the job did (``samples=512``) to a
running recording that counts it (``gpumon record --progress samples``), straight over its control
socket like ``gpumon progress``: no process is started, so it is cheap enough to call every step.
"""

from __future__ import annotations

import math
import re
import socket
from typing import Optional, Union

from ._bin import GpumonError, StrPath
from ._experiments import CONTROL_ENV, _control, status_path

#: Most counters one report names (the recorder refuses more).
MAX_KEYS = 64
_KEY = re.compile(r"[a-z_]{1,64}")

Amount = Union[int, float]


def _line(amounts: dict[str, Amount]) -> str:
    if not amounts:
        raise TypeError("give at least one counter, e.g. progress(samples=512)")
    if len(amounts) > MAX_KEYS:
        raise ValueError(f"more than {MAX_KEYS} counters in one report")
    words = []
    for k, v in amounts.items():
        if not _KEY.fullmatch(k):
            raise ValueError(f"bad counter name {k!r}: expected [a-z_]+ of at most 64 bytes")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{k}={v!r}: the amount must be a finite number of at least 0")
        words.append(f"{k}={v!r}" if isinstance(v, float) else f"{k}={int(v)}")
    return "progress " + " ".join(words) + "\n"


def send_progress(
    amounts: dict[str, Amount], *, run: Optional[StrPath] = None, missing_ok: bool = False, wait: float = 0.0
) -> bool:
    """Add ``amounts`` to the counters of the recording of ``run``, else of ``$GPUMON_CONTROL``;
    True when the recorder took them, False when none listens and ``missing_ok``."""
    line = _line(amounts)
    argv = ["progress"] + line.split()[1:]
    path = _control(run, wait)
    if path is None:
        if missing_ok:
            return False
        where = f"for {run} (no status file {status_path(run)})" if run is not None else f"(no ${CONTROL_ENV})"
        raise GpumonError(argv, 2, f"no recording is listening for progress reports {where}")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2.0)
            s.connect(path)
            try:
                s.sendall(line.encode())
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # a recorder that turns the sender away may close first; its answer says why
            answer = s.makefile("rb").readline().decode(errors="replace").strip()
    except OSError as e:
        if missing_ok:
            return False
        raise GpumonError(argv, 2, f"no recording is listening for progress reports at {path} ({e})") from e
    if not answer.startswith("ok"):
        raise GpumonError(argv, 2, answer or "the recording did not answer the progress report")
    return True


def progress(*, run: Optional[StrPath] = None, missing_ok: bool = False, **amounts: Amount) -> bool:
    """Report work done since the last report: ``gpumon.progress(samples=512, tokens=65536)`` adds
    to the recording's counters, written as ``progress.samples`` ... (the amount added during each
    row's interval). The recording must declare them (``gpumon record --progress samples,tokens``,
    or ``recording(..., extra_args=["--progress", "samples"])``); ``summarize`` then gives work per
    second, per GPU-hour and per Wh, per phase.

    Which recording: ``run``, else the latest :func:`recording` this process started, else the one
    whose command this process is (``$GPUMON_CONTROL``). Returns True when the recorder took the
    report; with no recording, False if ``missing_ok``, else :class:`GpumonError` (also for an
    undeclared counter). A bad name or amount is a ``ValueError`` before anything is sent.
    """
    if run is None:
        from . import _ACTIVE  # the package's recordings, looked up at call time

        if _ACTIVE:
            return send_progress(amounts, run=_ACTIVE[-1].path, missing_ok=missing_ok, wait=10.0)
    return send_progress(amounts, run=run, missing_ok=missing_ok)
