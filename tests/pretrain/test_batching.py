"""Batching: length-grouped batches (Hugging Face's group_by_length) and the padding share pretrain records."""

from __future__ import annotations

import json

import numpy as np
import pytest
from transformers import AutoTokenizer

from pipeline.cli import build_parser
from pipeline.models.runtime import World
from pipeline.pretrain.batching import MEGA_BATCHES, epoch_batches, padding_counts
from pipeline.pretrain.masking import MaskingCollator
from pipeline.pretrain.pretrain import train


def args_for(*argv):
    argv = ["pretrain", *map(str, argv)]
    return build_parser(argv).parse_args(argv)


def padding_share(lengths, batches) -> float:
    """Pad tokens over all tokens, each batch padded to its longest row (as the collators pad)."""
    total = sum(int(lengths[b].max()) * len(b) for b in batches)
    return sum(int(lengths[b].max()) * len(b) - int(lengths[b].sum()) for b in batches) / total


def test_random_batching_is_the_seeded_permutation_dealt_over_the_processes():
    for world in (World(), World(0, 2), World(1, 2)):
        order = np.random.default_rng([7, 1, 3]).permutation(103)
        mine = order[: 103 // world.size * world.size][world.rank :: world.size]
        expected = [mine[i : i + 8].tolist() for i in range(0, len(mine), 8)]
        assert epoch_batches(103, 1, 7, 8, world) == expected


def test_length_grouped_batches_partition_the_epoch_and_are_a_function_of_seed_and_epoch():
    lengths = np.random.default_rng(0).integers(3, 129, size=1000)
    batches = epoch_batches(1000, 0, 0, 8, World(), lengths)
    assert sorted(i for b in batches for i in b) == list(range(1000))
    assert batches == epoch_batches(1000, 0, 0, 8, World(), lengths)  # a resume finds the same batches
    assert batches != epoch_batches(1000, 1, 0, 8, World(), lengths) != epoch_batches(1000, 0, 1, 8, World(), lengths)
    assert all(list(lengths[b]) == sorted(lengths[b], reverse=True) for b in batches)  # longest first in a batch
    # the batches come shuffled: not the mega-batches' longest-first order
    firsts = [int(lengths[b[0]]) for b in batches[:MEGA_BATCHES]]
    assert firsts != sorted(firsts, reverse=True)
    assert padding_share(lengths, batches) < padding_share(lengths, epoch_batches(1000, 0, 0, 8, World())) / 5


def test_length_grouped_batches_over_processes_are_one_step_each_of_similar_lengths():
    lengths = np.random.default_rng(1).integers(3, 129, size=1001)
    ranks = [epoch_batches(1001, 2, 5, 8, World(rank, 2), lengths) for rank in (0, 1)]
    assert len(ranks[0]) == len(ranks[1]) and [len(b) for b in ranks[0]] == [len(b) for b in ranks[1]]
    everything = [i for batches in ranks for b in batches for i in b]
    assert len(everything) == len(set(everything)) == 1000  # the epoch cut to a multiple of the processes
    for a, b in zip(*ranks):  # one global batch, longest first, dealt round-robin: similar lengths on both
        interleaved = np.stack([lengths[a], lengths[b]], axis=1).ravel()
        assert (np.diff(interleaved) <= 0).all()


def test_padding_counts_are_the_pad_tokens_of_each_input(dataset_en, tiny_en):
    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    rows = [dataset_en[i] for i in (0, 5, 9, 40)]
    batch = MaskingCollator(tokenizer, "token")(rows)
    lengths = [len(r["input_ids"]) for r in rows]
    width = max(lengths)
    assert padding_counts(batch) == {"": (4 * width - sum(lengths), 4 * width)}
    assert padding_counts(batch)[""][0] > 0
    # MiSAD's w and R count as the encoder gets them: one packed row per example, |w| + |R| long
    w_mask, r_mask = batch["attention_mask"][:, :3], batch["attention_mask"]
    misad = {"attention_mask": batch["attention_mask"], "w_attention_mask": w_mask, "r_attention_mask": r_mask}
    packed = [min(3, n) + n for n in lengths]
    assert padding_counts(misad) == {
        "": (4 * width - sum(lengths), 4 * width),
        "wr_": (4 * max(packed) - sum(packed), 4 * max(packed)),
    }


@pytest.mark.parametrize("batching", ["length-grouped", "random"])
def test_sentence_runs_log_the_padding_share_of_their_batches(batching, tokens_en, tiny_en, dataset_en, tmp_path):
    out = tmp_path / batching
    extra = [] if batching == "length-grouped" else ["--batching", "random"]  # length-grouped is the default
    common = ["--data", tokens_en, "--model", tiny_en, "--objective", "mlm", "--max-steps", 4, "--batch-size", 16]
    train(args_for(*common, *extra, "--out", out))
    config = json.loads((out / "pretrain_config.json").read_text())
    assert config["batching"] == batching and config["input"] == "sentences" and config["max_length"] == 64
    lengths = dataset_en.lengths()
    batches = epoch_batches(len(lengths), 0, 0, 16, World(), lengths if batching == "length-grouped" else None)[:4]
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [e["padding_share"] for e in log] == [round(padding_share(lengths, [b]), 6) for b in batches]
    if batching == "random":  # a grouped batch of equal lengths (say, all cut at 64) has none
        assert all(e["padding_share"] > 0 for e in log)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["padding_share"] == round(padding_share(lengths, batches), 6)


def test_misad_logs_the_padding_of_its_packed_w_and_r_too(tokens_en, tiny_en, tmp_path):
    out = tmp_path / "misad"
    common = ["--data", tokens_en, "--model", tiny_en, "--objective", "misad", "--misad-choice", "random"]
    train(args_for(*common, "--max-steps", 2, "--batch-size", 8, "--out", out))
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert all({"padding_share", "wr_padding_share"} <= set(e) for e in log)
    stats = json.loads((out / "stats.json").read_text())
    assert 0 < stats["wr_padding_share"] < 1
