"""A tiny CPU training run with gpumon's framework callback, run under `gpumon record`.

    PYTHONPATH=python python tests/py/callbacks_train.py lightning|transformers

A 2-layer model on 64 random samples, 3 epochs, a validation/evaluation pass of 32 samples after
each. Lightning: batches of 16. transformers: 8 per device x 2 accumulation steps. Either way each
training epoch trains 64 samples. A callback listed before gpumon's sleeps PAUSE s before each of
its marks, so that the recorder's row holding a phase's last samples ends before the next phase
starts (a row belongs to the phase current at its end). Run by tests/cli/callbacks.rs.
"""

from __future__ import annotations

import sys
import time

import torch
from torch import nn

EPOCHS = 3
TRAIN = 64
VALID = 32
PAUSE = 0.4


def pause(*_: object, **__: object) -> None:
    time.sleep(PAUSE)


def data(n: int, seed: int) -> torch.utils.data.TensorDataset:
    g = torch.Generator().manual_seed(seed)
    return torch.utils.data.TensorDataset(torch.randn(n, 8, generator=g), torch.randn(n, 1, generator=g))


def model() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))


def lightning() -> None:
    import lightning as L

    from gpumon.callbacks import GpumonCallback

    class Module(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = model()

        def training_step(self, batch, batch_idx):  # type: ignore[no-untyped-def]
            x, y = batch
            return nn.functional.mse_loss(self.net(x), y)

        def validation_step(self, batch, batch_idx):  # type: ignore[no-untyped-def]
            x, y = batch
            return nn.functional.mse_loss(self.net(x), y)

        def configure_optimizers(self):  # type: ignore[no-untyped-def]
            return torch.optim.SGD(self.parameters(), lr=0.01)

    class Pause(L.Callback):
        on_train_epoch_start = on_validation_start = on_validation_end = on_fit_end = pause

    loader = torch.utils.data.DataLoader
    trainer = L.Trainer(
        accelerator="cpu",
        max_epochs=EPOCHS,
        callbacks=[Pause(), GpumonCallback()],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(Module(), loader(data(TRAIN, 0), batch_size=16), loader(data(VALID, 1), batch_size=16))


class _Regression(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = model()

    def forward(self, x: torch.Tensor, labels: torch.Tensor):  # type: ignore[no-untyped-def]
        return {"loss": nn.functional.mse_loss(self.net(x), labels)}


class _Dicts(torch.utils.data.Dataset):
    def __init__(self, n: int, seed: int) -> None:
        self.t = data(n, seed)

    def __len__(self) -> int:
        return len(self.t)

    def __getitem__(self, i: int):  # type: ignore[no-untyped-def]
        x, y = self.t[i]
        return {"x": x, "labels": y}


def transformers() -> None:
    from transformers import Trainer, TrainerCallback, TrainingArguments

    from gpumon.callbacks import GpumonTrainerCallback

    class Pause(TrainerCallback):
        on_epoch_begin = on_evaluate = on_train_end = pause

        def __init__(self) -> None:
            self.step = -1

        def on_prediction_step(self, args, state, control, **kw):  # type: ignore[no-untyped-def]
            if self.step != state.global_step:
                self.step = state.global_step
                pause()

    args = TrainingArguments(
        output_dir=sys.argv[2] if len(sys.argv) > 2 else "hf-out",
        use_cpu=True,
        num_train_epochs=EPOCHS,
        per_device_train_batch_size=8,
        per_device_eval_batch_size=16,
        gradient_accumulation_steps=2,
        eval_strategy="epoch",
        save_strategy="no",
        report_to=[],
        logging_strategy="no",
        disable_tqdm=True,
        remove_unused_columns=False,
    )
    trainer = Trainer(
        model=_Regression(),
        args=args,
        train_dataset=_Dicts(TRAIN, 0),
        eval_dataset=_Dicts(VALID, 1),
        callbacks=[Pause(), GpumonTrainerCallback()],
    )
    trainer.train()


if __name__ == "__main__":
    {"lightning": lightning, "transformers": transformers}[sys.argv[1]]()
