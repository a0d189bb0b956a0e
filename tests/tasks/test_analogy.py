"""Universal analogy: hand-computed accuracy, ties, levels, PPR / PNR; the real dataset's shape."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipeline.errors import InputError
from pipeline.tasks import analogy
from pipeline.tasks.data_root import DataRoot

# b - a + c = (0, 1) for every question below; cos with each candidate is written beside it.
VECTORS = {
    "a": [1, 0],
    "b": [0, 1],
    "c": [1, 0],
    "up": [0, 2],  # cos 1
    "up3": [0, 3],  # cos 1 as well: a tie with "up"
    "diag": [1, 1],  # cos 0.7071
    "side": [1, 0],
}  # cos 0


def write(root, kind, level, name, rows):
    path = root / "ulr_analogy" / kind / level / f"{name}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join("\t".join(row) + "\n" for row in rows))


@pytest.fixture
def tiny_set(tmp_path):
    word_mf = [
        ["a", "b", "c", "up", "diag"],  # right
        ["a", "b", "c", "diag", "up"],  # wrong, rank 2
        ["a", "b", "c", "up3", "up"],
    ]  # tie → wrong, rank 2
    write(tmp_path, "semantic", "word", "male-female", word_mf)
    write(tmp_path, "semantic", "sentence", "male-female", word_mf)
    write(
        tmp_path,
        "semantic",
        "phrase",
        "male-female",
        [
            ["a", "b", "c", "diag", "up"],  # wrong
            ["a", "b", "c", "up", "diag"],  # right
            ["a", "b", "c", "up", "side"],
        ],
    )  # right
    write(tmp_path, "semantic", "word", "country-currency", [["a", "b", "c", "side", "up"]])  # not in tables
    do_doing = [["a", "b", "c", "up", "side", "diag", "side "], ["a", "b", "c", "side", "up", "diag", "diag"]]
    write(tmp_path, "syntactic", "word", "do-doing", do_doing)
    write(tmp_path, "syntactic", "sentence", "do-doing", do_doing)
    write(tmp_path, "syntactic", "phrase", "do-doing", [["a", "b", "c", "up", "side"]])
    return tmp_path


def test_hand_computed_scores_levels_and_transfer(tiny_set, table_encoder, tmp_path):
    encoder = table_encoder(VECTORS)
    result = analogy.evaluate(encoder, analogy.load(DataRoot(tiny_set)))

    mf = result["categories"]["word/male-female"]
    assert mf["accuracy"] == pytest.approx(100 / 3)
    assert (mf["n"], mf["ties"], mf["rank_histogram"], mf["candidates"]) == (3, 1, [1, 2], 2)
    assert mf["ppr"] is None and mf["pnr"] is None
    assert result["categories"]["word/do-doing"]["rank_histogram"] == [1, 0, 0, 1]  # side ranks last of 4
    assert result["categories"]["word/country-currency"]["in_tables"] is False

    levels = result["levels"]
    assert levels["word"]["sem"] == pytest.approx(100 / 3)  # country-currency left out
    assert levels["word"]["syn"] == pytest.approx(50.0)
    assert levels["word"]["avg"] == pytest.approx((100 / 3 + 50) / 2)
    assert levels["phrase"]["sem"] == pytest.approx(200 / 3)
    assert levels["phrase"]["syn"] == pytest.approx(100.0)
    assert result["overall"] == pytest.approx(((100 / 3 + 50) / 2 * 2 + (200 / 3 + 100) / 2) / 3)

    # word right on question 1 only; phrase right on 2 and 3; sentence = word
    assert result["categories"]["phrase/male-female"]["ppr"] == pytest.approx(0.0)
    assert result["categories"]["phrase/male-female"]["pnr"] == pytest.approx(100.0)
    assert result["ppr"] == {"phrase": pytest.approx(0.0), "sentence": pytest.approx(100.0)}
    assert result["pnr"] == {"phrase": pytest.approx(100.0), "sentence": pytest.approx(0.0)}
    assert result["ties"] == 1 + 1 + 0  # word and sentence male-female
    assert result["categories"]["phrase/do-doing"]["ppr"] is None  # 1 question vs 2 at word level: not aligned

    # every distinct sequence went to the encoder once, in one call (trailing spaces stripped)
    assert len(encoder.calls) == 1 and sorted(encoder.calls[0]) == sorted(VECTORS)

    # each question's outcome, in file order, from which the scoreboard's paired bootstrap recomputes every
    # level figure: the pooled (level, kind) groups, averaged with equal weights
    from pipeline.scoreboard import scoreboard_items

    assert mf["correct"] == "100"  # word right on question 1 only
    metrics = tmp_path / "analogy.json"
    metrics.write_text(json.dumps(result), encoding="utf-8")
    row = {"source": {"metrics_file": str(metrics)}}
    word = scoreboard_items.item_scores("analogy", "word_avg", row)
    assert [100 * g.mean() for g in word] == [pytest.approx(levels["word"]["sem"]), pytest.approx(50.0)]
    overall = scoreboard_items.item_scores("analogy", "avg", row)
    assert 100 * sum(g.mean() for g in overall) / len(overall) == pytest.approx(result["overall"])


def test_a_short_line_names_file_and_line(tmp_path):
    write(tmp_path, "semantic", "word", "male-female", [["a", "b", "c", "up", "diag"], ["a", "b", "c", "up"]])
    with pytest.raises(InputError, match=r"male-female.txt \(line 2\)"):
        analogy.load(DataRoot(tmp_path))


def test_missing_folder_is_named(tmp_path):
    with pytest.raises(InputError, match="ulr_analogy"):
        analogy.load(DataRoot(tmp_path))


def test_real_dataset_shape(data_root, hash_encoder):
    categories = analogy.load(DataRoot(data_root))
    assert len(categories) == 28
    assert sum(len(c.rows) for c in categories) == 41_950
    result = analogy.evaluate(hash_encoder, categories)
    assert result["questions"] == 41_950
    assert result["levels"]["word"]["sem_n"] == 506 + 4524 + 2467 + 506
    assert result["levels"]["phrase"]["syn_n"] == 1056 + 1332 + 812
    assert result["categories"]["phrase/do-doing"]["candidates"] == 2
    assert result["categories"]["word/do-doing"]["candidates"] == 5
    assert result["categories"]["sentence/capital-world"]["ppr"] is not None  # aligned with word by line
    # random vectors: near chance (1 / 5 and 1 / 2)
    assert 15 < result["categories"]["word/capital-world"]["accuracy"] < 25
    assert 40 < result["categories"]["phrase/good-better"]["accuracy"] < 60
    assert np.sum(result["categories"]["word/capital-world"]["rank_histogram"]) == 4524
