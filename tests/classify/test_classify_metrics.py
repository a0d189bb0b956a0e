"""Metric functions against values computed by hand."""

from __future__ import annotations

import math

import pytest

from pipeline.classify import metrics


def test_mcc_f1_and_accuracy_by_hand():
    # gold 1 1 0 0, predicted 1 0 0 0: TP 1, FN 1, TN 2, FP 0
    scores = metrics.classification(("mcc", "f1", "acc"), [1, 1, 0, 0], [1, 0, 0, 0])
    assert scores["mcc"] == pytest.approx(100 * 2 / math.sqrt(1 * 2 * 2 * 3))  # (TP*TN - FP*FN) / sqrt(...)
    assert scores["f1"] == pytest.approx(100 * 2 / 3)  # precision 1, recall 1/2
    assert scores["acc"] == pytest.approx(75.0)


def test_f1_is_of_the_positive_class_and_zero_without_positives():
    assert metrics.classification(("f1",), [0, 0, 1], [1, 1, 0])["f1"] == 0.0
    assert metrics.classification(("f1",), [0, 1, 1], [0, 1, 1])["f1"] == pytest.approx(100.0)


def test_pearson_and_spearman_by_hand():
    scores = metrics.regression([1.0, 2.0, 3.0], [1.0, 2.0, 4.0])
    assert scores["pearson"] == pytest.approx(100 * 9 / math.sqrt(84))  # cov 3 / (sqrt 2 * sqrt(42)/3)
    assert scores["spearman"] == pytest.approx(100.0)
    assert metrics.regression([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]) == {"pearson": 0.0, "spearman": 0.0}


def test_cmrc_exact_match_ignores_the_official_punctuation_only():
    assert metrics.cmrc_em("《战国无双3》", "战国无双3") == 1.0
    assert metrics.cmrc_em("光荣和ω-force", "光荣和ω-Force") == 1.0  # lower-cased, "-" is in the list
    assert metrics.cmrc_em("1.5", "15") == 0.0  # "." is not in the official list


def test_cmrc_f1_is_the_longest_common_substring_over_mixed_segments():
    # gold segments: 光 荣 和 ω force ("-" dropped); prediction 光 荣: LCS 2, P 1, R 2/5
    assert metrics.cmrc_segments("光荣和ω-force") == ["光", "荣", "和", "ω", "force"]
    assert metrics.cmrc_f1("光荣", "光荣和ω-force") == pytest.approx(2 * 1 * 0.4 / 1.4)
    assert metrics.cmrc_f1("索尼", "光荣") == 0.0
    scores = metrics.span_extraction([["光荣", "光荣公司"], ["东京"]], ["光荣公司", "大阪"])
    assert scores == {"em": 50.0, "f1": 50.0}  # best gold per question: 1 and 0


def test_seed_spread_is_the_sample_std_mean_and_max():
    assert metrics.spread([1.0, 2.0, 3.0]) == {"mean": 2.0, "std": 1.0, "max": 3.0, "min": 1.0}
    assert metrics.spread([57.0])["std"] == 0.0
