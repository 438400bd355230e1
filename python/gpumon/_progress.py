"""Work counters from Python: :func:`progress` reports work the job did (``samples=512``) to a
running recording that counts it (``gpumon record --progress samples``), straight over its control
socket like ``gpumon progress``: no process is started.

Cheap enough to call every step: the first report of each counter is sent at once (so a counter
the recording did not declare is an error right there); later ones are added up here and sent at most
every :data:`WINDOW` seconds (a timer sends what is left), so a job that reports 1,000 times a
second makes about 50 round trips, and the amounts still land in the right row. :func:`flush` sends
what is pending now; a mark (:func:`gpumon.mark`), the end of a :func:`gpumon.recording` block and
the end of the process do so too.
"""

from __future__ import annotations

import atexit
import math
import os
import re
import threading
import time
from typing import Dict, Optional, Union

from ._bin import GpumonError, StrPath
from ._control import ACTIVE, CONTROL_ENV, _control, request, status_path

#: Most counters one report names (the recorder refuses more).
MAX_KEYS = 64
#: Longest time a report waits here before it is sent, seconds.
WINDOW = 0.02
_KEY = re.compile(r"[a-z_]{1,64}")

Amount = Union[int, float]

_lock = threading.Lock()
#: Per control socket: the amounts not sent yet, and when the last report went.
_pending: Dict[str, Dict[str, float]] = {}
_sent_at: Dict[str, float] = {}
#: Per control socket: the counters the recorder has taken (a new one is sent at once).
_known: Dict[str, set] = {}
#: Per recording path: its control socket (read once from its status file).
_sockets: Dict[str, str] = {}
#: What a timer's send failed with, raised by the next call.
_failed: Optional[GpumonError] = None
_timer: Optional[threading.Timer] = None


def _check(amounts: Dict[str, Amount]) -> None:
    if not amounts:
        raise TypeError("give at least one counter, e.g. progress(samples=512)")
    if len(amounts) > MAX_KEYS:
        raise ValueError(f"more than {MAX_KEYS} counters in one report")
    for k, v in amounts.items():
        if not _KEY.fullmatch(k):
            raise ValueError(f"bad counter name {k!r}: expected [a-z_]+ of at most 64 bytes")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{k}={v!r}: the amount must be a finite number of at least 0")


def _line(amounts: Dict[str, float]) -> str:
    words = [f"{k}={int(v)}" if float(v).is_integer() else f"{k}={float(v)!r}" for k, v in amounts.items()]
    return "progress " + " ".join(words) + "\n"


def _send(path: str, amounts: Dict[str, float]) -> None:
    """One report over the control socket at ``path``; the recorder's refusal is a GpumonError."""
    line = _line(amounts)
    argv = ["progress"] + line.split()[1:]
    try:
        answer = request(path, line)
    except OSError as e:
        raise GpumonError(argv, 2, f"no recording is listening for progress reports at {path} ({e})") from e
    if not answer.startswith("ok"):
        raise GpumonError(argv, 2, answer or "the recording did not answer the progress report")


def _target(run: Optional[StrPath], wait: float) -> Optional[str]:
    """The control socket of ``run`` (remembered), else of ``$GPUMON_CONTROL``."""
    if run is None:
        return os.environ.get(CONTROL_ENV) or None
    key = os.fspath(run)
    path = _sockets.get(key)
    if path is None:
        path = _control(run, wait)
        if path is not None:
            _sockets[key] = path
    return path


def _take_all() -> Dict[str, Dict[str, float]]:
    with _lock:
        out = {p: a for p, a in _pending.items() if a}
        for p in out:
            _pending[p] = {}
            _sent_at[p] = time.monotonic()
        return out


def flush() -> None:
    """Send every report still waiting here; raises what the recorder refused (or a timer's failure)."""
    global _failed
    err, _failed = _failed, None
    for path, amounts in _take_all().items():
        try:
            _send(path, amounts)
        except GpumonError as e:
            err = err or e
    if err is not None:
        raise err


def _flush_quietly() -> None:
    global _timer, _failed
    with _lock:
        _timer = None
    try:
        flush()
    except GpumonError as e:
        _failed = e


atexit.register(_flush_quietly)


def send_progress(
    amounts: Dict[str, Amount], *, run: Optional[StrPath] = None, missing_ok: bool = False, wait: float = 0.0
) -> bool:
    """Add ``amounts`` to the counters of the recording of ``run``, else of ``$GPUMON_CONTROL``
    (sent at once or within :data:`WINDOW` s); True when sent or queued, False when no recording
    listens and ``missing_ok``."""
    global _failed, _timer
    _check(amounts)
    if _failed is not None:
        err, _failed = _failed, None
        raise err
    path = _target(run, wait)
    if path is None:
        if missing_ok:
            return False
        where = f"for {run} (no status file {status_path(run)})" if run is not None else f"(no ${CONTROL_ENV})"
        raise GpumonError(["progress"], 2, f"no recording is listening for progress reports {where}")
    now = time.monotonic()
    send: Optional[Dict[str, float]] = None
    with _lock:
        if not _known.get(path, set()).issuperset(amounts):
            send = {k: float(v) for k, v in amounts.items()}  # a new counter: at once, on its own
        else:
            queued = _pending.setdefault(path, {})
            for k, v in amounts.items():
                queued[k] = queued.get(k, 0.0) + float(v)
            if now - _sent_at.get(path, 0.0) >= WINDOW:
                send, _pending[path], _sent_at[path] = dict(queued), {}, now
            elif _timer is None:
                _timer = threading.Timer(WINDOW, _flush_quietly)
                _timer.daemon = True
                _timer.start()
    if send is not None:
        try:
            try:
                _send(path, send)
            except GpumonError:
                fresh = _target(run, wait) if run is not None and _sockets.pop(os.fspath(run), None) else None
                if fresh is None or fresh == path:
                    raise
                path = fresh  # the recording of `run` was restarted: its new socket
                _send(path, send)
        except GpumonError:
            if missing_ok:
                return False
            raise
        with _lock:
            _known.setdefault(path, set()).update(send)
    return True


def progress(*, run: Optional[StrPath] = None, missing_ok: bool = False, **amounts: Amount) -> bool:
    """Report work done since the last report: ``gpumon.progress(samples=512, tokens=65536)`` adds
    to the recording's counters, written as ``progress.samples`` ... (the amount added during each
    row's interval). The recording must declare them (``gpumon record --progress samples,tokens``,
    or ``recording(..., extra_args=["--progress", "samples"])``); ``summarize`` then gives work per
    second, per GPU-hour and per Wh, per phase. Cheap enough to call every step: reports are added
    up here and sent at most every :data:`WINDOW` s (:func:`flush` sends them now).

    Which recording: ``run``, else the latest :func:`recording` this process started, else the one
    whose command this process is (``$GPUMON_CONTROL``). Returns True when the report was sent or
    queued; with no recording, False if ``missing_ok``, else :class:`GpumonError` (also for a
    counter the recording did not declare, from the first report on; a queued report's refusal is
    raised by the next call). A bad name or amount is a ``ValueError`` before anything is sent.
    """
    if run is None and ACTIVE:
        return send_progress(amounts, run=ACTIVE[-1].path, missing_ok=missing_ok, wait=10.0)
    return send_progress(amounts, run=run, missing_ok=missing_ok)

