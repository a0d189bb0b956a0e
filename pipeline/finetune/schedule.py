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
    """Batches of one task, in a seeded order per pass, without end."""

    def __init__(self, size: int, batch_size: int, drop_last: bool, seed: int, task: int, start_pass: int = 0):
        self.size, self.batch_size, self.drop_last = size, batch_size, drop_last
        self.seed, self.task, self.passes = seed, task, start_pass

    def batches_per_pass(self) -> int:
        return self.size // self.batch_size if self.drop_last else -(-self.size // self.batch_size)

    def __iter__(self) -> Iterator[list[int]]:
        while True:
            order = np.random.default_rng([self.seed, self.task, self.passes]).permutation(self.size)
            self.passes += 1
            for start in range(0, self.size, self.batch_size):
                batch = order[start:start + self.batch_size]
                if len(batch) == self.batch_size or not self.drop_last:
                    yield batch.tolist()


class PaperScheduleBatchSampler(MultiDatasetDefaultBatchSampler):
    """NLI, PI, NLI, PTC, ...: the twin structure's schedule over the data sets of a ConcatDataset."""

    def __init__(self, dataset: ConcatDataset, batch_samplers: list[BatchSampler], generator=None, seed: int = 0):
        super().__init__(dataset, batch_samplers, generator, seed)
        self.sizes = [len(d) for d in dataset.datasets]
        self.offsets = [0, *accumulate(self.sizes)]
        self.pattern = task_pattern(len(self.sizes))
        if min(self.sizes) < (self.batch_size if self.drop_last else 1):
            raise ValueError(f"every task needs at least one batch of {self.batch_size}; sizes {self.sizes}")

    def _streams(self) -> list[TaskStream]:
        # each epoch starts every task at the pass it would reach by then, so epochs never repeat an order
        per_epoch = len(self)
        streams = []
        for task, size in enumerate(self.sizes):
            stream = TaskStream(size, self.batch_size, self.drop_last, self.seed, task)
            uses = per_epoch * self.pattern.count(task) // len(self.pattern)
            stream.passes = self.epoch * -(-uses // stream.batches_per_pass())
            streams.append(stream)
        return streams

    def __iter__(self) -> Iterator[list[int]]:
        streams = [iter(stream) for stream in self._streams()]
        for position in range(len(self)):
            task = self.pattern[position % len(self.pattern)]
            yield [index + self.offsets[task] for index in next(streams[task])]

    def __len__(self) -> int:
        nli_batches = TaskStream(self.sizes[0], self.batch_size, self.drop_last, self.seed, 0).batches_per_pass()
        return nli_batches * len(self.pattern) // self.pattern.count(0)
