"""The batch schedule of BURT twin §3.3: NLI every second batch, the PPDB tasks in turn."""

from __future__ import annotations

import pytest
from torch.utils.data import ConcatDataset

from pipeline.finetune.schedule import PaperScheduleBatchSampler, task_pattern


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


class Batches:
    def __init__(self, batch_size, drop_last=True):
        self.batch_size, self.drop_last = batch_size, drop_last


def sampler(sizes, batch_size=4, seed=0):
    dataset = ConcatDataset([Sized(n) for n in sizes])
    return PaperScheduleBatchSampler(dataset, [Batches(batch_size) for _ in sizes], seed=seed)


def task_of(batch, sizes):
    offsets = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
    tasks = {next(t for t in range(len(sizes)) if offsets[t] <= i < offsets[t + 1]) for i in batch}
    assert len(tasks) == 1, "a batch mixes tasks"
    return tasks.pop()


def test_pattern():
    assert task_pattern(1) == [0]
    assert task_pattern(2) == [0, 1]
    assert task_pattern(3) == [0, 1, 0, 2]


@pytest.mark.parametrize("sizes", [[40, 24, 12], [40, 12], [40]])
def test_schedule_is_exactly_the_papers(sizes):
    schedule = sampler(sizes)
    batches = list(schedule)
    tasks = [task_of(b, sizes) for b in batches]
    expected = {3: [0, 1, 0, 2], 2: [0, 1], 1: [0]}[len(sizes)]
    assert tasks == [expected[i % len(expected)] for i in range(len(tasks))]
    assert len(batches) == len(schedule) == 10 * (2 if len(sizes) > 1 else 1)  # one pass over NLI (40 / 4)
    assert all(len(b) == 4 for b in batches)
    nli = sorted(i for b, t in zip(batches, tasks) if t == 0 for i in b)
    assert nli == list(range(40))  # every NLI pair once per epoch
    # the small PTC set (3 batches a pass) is cycled, each pass a permutation
    if len(sizes) == 3:
        ptc = [i - 64 for b, t in zip(batches, tasks) if t == 2 for i in b]
        assert sorted(ptc[:12]) == list(range(12))


def test_order_is_a_function_of_seed_and_epoch():
    first, again, other = sampler([40, 24, 12]), sampler([40, 24, 12]), sampler([40, 24, 12], seed=1)
    assert list(first) == list(again) and list(first) != list(other)
    epoch0 = list(first)
    first.set_epoch(1)
    assert list(first) != epoch0
    again.set_epoch(1)
    assert list(first) == list(again)


def test_pattern_and_task_orders_run_on_across_epochs():
    sizes = [12, 24, 8]  # 3 NLI batches: an epoch of 6 batches is not a whole number of rounds
    schedule = sampler(sizes)
    endless = []
    for epoch in range(4):
        schedule.set_epoch(epoch)
        endless += list(schedule)
    tasks = [task_of(b, sizes) for b in endless]
    assert tasks == [[0, 1, 0, 2][i % 4] for i in range(24)]
    pi = [i - 12 for b, t in zip(endless, tasks) if t == 1 for i in b]
    assert sorted(pi[:24]) == list(range(24))  # PI's first pass is whole and without repeats
