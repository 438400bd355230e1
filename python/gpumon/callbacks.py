"""Framework callbacks: PyTorch Lightning and Hugging Face transformers mark their phases and
report the samples they train in a ``gpumon record`` recording, through :func:`gpumon.mark` and
:func:`gpumon.progress`. Neither framework is needed to import this module; a class is built the
first time it is looked up, from the framework that is installed::

    from gpumon.callbacks import GpumonCallback            # PyTorch Lightning
    trainer = lightning.Trainer(callbacks=[GpumonCallback()])

    from gpumon.callbacks import GpumonTrainerCallback     # transformers
    trainer = transformers.Trainer(..., callbacks=[GpumonTrainerCallback()])

Run the script as ``gpumon record --progress samples -- python train.py``: the phases are
``fit`` (set-up), ``train epoch=N``, ``validate epoch=N`` (Lightning) or ``eval epoch=N``
(transformers), and each training step adds the samples it trained to ``progress.samples``
(and, for transformers with ``include_num_input_tokens_seen``, the tokens to ``progress.tokens``).
Outside a recording they do nothing, after one warning; nothing they do raises into the training loop.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Optional

from . import mark as gpumon_mark  # the package is initialised before its submodules; it never imports this one
from ._bin import GpumonError
from ._control import ACTIVE, CONTROL_ENV
from ._progress import progress as gpumon_progress

__all__ = ["GpumonCallback", "GpumonTrainerCallback"]


class _Reporter:
    """Marks and work reports that never raise: the first failure is a warning, and after a
    failure to reach the recording nothing more is sent."""

    def __init__(self, framework: str) -> None:
        self.framework = framework
        self.off = False
        self.warned: set = set()

    def _active(self) -> bool:
        if self.off:
            return False
        if not os.environ.get(CONTROL_ENV) and not ACTIVE:
            self.off = True
            self._warn(f"gpumon: not run under `gpumon record` (no ${CONTROL_ENV}): the {self.framework} callback does nothing")
            return False
        return True

    def _warn(self, text: str) -> None:
        if text not in self.warned:
            self.warned.add(text)
            warnings.warn(text, RuntimeWarning, stacklevel=3)

    def mark(self, label: Optional[str]) -> None:
        if not self._active():
            return
        try:
            gpumon_mark(label, end=label is None)
        except (GpumonError, OSError, ValueError, TypeError) as e:
            self._warn(f"gpumon: the {self.framework} callback could not mark {label!r}: {e}")

    def progress(self, **amounts: float) -> None:
        amounts = {k: v for k, v in amounts.items() if v and v > 0}
        if not amounts or not self._active():
            return
        try:
            gpumon_progress(**amounts)
        except (GpumonError, OSError, ValueError, TypeError) as e:
            self._warn(f"gpumon: the {self.framework} callback could not report {sorted(amounts)}: {e}")


def _batch_size(batch: Any) -> int:
    """Samples in a batch: the length of the batch, of its first element (a tuple or list of
    tensors), or of its first value (a dict); 0 when none has one."""
    for _ in range(4):
        if isinstance(batch, dict):
            batch = next(iter(batch.values()), None)
        elif isinstance(batch, (list, tuple)) and batch and hasattr(batch[0], "__len__") and not isinstance(batch[0], str):
            batch = batch[0]
        else:
            break
    shape = getattr(batch, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    try:
        return len(batch)
    except TypeError:
        return 0


def _lightning_callback() -> type:
    try:
        from lightning.pytorch import Callback
    except ImportError:
        try:
            from pytorch_lightning import Callback
        except ImportError as e:
            raise ImportError("GpumonCallback needs PyTorch Lightning: pip install lightning") from e

    class GpumonCallback(Callback):  # type: ignore[misc,valid-type]
        """Marks ``fit``, ``train epoch=N`` and ``validate epoch=N`` and reports the samples of each
        training batch (its length) to ``progress.samples``. Only global rank 0 marks; every rank
        reports its own samples."""

        def __init__(self, key: str = "samples") -> None:
            super().__init__()
            self.key = key
            self._gpumon = _Reporter("PyTorch Lightning")

        def _mark(self, trainer: Any, label: Optional[str]) -> None:
            if getattr(trainer, "is_global_zero", True):
                self._gpumon.mark(label)

        def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
            self._mark(trainer, "fit")

        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            self._mark(trainer, f"train epoch={trainer.current_epoch}")

        def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
            self._gpumon.progress(**{self.key: _batch_size(batch)})

        def on_validation_start(self, trainer: Any, pl_module: Any) -> None:
            if not getattr(trainer, "sanity_checking", False):
                self._mark(trainer, f"validate epoch={trainer.current_epoch}")

        def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
            fitting = getattr(getattr(trainer, "state", None), "fn", None) == "fit"  # a str enum
            if fitting and not getattr(trainer, "sanity_checking", False):  # back to training
                self._mark(trainer, f"train epoch={trainer.current_epoch}")

        def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
            self._mark(trainer, None)

    return GpumonCallback


def _transformers_callback() -> type:
    try:
        from transformers import TrainerCallback
    except ImportError as e:
        raise ImportError("GpumonTrainerCallback needs transformers: pip install transformers") from e

    class GpumonTrainerCallback(TrainerCallback):  # type: ignore[misc,valid-type]
        """Marks ``train epoch=N`` and ``eval epoch=N``; each optimizer step reports per-device
        batch x devices of this process x gradient accumulation samples to ``progress.samples``,
        and the tokens seen since the last step to ``progress.tokens`` when the trainer counts
        them (``include_num_input_tokens_seen``). Only the main process marks."""

        def __init__(self, key: str = "samples", tokens_key: str = "tokens") -> None:
            self.key = key
            self.tokens_key = tokens_key
            self._gpumon = _Reporter("transformers")
            self._epoch = 0
            self._tokens = 0
            self._in_eval = False

        def _mark(self, state: Any, label: Optional[str]) -> None:
            if getattr(state, "is_world_process_zero", True):
                self._gpumon.mark(label)

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self._tokens = int(getattr(state, "num_input_tokens_seen", 0) or 0)

        def on_epoch_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self._epoch = int(state.epoch or 0)
            self._in_eval = False
            self._mark(state, f"train epoch={self._epoch}")

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            amounts: Dict[str, float] = {}
            per_step = args.per_device_train_batch_size * max(1, args.n_gpu) * args.gradient_accumulation_steps
            amounts[self.key] = per_step
            seen = int(getattr(state, "num_input_tokens_seen", 0) or 0)
            if seen > self._tokens:
                amounts[self.tokens_key] = seen - self._tokens
                self._tokens = seen
            self._gpumon.progress(**amounts)

        def on_prediction_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if not self._in_eval:
                self._in_eval = True
                self._mark(state, f"eval epoch={self._epoch}")

        def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self._in_eval:
                self._in_eval = False
                self._mark(state, f"train epoch={self._epoch}")

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self._mark(state, None)

    return GpumonTrainerCallback


_BUILDERS = {"GpumonCallback": _lightning_callback, "GpumonTrainerCallback": _transformers_callback}
_BUILT: Dict[str, type] = {}


def __getattr__(name: str) -> type:
    """Builds a callback class on first use, so that importing this module needs neither framework."""
    build = _BUILDERS.get(name)
    if build is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _BUILT:
        _BUILT[name] = build()
    return _BUILT[name]
