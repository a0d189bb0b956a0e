"""Ranking metrics: pessimistic ranks, ties, Top-k and MRR on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.tasks.retrieval import gold_ranks, mrr, summary, top_k


def test_rank_is_one_plus_wrong_candidates_at_least_as_high():
    scores = np.array(
        [
            [0.9, 0.5, 0.1],  # gold 0 first                  → rank 1
            [0.9, 0.5, 0.1],  # gold 2 below two wrong ones   → rank 3
            [0.5, 0.5, 0.1],  # gold 1 tied with wrong 0      → rank 2, tie
            [0.2, 0.8, 0.7],
        ]
    )  # gold {1, 2}: best gold 0.8    → rank 1
    gold = np.array([[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1]], dtype=bool)
    ranks, ties = gold_ranks(scores, gold)
    assert ranks.tolist() == [1, 3, 2, 1]
    assert ties.tolist() == [False, False, True, False]


def test_a_tie_between_two_gold_candidates_is_not_a_miss():
    ranks, ties = gold_ranks(np.array([[0.3, 0.3, 0.1]]), np.array([[True, True, False]]))
    assert ranks.tolist() == [1] and ties.tolist() == [False]


def test_all_zero_scores_rank_last():
    # A lexical baseline that shares no token with the query scores everything 0: no luck from list order.
    ranks, ties = gold_ranks(np.zeros((1, 4)), np.array([[True, False, False, False]]))
    assert ranks.tolist() == [4] and ties.tolist() == [True]


def test_top_k_and_mrr_hand_computed():
    ranks = np.array([1, 3, 2, 1])
    assert top_k(ranks, 1) == pytest.approx(50.0)
    assert top_k(ranks, 2) == pytest.approx(75.0)
    assert mrr(ranks) == pytest.approx(100 * (1 + 1 / 3 + 1 / 2 + 1) / 4)
    result = summary(ranks, np.array([False, False, True, False]))
    assert result == {
        "top1": 50.0,
        "top5": 100.0,
        "top10": 100.0,
        "mrr": pytest.approx(70.8333333333),
        "n": 4,
        "ties": 1,
    }


def test_a_query_without_gold_is_refused():
    with pytest.raises(ValueError):
        gold_ranks(np.zeros((1, 2)), np.zeros((1, 2), dtype=bool))
