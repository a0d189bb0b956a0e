"""NLI training (paper 004 §3.1) on the demo pairs: overfitting, the schedule, determinism, the saved model."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import torch
from testdata import DEMO_DATA

from pipeline.bilstm import nli_data, train
from pipeline.models import word_vectors
from pipeline.models.bilstm import saved
from pipeline.models.spec import load_model

VECTORS = DEMO_DATA / "vectors" / "glove-demo-16d.vec"
PAIRS = DEMO_DATA / "nli" / "snli_dev_test" / "s1.dev"


@pytest.fixture(scope="module")
def vectors():
    return word_vectors.load(VECTORS)


@pytest.fixture(scope="module")
def pairs():
    return nli_data.read(PAIRS)


def test_a_small_overfit_run_reaches_high_train_accuracy(vectors, pairs):
    model, lines = train.train(
        pairs, pairs, vectors, 16, "bf-combined", train.Schedule(lr=0.5, batch_size=16, max_epochs=30), seed=0
    )
    assert lines[-1]["train_accuracy"] >= 95 and max(line["dev_accuracy"] for line in lines) >= 95
    assert train.accuracy(model, train.Encoded.of(pairs, vectors)) >= 95  # the best dev epoch is kept


def test_the_rate_decays_and_is_divided_by_5_when_dev_accuracy_does_not_improve(vectors, pairs):
    schedule = train.Schedule(lr=0.1, batch_size=64, max_epochs=12)
    _, lines = train.train(pairs, pairs.subset(range(6)), vectors, 4, "max", schedule, seed=0)
    best = -1.0
    for previous, line in itertools.pairwise(lines):
        improved = previous["dev_accuracy"] > best
        best = max(best, previous["dev_accuracy"])
        expected = previous["lr"] * 0.99 / (1 if improved else 5)
        assert line["lr"] == pytest.approx(expected)


def test_same_pairs_and_seed_give_the_same_model(vectors, pairs):
    subset = pairs.subset(range(40))
    runs = [
        train.train(subset, subset, vectors, 4, "bf-balanced", train.Schedule(max_epochs=2), seed=3) for _ in range(2)
    ]
    first, second = (dict(run[0].state_dict()) for run in runs)
    assert all(torch.equal(first[name], second[name]) for name in first)
    assert runs[0][1] == [{**line, "seconds": runs[0][1][i]["seconds"]} for i, line in enumerate(runs[1][1])]


def test_the_stage_writes_the_documented_format_and_evaluates_like_any_model(tmp_path, cli):
    out, metrics = tmp_path / "bilstm-max-8", tmp_path / "snli.json"
    assert (
        cli(
            "bilstm",
            "--train",
            PAIRS,
            "--test",
            PAIRS.with_name("s1.test"),
            "--vectors",
            VECTORS,
            "--pooling",
            "max",
            "--hidden",
            "4",
            "--epochs",
            "2",
            "--dev-fraction",
            "0.25",
            "--out",
            out,
            "--metrics",
            metrics,
        )
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors", "train_log.jsonl", "vocab.txt"]
    config = json.loads((out / "config.json").read_text())
    assert (config["format"], config["pooling"], config["hidden"], config["dim"]) == (
        "bilstm-sentence-encoder",
        "max",
        4,
        8,
    )
    assert config["pairs"] == {"train": 90, "dev": 30, "test": 30}
    assert len((out / "vocab.txt").read_text().splitlines()) == config["vocabulary"]
    result = json.loads(metrics.read_text())
    assert result["task"] == "snli" and result["dim"] == 8 and 0 <= result["test"] <= 100
    assert sorted(result["oov"]) == ["test", "train"] and 0 <= result["oov"]["train"]["tokens"] <= 100
    # 4 gates x (4 x 16 input + 4 x 4 recurrent + 2 x 4 biases) x 2 directions
    assert result["parameters"] == 2 * 4 * 4 * (16 + 4 + 2)
    model = load_model(f"bilstm:{out}")
    texts = ["A man is playing a guitar .", "A dog is eating bread .", "A man is playing a guitar ."]
    encoded = model.encode(texts)
    assert encoded.shape == (3, 8) and np.array_equal(encoded[0], encoded[2])
    encoder, vectors_, _ = saved.load_encoder(out)
    with torch.inference_mode():
        direct = encoder([vectors_.ids(texts[1])]).numpy()
    assert np.allclose(encoded[1], direct[0])


def test_each_epoch_line_reaches_the_live_curves_as_it_is_made(vectors, pairs):
    seen = []
    _, lines = train.train(
        pairs,
        pairs,
        vectors,
        4,
        "max",
        train.Schedule(lr=0.1, batch_size=64, max_epochs=3),
        seed=0,
        on_epoch=lambda line, epoch: seen.append((epoch, line)),
    )
    assert [epoch for epoch, _ in seen] == [1, 2, 3]
    for (_, live), logged in zip(seen, lines, strict=True):
        assert {k: v for k, v in live.items() if k != "pairs_per_s"} == logged and live["pairs_per_s"] > 0
