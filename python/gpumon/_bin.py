"""Finding and running the `gpumon` executable that the wheel installs next to this module."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Sequence, Union

StrPath = Union[str, "os.PathLike[str]"]

ENV_VAR = "GPUMON_BIN"


class GpumonNotFound(FileNotFoundError):
    """No `gpumon` executable was found (see :func:`binary` for where it is looked for)."""


class GpumonError(RuntimeError):
    """`gpumon` ran and failed; ``command``, ``returncode`` and ``stderr`` say how."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        self.command = list(args)
        self.returncode = returncode
        self.stderr = stderr
        detail = stderr.strip() or "(no message)"
        super().__init__(f"`{' '.join(self.command)}` exited with {returncode}:\n{detail}")


def _candidates() -> list[Path]:
    """Where pip puts the wheel's script, for this interpreter, in the order they are tried."""
    exe = "gpumon.exe" if os.name == "nt" else "gpumon"
    dirs: list[str | None] = [sysconfig.get_path("scripts")]
    # `pip install --user`: the user scheme's scripts directory.
    try:
        dirs.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    except KeyError:
        pass
    # A venv used without activation: the script sits beside its python.
    dirs.append(str(Path(sys.executable).parent))
    seen: list[Path] = []
    for d in dirs:
        if d and Path(d, exe) not in seen:
            seen.append(Path(d, exe))
    return seen


def binary() -> str:
    """Path of the `gpumon` executable.

    Looked for in this order: the ``GPUMON_BIN`` environment variable (an explicit choice, e.g. a
    development build, always wins); the scripts directory of this interpreter's install scheme
    (where pip installs this project's wheel, also for a venv that is not activated); the user
    scheme's (``pip install --user``); beside ``sys.executable``; then ``PATH``.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        if Path(env).is_file() and os.access(env, os.X_OK):
            return env
        raise GpumonNotFound(f"{ENV_VAR}={env} is not an executable file")
    for c in _candidates():
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which("gpumon")
    if found:
        return found
    tried = ", ".join(str(c) for c in _candidates())
    raise GpumonNotFound(
        "the gpumon executable was not found (tried "
        f"{tried} and PATH). Install this project's wheel (`pip install gpumon-*.whl`, built by "
        "scripts/build-wheel), or `pip install .` / `cargo install --locked --path .` in a checkout of "
        f"its repository, or point {ENV_VAR} at the executable. (`pip install gpumon` from PyPI installs an "
        "unrelated project of the same name.)"
    )


def run(
    args: Sequence[StrPath], *, check: bool = True, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``gpumon ARGS`` and capture its output as text.

    With ``check`` (the default) a non-zero exit raises :class:`GpumonError` carrying gpumon's
    message; exit code 3 (a ``--fail-if`` check failed) is a failure too.
    """
    argv = [binary(), *(os.fspath(a) for a in args)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise GpumonError(argv, proc.returncode, proc.stderr)
    return proc


def main() -> None:
    """``python -m gpumon ARGS``: the command itself, for when the scripts directory is not on PATH."""
    exe = binary()
    if os.name == "nt":  # pragma: no cover - gpumon is Linux-only; kept for a clear path
        sys.exit(subprocess.call([exe, *sys.argv[1:]]))
    os.execv(exe, [exe, *sys.argv[1:]])
