"""GEOGRANNO retrieval: word counts, Table 9 buckets, gold sets with two paraphrases, the real pool of 158."""

from __future__ import annotations

import pytest

from pipeline.models.lexical import BM25Scorer
from pipeline.tasks import geogranno
from pipeline.tasks.data_root import DataRoot


def test_word_count_ignores_punctuation_tokens():
    assert geogranno.word_count("how big is _state_ ?") == 4
    assert geogranno.word_count("area of california") == 3


def test_placeholders_become_the_canonical_entities():
    assert geogranno.instantiate("where is _place_ in _state_ ?") == "where is death valley in california ?"


def test_hand_computed_ranks_and_buckets(table_encoder):
    splits = {
        "train": [{"nl": "q one", "can": "A"}, {"nl": "q two ?", "can": "B"}, {"nl": "q two ?", "can": "C"}],
        "dev": [{"nl": "q three words here now and more", "can": "C"}],
    }
    table = {
        "A": [1, 0],
        "B": [0, 1],
        "C": [-1, 0],
        "q one": [1, 0.1],  # A first → rank 1
        "q two ?": [-1, 0.5],  # C first; C and B are both gold → rank 1
        "q three words here now and more": [0, 1],
    }  # B first, gold C tied with A → rank 3
    result = geogranno.evaluate(table_encoder(table), splits)
    assert result["candidates"] == 3
    assert result["splits"]["train"]["top1"] == pytest.approx(100.0)
    assert result["splits"]["dev"] == {
        "top1": 0.0,
        "top5": 100.0,
        "top10": 100.0,
        "mrr": pytest.approx(100 / 3),
        "n": 1,
        "ties": 1,
        "ranks": [3],  # the dev question's gold, tied with a wrong candidate, ranks third (pessimistic)
        "ids": [0],  # its position in the dev split
    }
    assert result["splits"]["all"]["n"] == 4 and len(result["splits"]["all"]["ranks"]) == 4
    assert result["by_query_length"]["all"]["1-6"]["n"] == 3
    assert result["by_query_length"]["all"]["7-8"]["n"] == 1
    assert result["by_query_length"]["all"]["9-15"]["n"] == 0
    # |q| - |Q|: 2-1, 2-1, 2-1, 7-1 → only the dev question differs by 2 or more
    assert result["by_length_difference"]["all"][">=0"]["n"] == 4
    assert result["by_length_difference"]["all"][">=2"]["n"] == 1
    assert result["by_length_difference"]["all"][">=3"]["top1"] == 0.0


def test_real_candidate_pool_and_bm25(data_root):
    splits = geogranno.load(DataRoot(data_root))
    assert (len(splits["train"]), len(splits["dev"])) == (487, 54)
    result = geogranno.evaluate(BM25Scorer(), splits)
    assert result["candidates"] == 158  # the paper's "all 158 different sentences"
    # BM25 in ULR Table 4: 27.1 / 62.5 / 76.4 (their dev set has 59 questions, ours 54; ties count as misses)
    assert result["splits"]["all"]["top1"] == pytest.approx(100 * 122 / 541)  # 22.6
    assert result["splits"]["all"]["top10"] == pytest.approx(100 * 405 / 541)  # 74.9
