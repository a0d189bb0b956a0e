"""Held-out evaluation while pre-training (pipeline/pretrain/heldout.py): sentences never trained on,
masked once both ways (BERT's tokens, BURT's whole n-grams), scored every --eval-every steps."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipeline.cli import build_parser
from pipeline.pretrain.heldout import HeldOut, split
from pipeline.pretrain.pretrain import train
from pipeline.report.training_curves import panels, series

KEYS = {"heldout_token_acc", "heldout_token_loss", "heldout_ngram_acc", "heldout_ngram_token_acc", "heldout_ngrams"}


def test_the_held_out_rows_are_a_seeded_draw_apart_from_the_training_rows(dataset_en):
    train_rows, held = split(dataset_en, 16, seed=3)
    assert len(held) == 16 and len(train_rows) == len(dataset_en) - 16
    assert not set(held.rows) & set(train_rows.rows)
    assert np.array_equal(split(dataset_en, 16, seed=3)[1].rows, held.rows)
    assert not np.array_equal(split(dataset_en, 16, seed=4)[1].rows, held.rows)
    # a view reads as the dataset does: its rows' columns, lengths and items (indexed in the view)
    assert np.array_equal(held.lengths(), np.asarray(dataset_en.lengths())[held.rows])
    assert held[2]["idx"] == 2 and np.array_equal(held[2]["input_ids"], dataset_en[int(held.rows[2])]["input_ids"])
    with pytest.raises(ValueError, match="hold out fewer"):
        split(dataset_en, len(dataset_en), seed=0)


def test_masks_are_fixed_and_whole_ngrams_are_counted(dataset_en, tiny_en):
    from pipeline.models.loading import load_masked_lm, load_tokenizer

    _, held = split(dataset_en, 32, seed=0)
    evaluation = HeldOut(held, load_tokenizer(tiny_en), seed=0, every=5, ngram_pool="ngrams-first")
    model, _ = load_masked_lm(tiny_en, 0.0)
    first, second = evaluation.evaluate(model, "cpu"), evaluation.evaluate(model, "cpu")
    assert first == second and set(first) == KEYS
    assert first["heldout_ngrams"] > 0  # the marked sample has n-grams to mask whole
    assert all(0 <= first[k] <= 1 for k in KEYS - {"heldout_token_loss", "heldout_ngrams"})
    assert evaluation.due(5, 12) and evaluation.due(12, 12) and not evaluation.due(6, 12)


def test_pretrain_logs_held_out_accuracy_and_never_trains_on_it(tokens_en, dataset_en, tiny_en, tmp_path):
    out = tmp_path / "held"
    argv = ["pretrain", "--data", str(tokens_en), "--model", str(tiny_en), "--objective", "burt", "--out", str(out)]
    argv += ["--max-steps", "6", "--batch-size", "16", "--heldout", "24", "--eval-every", "4"]
    train(build_parser(argv).parse_args(argv))
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [entry["step"] for entry in log if "heldout_token_acc" in entry] == [0, 4, 6]  # before, every 4, last
    config = json.loads((out / "pretrain_config.json").read_text())
    assert config["heldout"] == 24 and config["examples"] == len(dataset_en) - 24
    layout = dict(panels(series(log)))
    assert layout["held-out accuracy"] == ["heldout_token_acc", "heldout_ngram_acc", "heldout_ngram_token_acc"]
