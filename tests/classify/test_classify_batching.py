"""classify --group-by-length (pipeline/classify/batching.py): a seeded length-grouped order, the padding it
saves, and the Trainer that uses it."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from transformers import TrainingArguments
from transformers.trainer_pt_utils import get_length_grouped_indices

from pipeline.classify.batching import GROUPED, ClassifyTrainer, SeededLengthGroupedSampler, feature_length
from pipeline.classify.token_measure import epoch_tokens, grouped_order

_DRAW = random.Random(0)
LENGTHS = [_DRAW.randint(5, 120) for _ in range(1000)]


def test_the_order_is_the_runs_seed_and_epoch_alone():
    sampler = SeededLengthGroupedSampler(16, LENGTHS, seed=3)
    torch.manual_seed(0)
    first = list(sampler)
    torch.manual_seed(1)  # torch's global generator (transformers' own sampler draws from it) plays no part
    torch.rand(10)
    assert list(sampler) == first
    expected = get_length_grouped_indices(LENGTHS, 16, generator=torch.Generator().manual_seed(3))
    assert first == expected and sorted(first) == list(range(len(LENGTHS)))
    sampler.set_epoch(1)
    assert list(sampler) != first  # another epoch, another permutation
    assert list(SeededLengthGroupedSampler(16, LENGTHS, seed=4)) != first


def shapes(lengths):
    """token_measure's feature shapes of single sequences of these lengths."""
    return np.ones(len(lengths), dtype=int), np.array(lengths), np.array(lengths)


def padded(lengths, *orders) -> float:
    return epoch_tokens(shapes(lengths), [list(order) for order in orders])["padded"]


def test_grouped_batches_pad_less_than_random_ones():
    grouped = grouped_order(np.array(LENGTHS), 16, seed=0)
    assert [i for batch in grouped for i in batch] == list(SeededLengthGroupedSampler(16, LENGTHS, seed=0))
    shuffled = list(range(len(LENGTHS)))
    random.Random(0).shuffle(shuffled)
    shuffled = [shuffled[i : i + 16] for i in range(0, len(shuffled), 16)]
    assert sum(LENGTHS) < padded(LENGTHS, grouped) < padded(LENGTHS, shuffled) < len(LENGTHS) * 128


def test_padded_tokens_by_hand():
    """Each batch to its longest; in a stack of two orders each step to the longer of the two batches."""
    lengths = [3, 10, 4, 2, 7]
    first, second = [[0, 1], [2, 3], [4]], [[1, 4], [2, 0], [3]]
    assert padded(lengths, first) == 2 * 10 + 2 * 4 + 7
    assert padded(lengths, second) == 2 * 10 + 2 * 4 + 2
    assert padded(lengths, first, second) == 2 * 10 + 2 * 4 + 7  # both orders pay the stack's 7 at the last step


def test_a_multiple_choice_feature_pads_to_its_longest_candidate():
    assert feature_length({"input_ids": [1, 2, 3]}) == 3
    assert feature_length({"input_ids": [[1, 2], [1, 2, 3, 4], [1]]}) == 4


@pytest.mark.parametrize("grouped", [True, False])
def test_the_trainer_batches_by_length_only_when_asked(tmp_path, grouped):
    rows = [{"input_ids": list(range(n)), "labels": 0} for n in LENGTHS[:200]]
    args = TrainingArguments(
        output_dir=str(tmp_path),
        per_device_train_batch_size=8,
        seed=5,
        data_seed=5,
        train_sampling_strategy=GROUPED if grouped else "random",
        report_to="none",
    )
    trainer = ClassifyTrainer(model=torch.nn.Linear(1, 1), args=args, train_dataset=rows)
    sampler = trainer._get_train_sampler()
    assert isinstance(sampler, SeededLengthGroupedSampler) is grouped
    if grouped:
        assert sampler.seed == 5 and sampler.batch_size == 8 and sampler.lengths == LENGTHS[:200]
