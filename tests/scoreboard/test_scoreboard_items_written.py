"""The per-item outcomes the evaluations write for the scoreboard's tests (pipeline/scoreboard/
scoreboard_items.py): each file's items recompute its own score, so that a test over them tests the number
in the table."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from pipeline.scoreboard import scoreboard_items


def unit_angle_table(left, right, gold):
    """Vectors whose cosine is gold / 5 (tests/tasks/test_sts.py's construction)."""
    table = {}
    for l_text, r_text, score in zip(left, right, gold):
        angle = math.acos(score / 5)
        table[l_text], table[r_text] = [1.0, 0.0], [math.cos(angle), math.sin(angle)]
    return table


def test_sts_writes_each_pair_and_the_items_give_its_scores(table_encoder, tmp_path):
    from pipeline.tasks import sts

    left, right, gold = ["p", "q", "r", "s"], ["p2", "q2", "r2", "s2"], [1.0, 3.0, 2.0, 4.5]
    result = sts.evaluate(table_encoder(unit_angle_table(left, right, gold)), {"STS12": {"x": (left, right, gold)}})
    items = result["items"]["STS12"]["x"]
    assert items["gold"] == gold and items["predicted"] == pytest.approx([g / 5 for g in gold])
    assert 100 * stats.spearmanr(items["predicted"], items["gold"]).statistic == pytest.approx(
        result["scores"]["STS12"]
    )


def test_ppdb_and_word_sets_write_the_pairs_they_scored(table_encoder):
    from pipeline.tasks import ppdb, wordsim

    left, right, gold = ["a b", "c d", "e f"], ["a2", "c2", "e2"], [1.0, 4.0, 2.5]
    result = ppdb.evaluate(
        table_encoder(unit_angle_table(left, right, gold)), {"ppdb-sample": ((left, right, gold), 0)}
    )
    assert result["items"]["ppdb-sample"]["gold"] == gold
    words = {"cat": [1.0, 0.0], "dog": [0.6, 0.8], "car": [0.0, 1.0], "zzz": [0.0, 0.0]}
    result = wordsim.evaluate(
        table_encoder(words), {"MEN": (["cat", "cat", "zzz"], ["dog", "car", "dog"], [9.0, 2.0, 5.0])}
    )
    assert result["items"]["MEN"] == {"gold": [9.0, 2.0], "predicted": pytest.approx([0.6, 0.0])}  # zzz unknown


def test_analogy_writes_each_questions_word_pairs():
    from pipeline.tasks.analogy import question_pairs

    rows = [["athens", "greece", "berlin", "germany", "x"], ["Berlin", "Germany", "athens", "greece", "y"]]
    assert question_pairs(rows) == [[0, 1], [1, 0]]


def test_semeval_and_transfer_write_each_test_items_outcome():
    from pipeline.tasks import semeval5a, transfer
    from pipeline.tasks.transfer_classifier import Result

    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 3))
    y = (x[:, 0] > 0).astype(np.int64)
    result = semeval5a.fit_and_score(x[:40], y[:40], x[40:], y[40:])
    hits = np.frombuffer(result["correct"].encode(), dtype=np.uint8) - ord("0")
    assert len(hits) == 20 and 100 * hits.mean() == pytest.approx(result["accuracy"])

    from types import SimpleNamespace

    test_split = SimpleNamespace(y=[0, 1, 1])
    found = transfer.test_hits(Result(devacc=0.0, acc=0.0, C=1.0, predictions=np.array([0, 0, 1])), test_split)
    assert found == {"correct": "101"}


def test_snli_metrics_give_each_test_pairs_outcome(tmp_path):
    """A metrics file's test_correct is read by the McNemar test; a malformed one leaves the column untested."""
    path = tmp_path / "snli.json"
    row = {"label": "m", "source": {"metrics_file": str(path)}}
    path.write_text(json.dumps({"test_correct": "0110"}))
    kind, correct = scoreboard_items.item_outcomes("bilstm_snli", "test", row)
    assert kind == "correct" and correct.tolist() == [0, 1, 1, 0]
    path.write_text(json.dumps({"test_correct": "01x0"}))
    assert scoreboard_items.item_outcomes("bilstm_snli", "test", row) is None
