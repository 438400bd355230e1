"""Experiments from Python: phase marks (:func:`mark`) and a live chart of a running recording in a
notebook cell (:func:`live`).

Both talk to the recorder the way ``gpumon mark`` and ``gpumon watch`` do, through its status file
and control socket (``_control``): a mark is one request line (``mark LABEL``, ``end``), the chart
reads the status file's latest rows. Nothing here polls NVML.
"""

from __future__ import annotations

import html
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._bin import GpumonError, StrPath
from ._control import CONTROL_ENV, _control, request, status, status_path
from ._progress import flush as flush_progress

#: Longest phase label, bytes (the recorder rejects longer ones).
MAX_LABEL = 200


def _check_label(label: str) -> str:
    label = label.strip()
    if not label:
        raise ValueError("empty phase label")
    if len(label.encode()) > MAX_LABEL:
        raise ValueError(f"phase label longer than {MAX_LABEL} bytes")
    if any(ord(c) < 32 or ord(c) == 127 for c in label):
        raise ValueError("phase label with control characters")
    return label


def send_mark(
    label: Optional[str], *, end: bool = False, run: Optional[StrPath] = None, missing_ok: bool = False, wait: float = 0.0
) -> bool:
    """Send one mark (``end``: close the current phase) to the recording of ``run``, else of
    ``$GPUMON_CONTROL``; True when the recorder took it, False when none listens and ``missing_ok``."""
    if end == (label is not None):
        raise TypeError("give a label, or end=True")
    line = "end\n" if end else f"mark {_check_label(str(label))}\n"
    flush_progress()  # work done before the mark belongs to the phase before it
    path = _control(run, wait)
    argv = ["mark", "--end" if end else str(label)]
    if path is None:
        if missing_ok:
            return False
        where = f"for {run} (no status file {status_path(run)})" if run is not None else f"(no ${CONTROL_ENV})"
        raise GpumonError(argv, 2, f"no recording is listening for marks {where}")
    try:
        answer = request(path, line)
    except OSError as e:
        if missing_ok:
            return False
        raise GpumonError(argv, 2, f"no recording is listening for marks at {path} ({e})") from e
    if not answer.startswith("ok"):
        raise GpumonError(argv, 2, answer or "the recording did not answer the mark")
    return True


# ----------------------------------------------------------------------------------------- live


_COLORS = ["#0969da", "#bc4c00", "#1a7f37", "#8250df", "#cf222e", "#57606a", "#bf8700", "#1b7c83"]


def _num(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) else None


def _sample(doc: Dict[str, Any]) -> Tuple[str, Optional[str], Dict[str, Dict[str, Optional[float]]]]:
    """(row time, phase, per GPU label: utilization, memory %, power) of a status document."""
    gpus: Dict[str, Dict[str, Optional[float]]] = {}
    for r in doc.get("rows") or []:
        label = r.get("index", r.get("uuid"))
        if label is None:
            continue
        used, total = _num(r.get("memory.used")), _num(r.get("memory.total"))
        gpus[str(label)] = {
            "util": _num(r.get("utilization.gpu")),
            "sm": _num(r.get("sm.active")),
            "mem": 100.0 * used / total if used is not None and total else None,
            "used": used,
            "total": total,
            "power": _num(r.get("power.draw")),
            "temp": _num(r.get("temperature.gpu")),
        }
    return str(doc.get("ts") or ""), doc.get("phase"), gpus


def _spark(points: List[Optional[float]], w: float, h: float, color: str) -> str:
    """An SVG polyline of 0..100 values across ``w`` x ``h`` (gaps where a value is missing)."""
    n = len(points)
    if n == 0:
        return ""
    step = w / max(1, n - 1)
    parts: List[str] = []
    run: List[str] = []
    for i, v in enumerate(points):
        if v is None:
            if run:
                parts.append(" ".join(run))
            run = []
            continue
        run.append(f"{i * step:.1f},{h - max(0.0, min(100.0, v)) / 100.0 * h:.1f}")
    if run:
        parts.append(" ".join(run))
    return "".join(
        f'<polyline points="{p}" fill="none" stroke="{color}" stroke-width="1.5"/>' for p in parts if " " in p
    ) + "".join(f'<circle cx="{p.split(",")[0]}" cy="{p.split(",")[1]}" r="1.5" fill="{color}"/>' for p in parts if " " not in p)


class LiveChart:
    """A chart of a running recording that redraws itself in its notebook cell; see :func:`live`.

    ``.history`` holds the samples seen (row time, phase, per GPU values), ``.frames`` counts the
    redraws, ``.ended`` says the recording is over; ``.stop()`` ends the updates, ``.wait()``
    blocks until the recording ends.
    """

    def __init__(self, run: StrPath, *, every: float = 1.0, window: int = 120) -> None:
        self.run = Path(run)
        self.every = every
        self.window = window
        self.history: List[Tuple[str, Optional[str], Dict[str, Dict[str, Optional[float]]]]] = []
        self.frames = 0
        self.ended = False
        self._seen = False
        self._stop = threading.Event()
        # Where the chart is shown: callables that replace a display with new HTML.
        self._shows: List[Callable[[str], None]] = []
        self.poll()
        self._thread = threading.Thread(target=self._loop, name="gpumon-live", daemon=True)
        self._thread.start()

    def _ipython_display_(self) -> None:
        """Shown in a notebook cell (the cell's last expression, or ``display(chart)``): a display
        that the updates replace."""
        from IPython.display import HTML, display

        handle = display(HTML(self.html()), display_id=True)
        if handle is not None:
            self._shows.append(lambda h: handle.update(HTML(h)))

    def poll(self) -> bool:
        """Read the status file once; True when there was a new row."""
        doc = status(self.run)
        if doc is None:
            self.ended = self.ended or self._seen
            return False
        self._seen = True
        sample = _sample(doc)
        if self.history and self.history[-1][0] == sample[0]:
            return False
        self.history.append(sample)
        del self.history[: -self.window]
        return True

    def _loop(self) -> None:
        while not self._stop.is_set():
            changed = self.poll()
            if changed or self.ended:
                self.frames += 1
                page = self.html()
                for show in list(self._shows):
                    show(page)
            if self.ended:
                return
            self._stop.wait(self.every)

    def stop(self) -> None:
        """Stop redrawing (the chart stays as it is)."""
        self._stop.set()
        self._thread.join(timeout=5)

    def wait(self, timeout: Optional[float] = None) -> None:
        """Block until the recording ends (or ``timeout`` seconds)."""
        self._thread.join(timeout)

    def html(self) -> str:
        """The chart: per GPU a sparkline of utilization (and SM active, memory %) over the last
        ``window`` rows with its current values, the phase and its changes."""
        name = html.escape(self.run.name)
        if not self.history:
            state = "the recording has ended" if self.ended else f"waiting for {html.escape(str(status_path(self.run)))}"
            return f'<div class="gpumon-live"><b>gpumon {name}</b>: {state}</div>'
        ts, phase, last = self.history[-1]
        w, h, label_w = 360.0, 36.0, 70.0
        rows = []
        for k, gpu in enumerate(sorted(last, key=lambda g: (len(g), g))):
            series = [s[2].get(gpu, {}) for s in self.history]
            util = _spark([v.get("util") for v in series], w, h, _COLORS[0])
            mem = _spark([v.get("mem") for v in series], w, h, _COLORS[1])
            sm = _spark([v.get("sm") for v in series], w, h, _COLORS[2]) if any(v.get("sm") is not None for v in series) else ""
            now = last[gpu]
            text = " · ".join(
                t
                for t in [
                    f"util {now['util']:.0f}%" if now["util"] is not None else "",
                    f"SM {now['sm']:.0f}%" if now["sm"] is not None else "",
                    f"mem {now['used']:.0f}/{now['total']:.0f} MiB" if now["used"] is not None and now["total"] else "",
                    f"{now['power']:.1f} W" if now["power"] is not None else "",
                    f"{now['temp']:.0f} C" if now["temp"] is not None else "",
                ]
                if t
            )
            y = k * (h + 14)
            rows.append(
                f'<g transform="translate(0 {y})" data-gpu="{html.escape(gpu)}"><text x="0" y="{h / 2 + 4}">GPU {html.escape(gpu)}</text>'
                f'<g transform="translate({label_w} 0)"><rect width="{w}" height="{h}" fill="#f6f8fa"/>{self._phase_marks(w, h)}{util}{mem}{sm}</g>'
                f'<text x="{label_w + w + 8}" y="{h / 2 + 4}">{html.escape(text)}</text></g>'
            )
        height = max(1, len(rows)) * (h + 14)
        legend = "utilization (blue), memory used % (orange)" + (", SM active (green)" if "stroke=\"#1a7f37\"" in "".join(rows) else "")
        state = "ended" if self.ended else "recording"
        head = (
            f"<b>gpumon {name}</b> · {state} · phase <b>{html.escape(phase or '-')}</b> · last row {html.escape(ts[11:19])} UTC"
            f" · {len(self.history)} rows shown"
        )
        return (
            f'<div class="gpumon-live" style="font:12px system-ui,sans-serif">{head}'
            f'<svg width="{label_w + w + 330}" height="{height}" role="img" aria-label="{html.escape(legend)}" '
            f'style="font:11px system-ui,sans-serif;display:block">{"".join(rows)}</svg>'
            f'<span style="color:#57606a">{legend}; the last {self.window} rows</span></div>'
        )

    def _phase_marks(self, w: float, h: float) -> str:
        """A line and the label where the phase changes."""
        n = len(self.history)
        out = []
        for i in range(1, n):
            if self.history[i][1] != self.history[i - 1][1]:
                x = i * w / max(1, n - 1)
                label = html.escape(self.history[i][1] or "-")
                out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{h}" stroke="#8250df"/><text x="{x + 2:.1f}" y="9" font-size="9" fill="#8250df">{label}</text>')
        return "".join(out)

    def _repr_html_(self) -> str:
        return self.html()

    def __repr__(self) -> str:
        return f"LiveChart({str(self.run)!r}, {'ended' if self.ended else 'live'}, {len(self.history)} rows)"
