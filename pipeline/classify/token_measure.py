"""The tokens a classify run processes per epoch, measured from the data without training (issue 48 §2).

The plan costs a fine-tuning job by the tokens it processes (pipeline/plan/plan_costs.py), and classify
records what each run processed (:mod:`pipeline.classify.processed_tokens`). This module measures the same
figure from a task's files, through classify's own path, so that the two agree:

* the examples come from the task's reader (:mod:`pipeline.classify.tasks`) and are encoded by
  :func:`pipeline.classify.encoding.encode` at the length (a multiple-choice example one sequence per
  candidate, ChID's window around the blank; a reading-comprehension example one per window);
* the batches are the ones a run of a seed draws: the order comes from a ``Trainer`` built with
  :func:`pipeline.classify.training.training_arguments` for that seed (the same sampler, seeded by
  ``data_seed``), iterated as :func:`pipeline.classify.fused_training.member_batches` iterates it;
* each batch is padded as classify's collators pad it, to its longest sequence (a multiple-choice batch
  to its longest candidate), and in a fused stack to the longest batch of the stack. A stack of runs of one
  setting holds the seeds of several models (fused_training, ``fused_groups``), and runs of one seed draw
  one order whatever their model, so a stack of m runs of ``seeds`` seeds pads to the longest of
  min(m, seeds) orders: measured here for 1 .. ``seeds`` orders (seeds 0, 1, ...);
* ``classify --group-by-length`` (:mod:`pipeline.classify.batching`) draws each seed's batches from
  :class:`~pipeline.classify.batching.SeededLengthGroupedSampler` over the features' padded lengths: the
  same figures for that order are ``grouped``, so the plan costs a grid that groups by length from its own
  measurement, fused stacks included (a stack of grouped members pads to the longest of their batches,
  which come from different mega-batches).

One epoch is measured (epoch 0's order): later epochs draw other orders of the same examples, whose padded
tokens differed from epoch 0's by at most 1.2% at batch 8 on the data root's tasks (RTE's -1.1% the most;
the measure-tokens stage logs each task's).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace

import numpy as np
import torch

from pipeline.classify import encoding, hyperparameters, training
from pipeline.classify.batching import SeededLengthGroupedSampler
from pipeline.classify.fused_training import member_batches


class _Indices(torch.utils.data.Dataset):
    """Stands in for the training features: the sampler's order depends on their number alone."""

    def __init__(self, size: int):
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> int:
        return index


class _NoModel(torch.nn.Module):
    """A Trainer needs a model to be built; the order of its batches does not depend on it."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))

    def forward(self, input_ids=None, labels=None):  # never called
        return self.weight


def data_order(size: int, settings: training.Settings, seed: int, epoch: int = 0) -> list[list[int]]:
    """The indices of each training batch of ``epoch`` of a run of ``seed`` over ``size`` features at
    ``settings.batch_size``, as its Trainer draws them (:func:`fused_training.member_batches`)."""
    with tempfile.TemporaryDirectory(prefix="classify-order-") as scratch:
        trainer = training.Trainer(
            model=_NoModel(),
            args=training.training_arguments(replace(settings, bf16=False), seed, scratch),
            train_dataset=_Indices(size),
            data_collator=list,
        )
        per_epoch = len(trainer.get_train_dataloader())
        batches = list(member_batches(trainer, per_epoch * (epoch + 1)))[per_epoch * epoch :]
        return [[int(i) for i in batch] for batch in batches]


def grouped_order(longest: np.ndarray, batch_size: int, seed: int, epoch: int = 0) -> list[list[int]]:
    """The batches of ``epoch`` of a ``--group-by-length`` run of ``seed``: its sampler's indices
    (:class:`SeededLengthGroupedSampler` over each feature's padded length, as ``ClassifyTrainer`` builds it
    with ``data_seed`` = the seed), ``batch_size`` at a time as the loader takes them."""
    sampler = SeededLengthGroupedSampler(batch_size, [int(n) for n in longest], seed)
    sampler.set_epoch(epoch)
    order = [int(i) for i in sampler]
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def feature_shapes(features) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per feature: its rows (1, or a multiple-choice example's candidates), its longest sequence and its
    real tokens (the attention mask's ones: the sequences' lengths, the collators pad after them)."""
    rows, longest, real = [], [], []
    for feature in features.rows:
        ids = feature["input_ids"]
        lengths = [len(s) for s in ids] if ids and isinstance(ids[0], list) else [len(ids)]
        rows.append(len(lengths))
        longest.append(max(lengths))
        real.append(sum(lengths))
    return np.array(rows), np.array(longest), np.array(real)


def epoch_tokens(shapes, orders: list[list[list[int]]]) -> dict:
    """Tokens of one epoch for a run whose stack holds ``len(orders)`` data orders: ``padded``, the mean
    over the orders of each run's rows x the stack's padded length (the longest batch of the step); ``real``;
    ``rows`` (sequences)."""
    rows, longest, real = shapes
    steps = len(orders[0])
    stack_length = np.zeros(steps, dtype=np.int64)
    for order in orders:
        stack_length = np.maximum(stack_length, [longest[batch].max() for batch in order])
    padded = np.mean([sum(int(rows[b].sum()) * int(n) for b, n in zip(order, stack_length)) for order in orders])
    return {"padded": float(padded), "real": int(real.sum()), "rows": int(rows.sum())}


def measure(
    task,
    tokenizer,
    examples,
    batch_sizes,
    lengths,
    seeds: int,
    settings: training.Settings | None = None,
    epoch: int = 0,
) -> dict:
    """``{length: {"features", "rows", "real", "padded": {batch: [padded with 1 .. seeds orders]}, "grouped":
    {the same, batches grouped by length}}}`` for ``epoch`` over ``examples`` (each a total over the epoch:
    divide by ``len(examples)`` for a figure per example). ``settings`` supplies the rest of the run's
    arguments (the doc stride of span extraction); by default the task's own
    (pipeline/classify/hyperparameters.py)."""
    defaults = hyperparameters.defaults(task)  # classify's own, as settings_from fills them
    base = settings or training.Settings(
        batch_size=batch_sizes[0],
        lr=defaults["lr"],
        epochs=defaults["epochs"],
        max_steps=0,
        max_length=lengths[0],
        warmup_ratio=defaults["warmup_ratio"],
        weight_decay=defaults["weight_decay"],
        doc_stride=defaults["doc_stride"],
        max_answer_tokens=defaults["max_answer_tokens"],
    )
    found, orders_of = {}, {}  # a data order depends on the number of features, the batch and the seed
    for length in lengths:
        features = encoding.encode(task, tokenizer, examples, length, base.doc_stride)
        shapes = feature_shapes(features)
        record = {"features": len(features), "padded": {}, "grouped": {}}
        for batch in batch_sizes:
            key = (len(features), batch)
            if key not in orders_of:
                at = replace(base, batch_size=batch)
                orders_of[key] = [data_order(len(features), at, seed, epoch) for seed in range(seeds)]
            orders = orders_of[key]
            counts = [epoch_tokens(shapes, orders[: d + 1]) for d in range(seeds)]
            record["rows"], record["real"] = counts[0]["rows"], counts[0]["real"]
            record["padded"][batch] = [c["padded"] for c in counts]
            grouped = [grouped_order(shapes[1], batch, seed, epoch) for seed in range(seeds)]
            record["grouped"][batch] = [epoch_tokens(shapes, grouped[: d + 1])["padded"] for d in range(seeds)]
        found[length] = record
    return found
