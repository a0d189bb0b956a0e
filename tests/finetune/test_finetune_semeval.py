"""SemEval-2013 Task 5(a) as BURT twin §4.2 runs it for its encoder rows: the encoder fine-tuned on the
training pairs with a softmax head on [u; v; |u−v|], then scored on the test pairs (finetune-semeval)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from testdata import DEMO_DATA

from pipeline.cli import build_parser
from pipeline.finetune import encoder
from pipeline.finetune.finetune_semeval import fine_tune, predict, steps_of
from pipeline.report.metrics_files import load as load_metrics
from pipeline.report.similarity_tables import semeval_cells
from pipeline.tasks import semeval5a
from pipeline.tasks.data_root import DataRoot


def _arguments(model, out, *extra) -> list[str]:
    return [
        "finetune-semeval",
        "--model",
        str(model),
        "--data",
        str(DEMO_DATA),
        "--out",
        str(out),
        "--epochs",
        "3",
        "--batch-size",
        "8",
        "--lr",
        "1e-3",
        *extra,
    ]


@pytest.fixture(scope="module")
def demo_splits():
    return DataRoot(DEMO_DATA).load(semeval5a.load)


def test_the_encoder_is_fine_tuned_on_the_training_pairs(tiny_model, demo_splits, tmp_path):
    args = build_parser(_arguments(tiny_model, tmp_path / "m.json")).parse_args(
        _arguments(tiny_model, tmp_path / "m.json")
    )
    bigrams, words, labels = demo_splits["train"]
    model, loss, trained = fine_tune(args, demo_splits["train"], tmp_path / "work")
    assert trained["steps"] == steps_of(len(labels), 8, 3) == 6  # 16 pairs, batch 8, 3 passes
    assert trained["losses"][-1] < trained["losses"][0]  # the head and the encoder learn the training pairs
    start = encoder.build(str(tiny_model), "mean", 128, 0.1)
    before, after = start.encode(bigrams), model.encode(bigrams)
    assert not np.allclose(before, after, atol=1e-4)  # the encoder moved: not a frozen one under a new head
    predicted = predict(model, loss, bigrams, words)
    assert predicted.shape == labels.shape and set(predicted.tolist()) <= {0, 1}


def test_the_stage_writes_the_semeval_metrics_the_tables_read(cli, tiny_model, tmp_path):
    out, again = tmp_path / "tiny.mean.json", tmp_path / "again.mean.json"
    assert cli(*_arguments(tiny_model, out, "--name", "tiny", "--seed", "3")) == 0
    result = json.loads(out.read_text())
    assert result["protocol"] == "fine-tuned" and result["task"] == "semeval5a"
    assert result["n"] == {"train": 16, "test": 6} and result["positives"] == {"train": 9, "test": 3}
    assert 0 <= result["accuracy"] <= 100 and result["settings"]["steps"] == 6
    assert result["settings"]["optimizer"]["betas"] == [0.9, 0.98]  # twin §3.3's Adam
    assert result["model"] == {"name": "tiny", "path": str(tiny_model), "kind": "transformer", "pooling": "mean"}
    assert result["provenance"]["seed"] == 3 and result["provenance"]["inputs"]
    metrics = load_metrics(out)
    assert semeval_cells(metrics) == [(None, {"semeval": result["accuracy"]})]
    # the same seed, the same file
    assert cli(*_arguments(tiny_model, again, "--name", "tiny", "--seed", "3")) == 0
    assert json.loads(again.read_text()) == result


def test_max_steps_fix_the_steps_instead_of_the_epochs(cli, tiny_model, tmp_path):
    """The rehearsal's miniature trains every job a few steps (evaluate.semeval5a.max_steps)."""
    out = tmp_path / "m.json"
    assert cli(*_arguments(tiny_model, out, "--max-steps", "2")) == 0
    settings = json.loads(out.read_text())["settings"]
    assert settings["steps"] == 2 and settings["epochs"] is None


def test_frozen_and_fine_tuned_protocols_are_told_apart(demo_splits):
    """The frozen protocol (fixed encoders: bags of vectors, BiLSTMs) says so in its file."""

    class Bag:
        def encode(self, texts):
            rng = np.random.default_rng(0)
            table = {}
            return np.stack([table.setdefault(t, rng.normal(size=8)) for t in texts])

    result = semeval5a.evaluate(Bag(), demo_splits)
    assert result["protocol"] == "frozen" and result["n"] == {"train": 16, "test": 6}
