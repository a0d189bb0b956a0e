"""FAQ retrieval from question-matching pairs, and the lexical scorers, on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pipeline.errors import InputError
from pipeline.models.lexical import BM25Scorer, TfidfScorer, lexical_tokens
from pipeline.tasks import faq
from pipeline.tasks.data_root import DataRoot


def test_positive_pairs_form_the_faq():
    pairs = [("q1", "f1", "1"), ("q1", "f2", "1"), ("q2", "f1", "1"), ("q3", "f3", "0")]
    questions, queries, gold = faq.build_faq(pairs)
    assert questions == ["f1", "f2"] and queries == ["q1", "q2"]  # f3 / q3 only in a negative pair
    assert gold.tolist() == [[True, True], [True, False]]


def test_hand_computed_acc1_and_mrr(table_encoder):
    table = {"f1": [1, 0], "f2": [0, 1], "q1": [0.2, 1], "q2": [0.1, 1]}  # both queries nearest to f2
    pairs = [("q1", "f2", "1"), ("q2", "f1", "1")]
    result = faq.evaluate(table_encoder(table), {"X": pairs})
    assert result["datasets"]["X"] == {
        "acc1": 50.0,
        "mrr": 75.0,
        "top5": 100.0,
        "top10": 100.0,
        "queries": 2,
        "faq_size": 2,
        "ties": 0,
        "ranks": [1, 2],  # q1's gold f2 first; q2's gold f1 second: each query's rank, for the paired bootstrap
        "ids": [0, 1],  # each query's first positive pair in the file
    }
    assert result["avg"] == 50.0 and result["avg_mrr"] == 75.0


def test_tokens_are_characters_in_chinese_words_in_english():
    assert lexical_tokens("花呗 额度", "zh") == ["花", "呗", "额", "度"]
    assert lexical_tokens("How big is Texas?", "en") == ["how", "big", "is", "texas"]


def test_tfidf_hand_computed():
    scores = TfidfScorer("en").scores(["a"], ["a b", "b c"])
    idf_a = math.log(3 / 2) + 1  # smooth idf: ln((1 + n) / (1 + df)) + 1, and idf(b) = 1
    assert scores[0].tolist() == pytest.approx([idf_a / math.hypot(idf_a, 1.0), 0.0])


def test_bm25_hand_computed():
    # Lucene BM25: idf = ln(1 + (N - df + 0.5) / (df + 0.5)); tf part = tf / (tf + k1 (1 - b + b dl / avgdl))
    scores = BM25Scorer("en").scores(["c"], ["a b", "b c c"])
    idf = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5))
    tf_part = 2 / (2 + 1.5 * (1 - 0.75 + 0.75 * 3 / 2.5))
    assert scores[0].tolist() == pytest.approx([0.0, idf * tf_part], rel=1e-6)


def test_demo_sets(demo_data):
    sets = faq.load(DataRoot(demo_data))
    assert list(sets) == ["BQ", "AFQMC", "BUSTM"]
    result = faq.evaluate(TfidfScorer(), sets)
    assert result["datasets"]["BQ"]["faq_size"] == 4 and result["datasets"]["BQ"]["queries"] == 4
    assert all(0 <= d["acc1"] <= 100 for d in result["datasets"].values())


def test_bad_tsv_line_is_named(tmp_path):
    path = tmp_path / "chinese" / "bq_corpus" / "dev.tsv"
    path.parent.mkdir(parents=True)
    path.write_text("你好\t您好\t1\n只有两列\t1\n")
    with pytest.raises(InputError, match=r"dev.tsv \(line 2\)"):
        faq.read_pairs(path)


def test_real_faq_sizes(data_root):
    sets = faq.load(DataRoot(data_root))
    sizes = {name: faq.build_faq(pairs)[2].shape for name, pairs in sets.items()}
    assert sizes["AFQMC"] == (1338, 1338)
    assert sizes["BUSTM"] == (883, 877)
    assert sizes["BQ"] == (2463, 2452)  # 5,000 positive pairs; repeated questions merge
    assert np.all(faq.build_faq(sets["BUSTM"])[2].sum(axis=1) >= 1)
