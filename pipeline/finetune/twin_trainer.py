"""``SentenceTransformerTrainer`` with what our stages need: exact resume, a step log, a stop for tests.

- The task heads live in the losses, which the library's checkpoints leave out (it saves the
  encoder only); :class:`TwinTrainer` saves them beside each checkpoint (``heads.pt``) and
  loads them back on resume, so an interrupted run ends with the weights of an uninterrupted one.
- A saved optimizer, schedule or random state that the trainer cannot apply is one line
  (:class:`~pipeline.errors.InputError`), not a traceback from inside ``train``.
- :class:`StepLog` writes ``train_log.jsonl`` as the ``pretrain`` stage does: one line per
  optimizer step (step, epoch, task, loss, lr, tokens, tokens/s) and one per evaluation.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

import torch
from sentence_transformers import SentenceTransformerTrainer
from transformers import TrainerCallback

from pipeline.errors import InputError

HEADS = "heads.pt"


class TrainingHalted(Exception):
    """Raised by :class:`HaltAfter`: a stand-in for a killed run, for resume tests."""


def head_state(losses: dict) -> dict:
    """Each loss's own parameters (its head), without the shared encoder it holds as ``model``."""
    return {
        name: {key: value for key, value in loss.state_dict().items() if not key.startswith("model.")}
        for name, loss in losses.items()
    }


class TwinTrainer(SentenceTransformerTrainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.last_task: str | None = None
        self.last_loss: float | None = None
        self.last_tokens = torch.zeros(())

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        task = inputs.get("dataset_name")
        # a tensor: read (one device sync) only by the step log
        self.last_tokens = sum(
            value.sum()
            for key, value in inputs.items()
            if key.endswith("attention_mask") and isinstance(value, torch.Tensor)
        )
        loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        if model.training:
            self.last_task = task
            self.last_loss = (loss[0] if return_outputs else loss).detach()
        return loss

    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
        if isinstance(self.loss, dict) and self.args.should_save:
            folder = Path(self.args.output_dir) / f"checkpoint-{self.state.global_step}"
            torch.save(head_state(self.loss), folder / HEADS)

    def _load_optimizer_and_scheduler(self, checkpoint):
        with _state_of(checkpoint, "optimizer.pt and scheduler.pt"):
            super()._load_optimizer_and_scheduler(checkpoint)

    def _load_rng_state(self, checkpoint):
        with _state_of(checkpoint, "rng_state.pth"):
            super()._load_rng_state(checkpoint)

    def _load_from_checkpoint(self, checkpoint_path, model=None):
        super()._load_from_checkpoint(checkpoint_path)
        heads = Path(checkpoint_path) / HEADS
        if heads.exists() and isinstance(self.loss, dict):
            state = torch.load(heads, map_location="cpu", weights_only=True)
            for name, loss in self.loss.items():
                loss.load_state_dict(state[name], strict=False)


@contextlib.contextmanager
def _state_of(checkpoint, files: str):
    """A resume state the trainer cannot apply (tensors of other shapes, keys it lacks: checked
    safe to load by :mod:`pipeline.finetune.resume_check`, not fit for this run) is one line."""
    try:
        yield
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError, AttributeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"{checkpoint}/{files}",
            f"a state this run cannot resume from ({reason[:200]}); delete the work folder or run without --resume",
        ) from exc


class StepLog(TrainerCallback):
    """``train_log.jsonl``: one line per optimizer step and one per evaluation."""

    def __init__(self, path: Path, trainer: TwinTrainer):
        self.path = Path(path)
        self.trainer = trainer
        self.started = time.monotonic()

    def on_step_begin(self, args, state, control, **kwargs):
        self.started = time.monotonic()

    def on_step_end(self, args, state, control, lr_scheduler=None, **kwargs):
        if not state.is_world_process_zero:
            return
        trainer = self.trainer
        seconds = max(time.monotonic() - self.started, 1e-9)
        task = trainer.last_task or "nli"
        loss = float(trainer.last_loss) if trainer.last_loss is not None else None
        entry = {
            "step": state.global_step,
            "epoch": round(state.epoch or 0.0, 6),
            "task": task,
            "loss": loss,
            f"{task}_loss": loss,
            "lr": lr_scheduler.get_last_lr()[0] if lr_scheduler else None,
            "tokens": int(trainer.last_tokens) * args.world_size,
            "tokens_per_s": round(int(trainer.last_tokens) * args.world_size / seconds, 1),
        }
        self._write(entry)

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if state.is_world_process_zero and metrics:
            self._write(
                {"step": state.global_step, "eval": {k: v for k, v in metrics.items() if isinstance(v, int | float)}}
            )

    def _write(self, entry: dict) -> None:
        with self.path.open("a") as handle:
            handle.write(json.dumps(entry) + "\n")
            handle.flush()


class HaltAfter(TrainerCallback):
    def __init__(self, step: int):
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= self.step:
            raise TrainingHalted(f"halted after step {state.global_step}")
