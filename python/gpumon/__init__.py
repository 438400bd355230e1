"""gpumon from Python: read recordings into pandas, summarize them, record while a block runs.

The work is done by the ``gpumon`` executable installed beside this module (``pip install .`` in
this project's checkout, or its wheel file; see :func:`binary`); this module only runs it and hands the results back as Python objects::

    import gpumon

    with gpumon.recording("cell.parquet") as rec:   # records while the block runs,
        train()                                      # then shows the summary
    rec.summary["all"]["gpus"]["utilization.gpu.mean"]

    df = gpumon.read("run.parquet")      # the whole rotated set, and what a crash left, as one DataFrame
    s = gpumon.summary("run.parquet")    # `gpumon summarize --format json` as a dict
    p = gpumon.summary("run.parquet", by="phase")       # with each phase and their comparison
    j = gpumon.job("/shared/gpumon/", "4242")    # one job across its hosts: stragglers, skew, totals
    c = gpumon.compare("a.parquet", "b.parquet@bs=64")  # `gpumon compare --format json` as a dict
    gpumon.report("run.parquet")         # the HTML report, shown inline in Jupyter

    with gpumon.recording("sweep.parquet"):  # experiments: mark phases, compare them afterwards
        for bs in (32, 64, 128):
            gpumon.mark(f"bs={bs}")
            train(batch_size=bs)
    gpumon.live("run.parquet")           # a chart of a running recording, redrawn in its cell

:func:`read` needs pandas and pyarrow (``pip install pandas pyarrow``); nothing else does.
"""

from __future__ import annotations

import html as _html
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Iterable, Sequence, Union

from ._bin import GpumonError, GpumonNotFound, StrPath, binary, run
from . import _control
from ._control import status
from ._experiments import LiveChart, send_mark
from ._progress import flush as flush_progress
from ._progress import progress, send_progress

if TYPE_CHECKING:  # pandas is imported only by read(), and only when it is called
    import pandas

__all__ = [
    "GpumonError",
    "GpumonNotFound",
    "LiveChart",
    "Recording",
    "RecordingsWarning",
    "Report",
    "binary",
    "compare",
    "job",
    "jobs",
    "live",
    "mark",
    "progress",
    "read",
    "recording",
    "report",
    "run",
    "status",
    "summary",
    "version",
]

class RecordingsWarning(UserWarning):
    """:func:`read` was given inputs that hold several recordings of one host (a set continued with
    ``gpumon record --append``): their rows are returned together, a later recording's phases
    labelled ``"LABEL (recording N)"``."""


#: Recordings this process started and has not stopped yet, latest last (what :func:`mark` marks):
#: ``_control``'s registry, which :func:`progress` and the callbacks read too.
_ACTIVE: list[Recording] = _control.ACTIVE

Duration = Union[str, float, int]


def version() -> str:
    """Version of the gpumon executable (``gpumon --version``), e.g. ``"0.1.0"``."""
    out: str = run(["--version"]).stdout
    return out.split()[-1]


def _duration(d: Duration) -> str:
    """A number is seconds (as on the command line); a string is passed on (``"250ms"``, ``"1m"``)."""
    if isinstance(d, (int, float)):
        return f"{int(d * 1000)}ms" if d < 1 or d != int(d) else str(int(d))
    return str(d)


def _input_args(
    paths: Sequence[StrPath],
    *,
    since: str | None = None,
    until: str | None = None,
    skip_warmup: Duration | None = None,
    tz: str | None = None,
    host: str | None = None,
    thresholds: dict[str, float] | None = None,
) -> list[str]:
    if not paths:
        raise TypeError("at least one input path is needed")
    args = [os.fspath(p) for p in paths]
    if since is not None:
        args += ["--since", since]
    if until is not None:
        args += ["--until", until]
    if skip_warmup is not None:
        args += ["--skip-warmup", _duration(skip_warmup)]
    if tz is not None:
        args += ["--tz", tz]
    if host is not None:
        args += ["--host", host]
    for name, value in (thresholds or {}).items():
        args += ["--threshold", f"{name}={value}"]
    return args + ["--quiet"]


def read(
    path: StrPath,
    *paths: StrPath,
    tz: str | None = None,
    host: str | None = None,
    columns: Sequence[str] | None = None,
) -> pandas.DataFrame:
    """Every row of a recording as one pandas DataFrame.

    ``path`` is what was given to ``gpumon record -o`` (the whole rotated set is read, plus the
    journal of a file a crash left open), a single file, a directory, or an nvidia-smi CSV log
    (``tz``: the zone of its timestamps; ``host``: the host name to file it under). Several paths
    are read together. ``columns`` are the canonical field names to keep (default: all).

    The inputs are joined by ``gpumon convert`` into one typed Parquet file in a temporary
    directory, which pandas then reads: ``timestamp`` is ``datetime64[us, UTC]``, integers are
    signed, missing values are NA, never 0. Needs pandas and pyarrow.
    """
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("gpumon.read() needs pandas and pyarrow: pip install pandas pyarrow") from e
    args: list[str] = [os.fspath(p) for p in (path, *paths)]
    if tz is not None:
        args += ["--tz", tz]
    if host is not None:
        args += ["--host", host]
    with tempfile.TemporaryDirectory(prefix="gpumon-read-") as tmp:
        out = Path(tmp, "all.parquet")
        proc = run(["convert", *args, "-o", str(out), "--quiet"])
        # Several recordings in the inputs (a rerun continued with --append): said, never silent.
        for line in proc.stderr.splitlines():
            if "separate recordings" in line:
                warnings.warn(line.removeprefix("gpumon: warning: "), RecordingsWarning, stacklevel=2)
        return pd.read_parquet(out, columns=list(columns) if columns is not None else None)


def summary(
    path: StrPath,
    *paths: StrPath,
    since: str | None = None,
    until: str | None = None,
    skip_warmup: Duration | None = None,
    tz: str | None = None,
    host: str | None = None,
    thresholds: dict[str, float] | None = None,
    by: str | None = None,
    baseline: str | None = None,
    fail_if: Sequence[str] = (),
) -> dict[str, Any]:
    """``gpumon summarize --format json`` of the inputs, as a dict.

    The shape is the documented ``gpumon.summary/1`` (docs/summary-json.md): ``summary["all"]["gpus"]``
    holds the over-all GPU statistics, ``summary["hosts"][i]["gpus"][j]["stats"]`` each GPU's,
    ``summary["hosts"][i]["findings"]`` what to fix. Options are those of ``gpumon summarize``:
    ``since``/``until`` (RFC 3339, ``"+10m"``, ``"-1h"``), ``skip_warmup`` (seconds or ``"5m"``),
    ``tz``, ``host``, ``thresholds`` (``{"idle_util": 10}``). ``by="phase"`` adds ``"phases"`` (each
    phase's summary) and ``"comparison"`` (against ``baseline``, default the first phase).
    ``fail_if`` checks (``["utilization.gpu.mean < 50"]``) land in ``summary["checks"]``, each with
    ``"passed"``; a failed check does not raise.
    """
    args = _input_args(
        (path, *paths), since=since, until=until, skip_warmup=skip_warmup, tz=tz, host=host, thresholds=thresholds
    )
    if by is not None:
        if by != "phase":
            raise ValueError(f"by={by!r}: only by='phase' is known (the job view: gpumon.jobs, gpumon.job)")
        args += ["--by", "phase"]
    if baseline is not None:
        args += ["--baseline", baseline]
    for check in fail_if:
        args += ["--fail-if", check]
    return _json_of(["summarize", "--format", "json", *args])


def jobs(
    path: StrPath,
    *paths: StrPath,
    since: str | None = None,
    until: str | None = None,
    thresholds: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """``gpumon summarize --by job --format json``: the job view of every job the recordings name
    (``record --job-id``, Slurm, torchrun, a Kubernetes Job), a list of dicts of the documented
    ``gpumon.jobs/1`` shape (docs/summary-json.md): per job ``"hosts"`` (the per-host table),
    ``"all"`` (totals over its GPUs), ``"progress"`` (work rates summed across nodes), ``"findings"``
    (straggler, imbalance, hang, node_gone) and ``"summary"`` (the job's ``gpumon.summary/1``)."""
    args = _input_args((path, *paths), since=since, until=until, thresholds=thresholds)
    return list(_json_of(["summarize", "--format", "json", "--by", "job", *args])["jobs"])


def job(
    path: StrPath,
    job_id: str,
    *paths: StrPath,
    since: str | None = None,
    until: str | None = None,
    thresholds: dict[str, float] | None = None,
) -> dict[str, Any]:
    """``gpumon summarize --job ID --format json``: the job view of one job among the recordings
    (a fleet tree, a directory, files), as one dict of the shape :func:`jobs` lists."""
    args = _input_args((path, *paths), since=since, until=until, thresholds=thresholds)
    jobs = _json_of(["summarize", "--format", "json", "--job", job_id, *args])["jobs"]
    return dict(jobs[0])


def _json_of(args: list[str]) -> dict[str, Any]:
    """The JSON gpumon prints for ``args``; exit 3 (a ``--fail-if`` check held) is an answer, not an error."""
    proc = run(args, check=False)
    if proc.returncode not in (0, 3):
        raise GpumonError([binary(), *args], proc.returncode, proc.stderr)
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def compare(
    *runs: StrPath,
    baseline: str | None = None,
    thresholds: dict[str, float] | None = None,
    fail_if: Sequence[str] = (),
) -> dict[str, Any]:
    """``gpumon compare --format json RUN...`` as a dict: each run (a recording, a log, or one phase
    of a recording as ``"run.parquet@bs=64"``) with its key statistics, their changes against the
    baseline (the first, or ``baseline``), the verdicts, and each run's findings (``"findings"``).
    ``fail_if`` checks (``["energy_per_hour.delta_pct > 10"]``) land in ``["checks"]``."""
    if len(runs) < 2:
        raise TypeError("compare() needs at least two runs")
    args = ["compare", "--format", "json", "--quiet", *(os.fspath(r) for r in runs)]
    if baseline is not None:
        args += ["--baseline", baseline]
    for name, value in (thresholds or {}).items():
        args += ["--threshold", f"{name}={value}"]
    for check in fail_if:
        args += ["--fail-if", check]
    return _json_of(args)


class Report:
    """A gpumon HTML report on disk. In Jupyter it displays inline (in an iframe, so the page's
    styles stay inside it); ``.html`` is the page, ``.path`` the file to open or attach."""

    def __init__(self, path: StrPath, height: int = 720) -> None:
        self.path = Path(path)
        self.height = height

    @property
    def html(self) -> str:
        return self.path.read_text(encoding="utf-8")

    def _repr_html_(self) -> str:
        return (
            f'<iframe title="gpumon report {_html.escape(self.path.name)}" '
            f'style="width:100%;height:{self.height}px;border:1px solid #ccc" '
            f'srcdoc="{_html.escape(self.html, quote=True)}"></iframe>'
        )

    def __repr__(self) -> str:
        return f"Report({str(self.path)!r})"


def report(
    path: StrPath,
    *paths: StrPath,
    output: StrPath | None = None,
    since: str | None = None,
    until: str | None = None,
    skip_warmup: Duration | None = None,
    tz: str | None = None,
    host: str | None = None,
    thresholds: dict[str, float] | None = None,
    job: str | None = None,
) -> Report:
    """``gpumon report``: write the self-contained HTML report and return it (shown inline in
    Jupyter). ``output`` defaults to the first input's name with ``.html`` (as ``gpumon report``
    without ``-o``); the other options are
    those of :func:`summary`; ``job`` makes it the report of that job (``report --job ID``)."""
    out = Path(output) if output is not None else Path(path).with_suffix(".html")
    args = _input_args(
        (path, *paths), since=since, until=until, skip_warmup=skip_warmup, tz=tz, host=host, thresholds=thresholds
    )
    if job is not None:
        args += ["--job", job]
    run(["report", *args, "-o", str(out)])
    return Report(out)


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (where display() renders Markdown and HTML)."""
    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _show(markdown: str, text: str) -> None:
    if _in_notebook():
        from IPython.display import Markdown, display  # untyped: the calls below are not checked

        display(Markdown(markdown))
    else:
        print(text)


class Recording:
    """A ``gpumon record`` running beside this Python process; see :func:`recording`.

    After the block: ``.path`` (the file), ``.summary`` (the summary dict, or None when the block
    ended before the first row), ``.returncode`` and ``.stderr`` (gpumon's warnings, e.g. that no
    NVIDIA driver was found), ``.read()`` and ``.report()``.
    """

    def __init__(
        self,
        path: StrPath,
        *,
        interval: Duration = 1,
        fields: Iterable[str] | None = None,
        gpus: Iterable[int | str] | None = None,
        follow: bool = True,
        phases: bool = True,
        overwrite: bool = True,
        show: bool = True,
        report: bool | StrPath = False,
        extra_args: Sequence[str] = (),
        stop_timeout: float = 60.0,
    ) -> None:
        self.path = Path(path)
        if self.path.suffix not in (".parquet", ".csv"):
            raise ValueError(f"{self.path}: the recording's name must end in .parquet or .csv")
        self.interval = interval
        self.fields = list(fields) if fields is not None else None
        self.gpus = [str(g) for g in gpus] if gpus is not None else None
        self.follow = follow
        self.phases = phases
        self.overwrite = overwrite
        self.show = show
        self._report = report
        self.extra_args = list(extra_args)
        self.stop_timeout = stop_timeout
        self.summary: dict[str, Any] | None = None
        self.returncode: int | None = None
        self.stderr = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._argv: list[str] = []
        self._err: IO[str] | None = None

    def argv(self) -> list[str]:
        """The command line that is started."""
        argv = [binary(), "record", "-q", "-i", _duration(self.interval), "-o", str(self.path)]
        if self.fields:
            argv += ["--fields", ",".join(self.fields)]
        if self.gpus:
            argv += ["--gpus", ",".join(self.gpus)]
        if self.follow:
            # job.* columns for this process and its children (DataLoader workers...); gpumon also
            # stops by itself if this process dies without stopping it. gpumon is one of those
            # children, so job.rss/job.cpu include its own few MiB and well under 1 % of a core.
            argv += ["--pid", str(os.getpid())]
        if self.phases:
            argv += ["--phases"]  # the `phase` column, for gpumon.mark()
        return argv + self.extra_args

    def _earlier_files(self) -> list[Path]:
        """An earlier recording to the same path: the file, its rotated files
        (``run.20261202T140000Z.parquet``, ``-1``... on a collision) and what a crash left of any of
        them (``.run.parquet.partial``, ``.run.parquet.journal``): what ``summarize`` would read."""
        stem, ext = re.escape(self.path.stem), re.escape(self.path.suffix)
        # The main file and its companions (`run.procs`, `run.events`), each with its rotated pieces
        # (`.20261202T140000.123Z`, older gpumon `.20261202T140000Z[-N]`).
        name = rf"{stem}(\.(procs|events))?(\.\d{{8}}T\d{{6}}(\.\d{{3}})?Z(-\d+)?)?{ext}"
        own = re.compile(name)
        hidden = re.compile(rf"\.{name}\.(partial|journal)")
        d = self.path.parent
        if not d.is_dir():
            return []
        return sorted(p for p in d.iterdir() if p.is_file() and (own.fullmatch(p.name) or hidden.fullmatch(p.name)))

    def start(self) -> Recording:
        if self._proc is not None:
            raise RuntimeError("this recording was already started")
        if self.overwrite:
            for p in self._earlier_files():
                p.unlink()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._err = tempfile.TemporaryFile(mode="w+", prefix="gpumon-stderr-")
        # A session of its own: a Ctrl-C / Jupyter interrupt does not reach gpumon directly, so
        # stop() is the one that ends it (a second SIGINT would make gpumon exit without closing).
        self._argv = self.argv()
        self._proc = subprocess.Popen(
            self._argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._err, start_new_session=True
        )
        self._wait_ready(self._proc)
        _ACTIVE.append(self)
        return self

    @staticmethod
    def _wait_ready(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
        """Wait until gpumon acts on SIGINT: a SIGINT during its start-up would kill it without
        closing the file, or be missed. Its handlers are installed in order: SIGINT/SIGTERM flags,
        then the SIGINT/SIGTERM/SIGHUP listener, so SIGHUP caught (``SigCgt`` in /proc/PID/status)
        means all are in place; SIGINT caught alone is not enough (a stop sent then is not heard).
        """
        end = time.monotonic() + timeout
        need = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGHUP - 1))
        while time.monotonic() < end and proc.poll() is None:
            try:
                status = Path(f"/proc/{proc.pid}/status").read_text()
            except OSError:
                return  # no /proc: nothing to wait on
            caught = next((ln.split()[1] for ln in status.splitlines() if ln.startswith("SigCgt:")), None)
            if caught is None or int(caught, 16) & need == need:
                return
            time.sleep(0.005)

    def stop(self) -> None:
        """Stop recording (SIGINT: gpumon finishes the tick, flushes and closes the file) and
        summarize it."""
        proc = self._proc
        if proc is None or self.returncode is not None:
            return
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        if proc.poll() is None:
            flush_progress()  # the work reported last, before the recorder's last row
            proc.send_signal(signal.SIGINT)
        try:
            self.returncode = proc.wait(timeout=self.stop_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            self.returncode = proc.wait()
        if self._err is not None:
            self._err.seek(0)
            self.stderr = self._err.read()
            self._err.close()
        if self.returncode != 0:
            raise GpumonError(self._argv, self.returncode, self.stderr)
        try:
            self.summary = summary(self.path)
        except GpumonError as e:
            if e.returncode == 2 and "nothing to summarize" in e.stderr:
                # The block ended before the first row (one interval after the start).
                print(
                    f"gpumon: nothing recorded in {self.path}: the block ended before the first row, "
                    f"which comes one interval (-i {_duration(self.interval)}) after the start",
                    file=sys.stderr,
                )
                return
            raise
        if self._report:
            report(self.path, output=self._report_path())

    def _report_path(self) -> Path:
        if isinstance(self._report, bool):
            return self.path.with_suffix(".html")
        return Path(self._report)

    def mark(self, label: str | None = None, *, end: bool = False) -> bool:
        """Start the phase ``label`` of this recording (``end=True``: close the current one); see
        :func:`mark`."""
        return send_mark(label, end=end, run=self.path, wait=10.0)

    def progress(self, **amounts: int | float) -> bool:
        """Add work done to this recording's counters (start it with ``extra_args=["--progress",
        "samples"]``); see :func:`progress`."""
        return send_progress(amounts, run=self.path, wait=10.0)

    def live(self, every: float = 1.0, window: int = 120) -> LiveChart:
        """A chart of this recording that redraws itself in its notebook cell; see :func:`live`."""
        return LiveChart(self.path, every=every, window=window)

    def read(self) -> pandas.DataFrame:
        """The recorded rows (see :func:`read`)."""
        return read(self.path)

    def report(self, output: StrPath | None = None) -> Report:
        """The HTML report of the recording (see :func:`report`)."""
        return report(self.path, output=output)

    def __enter__(self) -> Recording:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        if self.stderr.strip():
            print(self.stderr.rstrip(), file=sys.stderr)
        if self.show and self.summary is not None:
            args = [str(self.path), "--quiet"]
            _show(
                run(["summarize", "--format", "markdown", *args]).stdout,
                run(["summarize", "--format", "table", *args]).stdout,
            )
        if self._report and self.summary is not None and _in_notebook():
            from IPython.display import display

            display(Report(self._report_path()))

    def __repr__(self) -> str:
        state = "not started" if self._proc is None else "running" if self.returncode is None else "stopped"
        return f"Recording({str(self.path)!r}, {state})"


def recording(
    path: StrPath = "gpumon.parquet",
    *,
    interval: Duration = 1,
    fields: Iterable[str] | None = None,
    gpus: Iterable[int | str] | None = None,
    follow: bool = True,
    phases: bool = True,
    overwrite: bool = True,
    show: bool = True,
    report: bool | StrPath = False,
    extra_args: Sequence[str] = (),
    stop_timeout: float = 60.0,
) -> Recording:
    """Record GPU and host metrics to ``path`` while a ``with`` block (or a notebook cell) runs::

        with gpumon.recording("cell.parquet", interval=1) as rec:
            model.fit(...)
        rec.summary            # the summary dict; rec.read(), rec.report() for more

    On leaving the block gpumon is stopped the way Ctrl-C stops it (the file is complete and
    valid), the summary is computed and, with ``show``, displayed (Markdown in Jupyter, a text
    table elsewhere). ``report=True`` also writes ``path`` with ``.html`` and shows it inline in
    Jupyter (or give the HTML path). An exception in the block still stops and summarizes the
    recording, then propagates.

    ``interval``: seconds or ``"250ms"``, one row per GPU per interval (at least one interval must
    pass for a row). ``fields``/``gpus``: as ``--fields``/``--gpus``. ``follow``: record this
    process and its children as the job (``job.*`` columns; gpumon stops by itself if this
    process dies). ``phases``: record the ``phase`` column that :func:`mark` sets. ``overwrite``: first delete an earlier recording at ``path`` (the file, its
    rotated files and a crash's leftovers), so that re-running a cell records afresh instead of
    adding to the set that ``summary``/``read`` would take together. ``extra_args``: any other
    ``gpumon record`` options.
    """
    return Recording(
        path,
        interval=interval,
        fields=fields,
        gpus=gpus,
        follow=follow,
        phases=phases,
        overwrite=overwrite,
        show=show,
        report=report,
        extra_args=extra_args,
        stop_timeout=stop_timeout,
    )


def mark(
    label: str | None = None, *, end: bool = False, run: StrPath | None = None, missing_ok: bool = False
) -> bool:
    """Start the experiment phase ``label`` (``"bs=64"``, ``"eval"``) of the running recording:
    its rows carry it in their ``phase`` column from now on, until the next mark or ``end=True``.

    Which recording: ``run`` (the ``-o`` path of a ``gpumon record`` running anywhere on this
    machine, as the same user), else the latest :func:`recording` this process started, else the
    one whose command this process is (``gpumon record ... -- python train.py`` sets
    ``$GPUMON_CONTROL``). Returns True when the recorder took the mark; with no recording to mark,
    False if ``missing_ok`` (so a script can mark whether or not it runs under gpumon), else
    :class:`GpumonError`. Then ``gpumon summarize --by phase`` compares the phases.
    """
    if run is None and _ACTIVE:
        return _ACTIVE[-1].mark(label, end=end)
    return send_mark(label, end=end, run=run, missing_ok=missing_ok)


def live(path: StrPath | None = None, *, every: float = 1.0, window: int = 120) -> LiveChart:
    """A chart of a running recording that redraws itself in its notebook cell every ``every``
    seconds: per GPU the utilization (and SM active where recorded) and memory of the last
    ``window`` rows, current values, the phase and where it changed. ``path`` is the ``-o`` of a
    ``gpumon record`` running on this machine (default: the latest :func:`recording` of this
    process). Like ``gpumon watch`` it reads the status file the recorder keeps beside its output:
    no second NVML poller. It stops when the recording ends; ``.stop()`` stops it sooner.

    Make it a cell's last expression (or ``display()`` it) while the recording runs, e.g. one
    started with ``rec = gpumon.recording("run.parquet").start()``; training in the next cells
    redraws it.
    """
    if path is None:
        if not _ACTIVE:
            raise TypeError("live(): give the recording's path (no recording of this process is running)")
        path = _ACTIVE[-1].path
    return LiveChart(path, every=every, window=window)
