"""classify --group-by-length (pipeline/classify/batching.py): a seeded length-grouped order, the padding it
saves, and the Trainer that uses it."""

from __future__ import annotations

import random

import pytest
import torch
from transformers import TrainingArguments
from transformers.trainer_pt_utils import get_length_grouped_indices

from pipeline.classify.batching import (
    GROUPED,
    ClassifyTrainer,
    SeededLengthGroupedSampler,
    feature_length,
    padded_tokens,
)

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


def test_grouped_batches_pad_less_than_random_ones():
    grouped = list(SeededLengthGroupedSampler(16, LENGTHS, seed=0))
    shuffled = list(range(len(LENGTHS)))
    random.Random(0).shuffle(shuffled)
    real = sum(LENGTHS)
    assert real < padded_tokens(LENGTHS, 16, grouped) < padded_tokens(LENGTHS, 16, shuffled)
    assert padded_tokens(LENGTHS, 16, shuffled) < padded_tokens(LENGTHS, 16, shuffled, to_length=128)


def test_padded_tokens_by_hand():
    lengths = [3, 10, 4, 2, 7]
    assert padded_tokens(lengths, 2, [0, 1, 2, 3, 4]) == 2 * 10 + 2 * 4 + 7
    assert padded_tokens(lengths, 2, [1, 4, 2, 0, 3]) == 2 * 10 + 2 * 4 + 2
    assert padded_tokens(lengths, 2, [0, 1, 2, 3, 4], to_length=128) == 5 * 128


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
