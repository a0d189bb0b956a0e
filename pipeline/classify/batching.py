"""How a classify run orders its training examples into batches (``classify --group-by-length``).

By default a run draws its batches as the ``Trainer`` does, in a seeded random order (accelerate's
seedable sampler, the run's ``data_seed`` plus the epoch), and pads each batch to its longest example
(``DataCollatorWithPadding``). The papers' ``run_glue`` drew in random order too, but padded every example to
``max_length`` (128): padding is masked, so the padded length changes the cost, never the result.

``--group-by-length`` (``classify.group_by_length``) orders the examples as Hugging Face's
``group_by_length`` does (:func:`transformers.trainer_pt_utils.get_length_grouped_indices`): a random
permutation cut into mega-batches of 50 batches, each sorted by length, so a batch holds examples of like
length and is padded less. That changes which examples share a batch, so it is a choice with an effect on
the scores (BENCHMARKS.md "classify, group_by_length" measures both on the sample). transformers draws that
permutation from torch's global generator, whose state depends on everything the process did before; here it
is drawn from the run's own ``data_seed`` plus the epoch (:class:`SeededLengthGroupedSampler`), the rule of
the random sampler, so that a fused member (pipeline/classify/fused_training.py, which replays each member's
batches from its own ``Trainer``) gets exactly the batches of its solo run.
"""

from __future__ import annotations

import torch
from transformers import Trainer
from transformers.trainer_pt_utils import LengthGroupedSampler, get_length_grouped_indices

GROUPED = "group_by_length"  # TrainingArguments.train_sampling_strategy of a length-grouped run


def feature_length(row: dict) -> int:
    """The tokens a training feature pads to: its ``input_ids``, or the longest candidate's where a
    multiple-choice feature holds one sequence per candidate (the collator pads every candidate to it)."""
    ids = row["input_ids"]
    return max(len(candidate) for candidate in ids) if ids and isinstance(ids[0], list) else len(ids)


class SeededLengthGroupedSampler(LengthGroupedSampler):
    """``LengthGroupedSampler`` drawing its permutation from ``seed`` + the epoch (``set_epoch``, which the
    Trainer and accelerate's loader call at every epoch), not from torch's global generator."""

    def __init__(self, batch_size: int, lengths: list[int], seed: int):
        super().__init__(batch_size, lengths=list(lengths))
        self.seed, self.epoch = seed, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self):
        generator = torch.Generator().manual_seed(self.seed + self.epoch)
        return iter(get_length_grouped_indices(self.lengths, self.batch_size, generator=generator))


class ClassifyTrainer(Trainer):
    """The ``Trainer`` of a classify run: with ``train_sampling_strategy`` ``group_by_length``, its batches
    come from :class:`SeededLengthGroupedSampler` over the features' padded lengths; otherwise transformers'
    own sampler."""

    def _get_train_sampler(self, train_dataset=None):
        dataset = self.train_dataset if train_dataset is None else train_dataset
        if self.args.train_sampling_strategy != GROUPED or dataset is None:
            return super()._get_train_sampler(train_dataset)
        seed = self.args.data_seed if self.args.data_seed is not None else self.args.seed
        batch = self.args.train_batch_size * self.args.gradient_accumulation_steps
        return SeededLengthGroupedSampler(batch, [feature_length(row) for row in dataset], seed)
