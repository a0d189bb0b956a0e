"""The tokens a fine-tuning run processes, counted batch by batch as the model sees them (issue 48 §2).

The plan's fine-tuning FLOPs are tokens times FLOPs per token (pipeline/budget/cost.py), so what a run
really processes is recorded in its ``metrics.json`` (``per_seed.<S>.processed_tokens``), padding
included, per epoch:

* ``padded``: every position of every training batch, rows x padded length. classify pads each batch to
  its longest example (transformers' ``DataCollatorWithPadding``; a multiple-choice batch, each example's
  candidates flattened, to its longest candidate: ``DataCollatorForMultipleChoice``), and a fused stack pads
  every member's batch further, to the longest batch of the stack (``fused_training.stack_batches``), so a
  fused member counts its rows at the stack's length;
* ``real``: the positions that hold a token (the attention mask's ones), special tokens included.

A multiple-choice example counts one sequence per candidate, a reading-comprehension example one per
window of its passage: each is a row of the batch. The counts depend on the data, the tokenizer, the
batch size, the length, the seed's data order and (fused) the stack's orders, never on timing, so the same
seed gives the same figure. ``python -m pipeline measure-tokens`` measures the same figure from the data, with
classify's readers, tokenizer, collators and samplers, for the plan (:mod:`pipeline.classify.token_measure`).
"""

from __future__ import annotations

import torch
from transformers import TrainerCallback


def batch_tokens(batch: dict, length: int | None = None) -> tuple[int, int]:
    """(padded, real) tokens of one training batch: its rows (every axis of ``input_ids`` but the last: a
    multiple-choice batch is examples x candidates) times ``length`` (the batch's own padded length when
    None), and the attention mask's ones."""
    ids = batch["input_ids"]
    rows = ids.numel() // max(ids.shape[-1], 1)
    padded = rows * (ids.shape[-1] if length is None else length)
    mask = batch.get("attention_mask")
    real = int(mask.sum()) if mask is not None else ids.numel()
    return padded, real


class TokenCount:
    """Padded and real tokens per epoch of one run."""

    def __init__(self):
        self.epochs: list[list[int]] = []

    def add(self, epoch: int, padded: int, real: int) -> None:
        while len(self.epochs) <= epoch:
            self.epochs.append([0, 0])
        self.epochs[epoch][0] += int(padded)
        self.epochs[epoch][1] += int(real)

    def record(self) -> dict:
        """What metrics.json holds: ``per_epoch`` [{padded, real}], and their totals."""
        per_epoch = [{"padded": padded, "real": real} for padded, real in self.epochs]
        return {
            "padded": sum(e["padded"] for e in per_epoch),
            "real": sum(e["real"] for e in per_epoch),
            "per_epoch": per_epoch,
        }


class StackCount:
    """The tokens of each member of a fused run (pipeline/classify/fused_training.py), step by step: a member's
    rows at the stack's padded length (``fused_training.stack_batches`` pads every member's batch to the
    longest of the step), and its own real tokens; epochs of ``per_epoch`` steps, as ``member_batches`` runs."""

    def __init__(self, members: int, per_epoch: int):
        self.counts = [TokenCount() for _ in range(members)]
        self.per_epoch = max(per_epoch, 1)

    def add(self, batches: list[dict], step: int) -> list[dict]:
        """Count one step's member batches; returns them, to be stacked."""
        length = max(b["input_ids"].shape[-1] for b in batches)
        for count, batch in zip(self.counts, batches):
            count.add(step // self.per_epoch, *batch_tokens(batch, length))
        return batches

    def records(self) -> list[dict]:
        return [count.record() for count in self.counts]


class CountTokens(TrainerCallback):
    """Counts a ``Trainer``'s training batches as its model receives them: a forward pre-hook on the model
    sees every training forward (``model.training``, gradients on; the predictions after training run in
    eval mode and are not counted), and each ``on_epoch_begin`` opens the next epoch. Counting at the model,
    not in the collator, matters: accelerate's data loader collates one batch ahead of the one it yields, so
    a run stopped by ``max_steps`` collates a batch it never trains on."""

    def __init__(self, model: torch.nn.Module):
        self.count = TokenCount()
        self.epoch = -1
        self.handle = model.register_forward_pre_hook(self._hook, with_kwargs=True)

    def on_epoch_begin(self, args, state, control, **kwargs):
        self.epoch += 1

    def _hook(self, module, args, kwargs):
        if module.training and torch.is_grad_enabled() and "input_ids" in kwargs:
            padded, real = batch_tokens(kwargs)
            self.count.add(max(self.epoch, 0), padded, real)

    def record(self) -> dict:
        self.handle.remove()
        return self.count.record()
