"""The batch schedule of the twin structure (BURT twin §3.3): tasks take turns, NLI every second batch.

"In each iteration we train batches from three tasks in turn and make sure that the
sentence-level task is trained every 2 batches": with NLI, PI and PTC the batches run
NLI, PI, NLI, PTC, NLI, PI, ... With NLI and one PPDB task they alternate; with NLI alone
every batch is NLI. Each task's examples are read in a seeded random order, a fresh one
per pass; a task that runs out starts its next pass while the others go on. One epoch of the
schedule is one pass over the NLI data.

:class:`PaperScheduleBatchSampler` is a sentence-transformers multi-dataset batch sampler
(``multi_dataset_batch_sampler=PaperScheduleBatchSampler``): the data sets come in the order
of the training ``DatasetDict``, NLI first. Its order depends only on (seed, epoch), so the
trainer's resume, which skips the batches already seen, lands on the same batches.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import accumulate

import numpy as np
from sentence_transformers.base.sampler import MultiDatasetDefaultBatchSampler
from torch.utils.data import BatchSampler, ConcatDataset


def task_pattern(tasks: int) -> list[int]:
    """Data-set positions of one round: ``[0]`` alone, else ``[0, 1, 0, 2, ...]`` (NLI = 0 between the others)."""
    if tasks == 1:
        return [0]
    return [i for other in range(1, tasks) for i in (0, other)]


class TaskStream:
    """Batches of one task from its ``start``-th batch on: a seeded permutation per pass, without end."""

    def __init__(self, size: int, batch_size: int, drop_last: bool, seed: int, task: int, start: int = 0):
        self.size, self.batch_size, self.drop_last = size, batch_size, drop_last
        self.seed, self.task, self.start = seed, task, start

    def batches_per_pass(self) -> int:
        return self.size // self.batch_size if self.drop_last else -(-self.size // self.batch_size)

    def __iter__(self) -> Iterator[list[int]]:
        passes, skip = divmod(self.start, self.batches_per_pass())
        while True:
            order = np.random.default_rng([self.seed, self.task, passes]).permutation(self.size)
            batches = [order[i : i + self.batch_size] for i in range(0, self.size, self.batch_size)]
            batches = [b for b in batches if len(b) == self.batch_size or not self.drop_last]
            for batch in batches[skip:]:
                yield batch.tolist()
            passes, skip = passes + 1, 0


class PaperScheduleBatchSampler(MultiDatasetDefaultBatchSampler):
    """NLI, PI, NLI, PTC, ...: the twin structure's schedule over the data sets of a ConcatDataset.

    The pattern runs on across epochs (epoch e starts at batch e × len(self) of one endless
    schedule), so no task loses its turn at an epoch boundary.
    """

    def __init__(self, dataset: ConcatDataset, batch_samplers: list[BatchSampler], generator=None, seed: int = 0):
        super().__init__(dataset, batch_samplers, generator, seed)
        self.sizes = [len(d) for d in dataset.datasets]
        self.offsets = [0, *accumulate(self.sizes)]
        self.pattern = task_pattern(len(self.sizes))
        if min(self.sizes) < (self.batch_size if self.drop_last else 1):
            raise ValueError(f"every task needs at least one batch of {self.batch_size}; sizes {self.sizes}")

    def _stream(self, task: int, start: int) -> TaskStream:
        return TaskStream(self.sizes[task], self.batch_size, self.drop_last, self.seed, task, start)

    def __iter__(self) -> Iterator[list[int]]:
        first = self.epoch * len(self)  # position of this epoch's first batch in the endless schedule
        rounds, rest = divmod(first, len(self.pattern))
        streams = [
            iter(self._stream(task, rounds * self.pattern.count(task) + self.pattern[:rest].count(task)))
            for task in range(len(self.sizes))
        ]
        for position in range(first, first + len(self)):
            task = self.pattern[position % len(self.pattern)]
            yield [index + self.offsets[task] for index in next(streams[task])]

    def __len__(self) -> int:
        return self._stream(0, 0).batches_per_pass() * len(self.pattern) // self.pattern.count(0)
