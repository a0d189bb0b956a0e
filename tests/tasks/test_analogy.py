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


# the phrase and sentence pairs of the real set whose words name no single word pair, placed by their line
# of the word file (of which the line is built), and why: each (A', B') or (C', D') of a question counts
PLACED_BY_LINE = {
    "phrase/do-doing": 64,  # increase : increasing wrapped as "cost ..." : "costing ..."
    "sentence/do-doing": 64,  # the same
    "phrase/good-better": 72,  # large : larger wrapped as "large plane" : "lager than the car" (a typo)
    "sentence/good-better": 72,  # simple : simpler as "... is simple" : "... is simper than philosophy"
    # every (A, B): un-X written "not X" ("be politically not acceptable"), App. A.2's "unpleasant ≈ not pleasant"
    "phrase/positive-negative": 812,
    "sentence/positive-negative": 840,  # the same, and known : unknown once more as "ubknown" (a typo)
}


def test_every_real_phrase_and_sentence_pair_traces_to_one_word_pair(data_root):
    """The universal analogy set's phrase and sentence questions wrap the word-level pairs (ULR App. A.2), two
    templates a pair: every one of the real set's 44,812 phrase and sentence pairs maps to exactly one word
    pair, the one of the same line of the word file (where the pair's words name one, it is that one), and
    capital-common's 23 pairs are capital-world's, so the same pair at every level and in both categories
    is one cluster for the scoreboard (docs/stages/report.md "The scoreboard")."""
    categories = analogy.load(DataRoot(data_root))
    traced = analogy.trace_word_pairs(categories)
    assert set(traced.of_category) == {c.key for c in categories}  # every question of all 28 files
    by_key = {c.key: c for c in categories}
    pairs = 0
    for category in categories:
        ids = traced.of_category[category.key]
        assert len(ids) == len(category.rows)
        if category.level == "word":
            continue
        # the word pair of each (A', B') and (C', D') is its line's in the word file of the same category
        assert ids == traced.of_category[f"word/{category.name}"]
        pairs += 2 * len(ids)
        # ... and its words are in it, but for the pairs placed by line (PLACED_BY_LINE says why)
        missing = 0
        for row, (first, second) in zip(category.rows, ids):
            for (a, b), wrapped in ((traced.words[first], row[:2]), (traced.words[second], row[2:4])):
                missing += analogy._named_pair(*wrapped, [(f" {a} ", f" {b} ", 0)]) is None
        assert missing == traced.by_line[category.key] == PLACED_BY_LINE.get(category.key, 0)
    assert pairs == 44_812 and sum(PLACED_BY_LINE.values()) == 1924  # 4.3% placed by line, the rest by words
    in_tables = lambda kind: {
        i for c in categories if c.kind == kind and c.in_tables for q in traced.of_category[c.key] for i in q
    }
    assert len(in_tables("semantic")) == 116 + 68 + 23  # capital-world, city-state, male-female
    assert len(in_tables("syntactic")) == 33 + 37 + 29
    capital = lambda name: set(np.ravel(traced.of_category[by_key[f"word/{name}"].key]))
    assert capital("capital-common") < capital("capital-world")
