"""The scoreboard's tests (pipeline/scoreboard/scoreboard_items.py, scoreboard_stats.py): no verdict without a
test (issue 46 §2), each test read from the per-item outputs the evaluations write, 2.5% in each direction
(issue 54 §2), a claim's columns as one family (an intersection–union test for "all N", Holm's correction
for "at least k of N" and for "reversed"), the analogy's cluster bootstrap over word pairs, bounded memory, a
std whose square overflows, repeated seeds, and how the verdicts read in the report."""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pipeline.scoreboard import scoreboard, scoreboard_bootstrap, scoreboard_ids, scoreboard_items, scoreboard_render


def claim(board: dict, claim_id: str) -> dict:
    return next(c for c in board["claims"] if c["id"] == claim_id)


def judged(tables: dict) -> dict:
    return scoreboard.build(tables, {"run": "x"}, scoreboard.load_claims(), plan_records=[])


def metrics_row(tmp_path: Path, table_label: str, cells: dict, data: dict, **extra) -> dict:
    """A table row whose metrics file holds ``data`` (a metrics JSON with per-item outcomes)."""
    path = tmp_path / f"{table_label}.json"
    path.write_text(json.dumps(data))
    source = {"seed": 0, "metrics_file": str(path)}
    return {"label": table_label, "pooling": None, "facet": None, "cells": cells, "source": source} | extra


# ------------------------------------------------------------------------------------ accuracy: McNemar
def test_snli_accuracy_is_judged_by_mcnemar_on_the_test_predictions(tmp_path):
    """One number per model, 200 test pairs each: the exact McNemar test on the discordant pairs decides, the
    same p as scipy's binomial test on them."""
    rng = np.random.default_rng(3)
    low = rng.random(200) < 0.6
    high = low.copy()
    high[np.flatnonzero(~low)[:25]] = True  # 25 more right, and 5 fewer
    high[np.flatnonzero(low)[:5]] = False
    bits = lambda hits: "".join("1" if h else "0" for h in hits)
    rows = [
        metrics_row(tmp_path, "bilstm-bf-combined-600", {"test": 100 * high.mean()}, {"test_correct": bits(high)}),
        metrics_row(tmp_path, "bilstm-max-600", {"test": 100 * low.mean()}, {"test_correct": bits(low)}),
    ]
    (pair,) = claim(judged({"bilstm_snli": {"rows": rows}}), "bf-snli-over-max")["pairs"]
    direct = stats.binomtest(25, 30, 0.5, alternative="greater").pvalue
    assert pair["verdict"] == "holds" and pair["p"] == pytest.approx(direct)
    assert pair["test"].startswith("McNemar's exact test (200 items, 25 won and 5 lost)")


def test_a_verdict_by_sign_is_gone_where_no_items_are_written(tmp_path):
    """The demo's only "holds" (twin-sts-over-bert, 41.0 against 39.8, one number each) was the sign rule's:
    without per-pair scores it is untested, and the header counts it apart."""
    rows = [
        {"label": "tiny+twin", "pooling": "mean", "facet": None, "cells": {"avg": 41.04}, "source": {"seed": 0}},
        {"label": "tiny", "pooling": "mean", "facet": None, "cells": {"avg": 39.81}, "source": {"seed": 0}},
    ]
    board = judged({"sts": {"rows": rows}})
    assert claim(board, "twin-sts-over-bert")["verdict"] == "untested"
    assert board["claim_counts"]["holds"] == 0 and board["claim_counts"]["untested"] == 1
    assert "0 hold, 0 inconclusive, 0 reversed; 1 untested" in scoreboard_render.markdown(board)


# ------------------------------------------------------------------------- correlations: bootstrap
def sts_data(gold: np.ndarray, predicted: np.ndarray) -> dict:
    """An sts metrics file's ``items``: every set one subset of the same pairs."""
    one = {"gold": gold.tolist(), "predicted": predicted.tolist()}
    return {"items": {name: {"test": one} for name in scoreboard_items.STS_SETS["avg"]}}


def sts_rows(tmp_path):
    """(gold, better, worse, rows): 300 STS pairs, a model near the gold scores and one far from them, as
    the rows of an sts table."""
    rng = np.random.default_rng(5)
    gold = rng.uniform(0, 5, 300)
    better, worse = gold + rng.normal(0, 1, 300), gold + rng.normal(0, 3, 300)
    rows = [
        metrics_row(tmp_path, "tiny+twin", {"avg": 80.0}, sts_data(gold, better), pooling="mean"),
        metrics_row(tmp_path, "tiny", {"avg": 50.0}, sts_data(gold, worse), pooling="mean"),
    ]
    return gold, better, worse, rows


def test_sts_is_judged_by_a_paired_bootstrap_over_its_pairs(tmp_path):
    gold, _, worse, rows = sts_rows(tmp_path)
    (pair,) = claim(judged({"sts": {"rows": rows}}), "twin-sts-over-bert")["pairs"]
    assert pair["verdict"] == "holds" and pair["test"].startswith("paired bootstrap over pairs (spearman, 2100 pairs")
    # the same model twice: no replicate above zero or below it, neither direction
    rows[0] = metrics_row(tmp_path, "tiny+twin", {"avg": 50.0}, sts_data(gold, worse), pooling="mean")
    (same,) = claim(judged({"sts": {"rows": rows}}), "twin-sts-over-bert")["pairs"]
    assert same["verdict"] == "inconclusive"


def test_a_file_without_item_ids_is_tested_and_says_the_items_were_not_checked(tmp_path):
    """A metrics file written before the item ids keeps its test, and the verdict row says what it rests on;
    with the same ids on both sides the note is gone, and McNemar pairs SNLI's ``test_ids`` the same way."""
    gold, better, worse, rows = sts_rows(tmp_path)
    (pair,) = claim(judged({"sts": {"rows": rows}}), "twin-sts-over-bert")["pairs"]
    assert pair["verdict"] == "holds" and pair["test"].endswith(scoreboard_ids.UNCHECKED)
    with_ids = lambda data: {
        "items": {n: {"test": s["test"] | {"ids": list(range(300))}} for n, s in data["items"].items()}
    }
    rows = [
        metrics_row(tmp_path, "tiny+twin", {"avg": 80.0}, with_ids(sts_data(gold, better)), pooling="mean"),
        metrics_row(tmp_path, "tiny", {"avg": 50.0}, with_ids(sts_data(gold, worse)), pooling="mean"),
    ]
    (pair,) = claim(judged({"sts": {"rows": rows}}), "twin-sts-over-bert")["pairs"]
    assert pair["verdict"] == "holds" and "identity" not in pair["test"]

    rows = [
        metrics_row(
            tmp_path, "bilstm-bf-combined-600", {"test": 90.0}, {"test_correct": "1" * 40, "test_ids": list(range(40))}
        ),
        metrics_row(
            tmp_path, "bilstm-max-600", {"test": 50.0}, {"test_correct": "10" * 20, "test_ids": list(range(1, 41))}
        ),
    ]
    (pair,) = claim(judged({"bilstm_snli": {"rows": rows}}), "bf-snli-over-max")["pairs"]
    assert pair["verdict"] == "untested" and "not scored on the same items of test (the SNLI test set" in pair["test"]


def test_the_twin_ablation_fallback_bootstraps_the_word_sets_it_averages(tmp_path):
    rng = np.random.default_rng(6)
    gold = rng.uniform(0, 10, 200)

    def words(noise: float, name: str) -> dict:
        items = {
            s: {"gold": gold.tolist(), "predicted": (gold + rng.normal(0, noise, 200)).tolist()}
            for s in scoreboard_items.WORD_SETS.values()
        }
        path = tmp_path / f"wordsim-{name}.json"
        path.write_text(json.dumps({"items": items}))
        return {"metrics_file": str(path), "columns": ["simlex", "ws_sim", "ws_rel", "men"]}

    def row(label: str, value: float, noise: float, facet: str) -> dict:
        cells = {"simlex": value, "ws_sim": value, "ws_rel": value, "men": value, "scws": None, "avg": None}
        source = {"seed": 0, "merged": [words(noise, label)]}
        return {"label": label, "pooling": "mean", "facet": facet, "cells": cells, "source": source}

    rows = [row("tiny+twin.mean", 70.0, 1.0, "Pooling: MEAN"), row("tiny+twin.cls", 40.0, 6.0, "Pooling: CLS")]
    mean_pooling = claim(judged({"ablation": {"rows": rows}}), "twin-mean-pooling")
    (pair,) = mean_pooling["pairs"]
    assert mean_pooling["verdict"] == "holds" and "800 pairs" in pair["test"]
    assert mean_pooling["judged_on"]["columns"] == ["simlex", "ws_sim", "ws_rel", "men"]


# ---------------------------------------------------------------------- analogy: cluster bootstrap
def ordered_pair_questions(pairs: int) -> list[list[int]]:
    return [[a, b] for a in range(pairs) for b in range(pairs) if a != b]


def analogy_data(hits_sem: np.ndarray, hits_syn: np.ndarray, pairs: list[list[int]] | None) -> dict:
    bits = lambda hits: "".join("1" if h else "0" for h in hits)
    category = lambda kind, hits: (
        {"type": kind, "in_tables": True, "correct": bits(hits)} | ({"pairs": pairs} if pairs is not None else {})
    )
    return {
        "categories": {
            "word/capital-common": category("semantic", hits_sem),
            "word/do-doing": category("syntactic", hits_syn),
        }
    }


def test_analogy_is_judged_by_a_cluster_bootstrap_over_word_pairs(tmp_path):
    questions = ordered_pair_questions(23)  # capital-common: 506 questions from 23 pairs
    rng = np.random.default_rng(7)
    low = rng.random(506) < 0.3
    high = rng.random(506) < 0.8
    rows = [
        metrics_row(tmp_path, "tiny+burt", {"word_avg": 80.0}, analogy_data(high, high, questions), pooling="mean"),
        metrics_row(tmp_path, "tiny", {"word_avg": 30.0}, analogy_data(low, low, questions), pooling="mean"),
    ]
    over_bert = claim(judged({"analogy": {"rows": rows}}), "burt-analogy-word-over-bert")
    (pair,) = over_bert["pairs"]
    assert over_bert["verdict"] == "holds"
    assert pair["test"].startswith("cluster bootstrap over word pairs (1012 questions from 46 pairs")
    assert "seeds" not in over_bert  # no seeds were used: no fine-tuning-seeds caveat beside it
    # the same outcomes without each question's word pairs: untested, not a question-level bootstrap
    rows = [
        metrics_row(tmp_path, "tiny+burt", {"word_avg": 80.0}, analogy_data(high, high, None), pooling="mean"),
        metrics_row(tmp_path, "tiny", {"word_avg": 30.0}, analogy_data(low, low, None), pooling="mean"),
    ]
    (pair,) = claim(judged({"analogy": {"rows": rows}}), "burt-analogy-word-over-bert")["pairs"]
    assert pair["verdict"] == "untested" and "word pairs" in pair["test"]


def test_the_cluster_bootstrap_is_wider_than_the_question_bootstrap_where_pairs_decide():
    """A question's outcome follows its word pairs (some pairs are easy for one model only): resampling
    questions as if independent understates the spread; resampling pairs does not."""
    pairs = np.asarray(ordered_pair_questions(23))
    rng = np.random.default_rng(8)
    easy_high, easy_low = rng.random(23) < 0.5, rng.random(23) < 0.5
    high = (easy_high[pairs[:, 0]] & easy_high[pairs[:, 1]]).astype(float)
    low = (easy_low[pairs[:, 0]] & easy_low[pairs[:, 1]]).astype(float)
    by_question = scoreboard_bootstrap.paired_bootstrap([high], [low])["interval"]
    by_pair = scoreboard_bootstrap.cluster_bootstrap(
        [scoreboard_bootstrap.Hits(high, pairs)], [scoreboard_bootstrap.Hits(low, pairs)]
    )["interval"]
    assert by_pair[1] - by_pair[0] > 2 * (by_question[1] - by_question[0])


def three_level_data(easy: np.ndarray, word_pairs: bool) -> dict:
    """A semantic and a syntactic category of 23 word pairs each at every level, each level's 506 questions
    the ordered pairs of its pairs, right where both pairs are easy for the model (at every level: the
    model knows a word pair or not). A phrase or sentence file wraps each pair in two templates, one as
    (A, B), one as (C, D), so its own ``pairs`` name 46 pairs (ULR App. A.2; the real files'); with
    ``word_pairs`` each question also carries the word pairs' ids shared by every level, as analogy.evaluate
    writes them."""
    questions = np.asarray(ordered_pair_questions(23))
    bits = lambda hits: "".join("1" if h else "0" for h in hits)
    categories = {}
    for level in ("word", "phrase", "sentence"):
        for kind, first in (("semantic", 0), ("syntactic", 23)):
            own = questions if level == "word" else questions + [0, 23]  # the (C, D) template: 23 more
            hits = easy[first + questions[:, 0]] & easy[first + questions[:, 1]]
            category = {"type": kind, "in_tables": True, "correct": bits(hits), "pairs": own.tolist()}
            if word_pairs:
                category["word_pair_ids"] = (first + questions).tolist()
            categories[f"{level}/{kind}-category"] = category
    return {"categories": categories}


def test_a_word_pair_is_one_cluster_at_every_level(tmp_path):
    """ulr-analogy-average averages the three levels, whose questions wrap the same 46 word pairs: one draw
    of a word pair takes its questions at every level. Clustered per level and per template (an older
    file, each word pair counted up to five times), the interval is too narrow; the test says which it did."""
    rng = np.random.default_rng(11)
    easy_high, easy_low = rng.random(46) < 0.5, rng.random(46) < 0.5
    tests = {}
    for traced in (True, False):
        rows = [
            metrics_row(tmp_path, f"tiny+misad-{traced}", {"avg": 50.0}, three_level_data(easy_high, traced)),
            metrics_row(tmp_path, f"tiny-{traced}", {"avg": 40.0}, three_level_data(easy_low, traced)),
        ]
        rows[0]["label"], rows[1]["label"] = "tiny+misad", "tiny"
        (tests[traced],) = claim(judged({"analogy": {"rows": rows}}), "ulr-analogy-average")["pairs"]
    assert tests[True]["test"].startswith("cluster bootstrap over word pairs (3036 questions from 46 pairs")
    assert "older file" not in tests[True]["test"]
    assert tests[False]["test"].startswith("cluster bootstrap over word pairs (3036 questions from 230 pairs")
    assert "each level's and category's word pairs drawn apart" in tests[False]["test"]
    width = lambda test: test["interval"][1] - test["interval"][0]
    assert width(tests[True]) > 1.5 * width(tests[False])
    # both models' easy pairs are drawn alike: "reversed" is a false verdict of the per-level clustering
    assert tests[False]["verdict"] == "reversed" and tests[True]["verdict"] == "inconclusive"


# --------------------------------------------------------------------------- several columns: Holm
def test_holm_adjusts_step_down():
    from pipeline.scoreboard.scoreboard_stats import holm

    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]


def test_one_reversed_column_of_ten_is_no_reversal_once_the_family_is_corrected():
    """bf-transfer-over-max needs all ten columns: one column below at p ≈ 0.007 and nine ties was
    "reversed"; Holm's correction over the ten makes it 0.07, inconclusive."""
    columns = ["mr", "cr", "subj", "mpqa", "sst", "trec", "sickr", "sicke", "sts14_pearson", "sts14_spearman"]
    seeds = list(range(5))
    cells = lambda values: values | {f"{c}_std": 1.0 for c in values}
    bf = {c: 80.0 for c in columns} | {"mr": 78.0}
    rows = [
        {
            "label": "bilstm-bf-combined-600",
            "pooling": None,
            "facet": None,
            "cells": cells(bf),
            "source": {"seed": seeds},
        },
        {
            "label": "bilstm-max-600",
            "pooling": None,
            "facet": None,
            "cells": cells({c: 80.0 for c in columns}),
            "source": {"seed": seeds},
        },
    ]
    over_max = claim(judged({"transfer": {"rows": rows}}), "bf-transfer-over-max")
    mr = over_max["pairs"][0]["columns"][0]
    assert mr["p_reversed"] < 0.05 < mr["p_reversed_holm"]
    assert over_max["verdict"] == "inconclusive"


TRANSFER_COLUMNS = ["mr", "cr", "subj", "mpqa", "sst", "trec", "sickr", "sicke", "sts14_pearson", "sts14_spearman"]
CLUE_TASKS = ["tnews", "iflytek", "cluewsc", "afqmc", "csl", "ocnli"]


def seeded_row(label: str, means: dict, seeds: int = 5) -> dict:
    """A row of ``seeds`` seeds, std 1 on every column."""
    cells = means | {f"{c}_std": 1.0 for c in means}
    return {"label": label, "pooling": None, "facet": None, "cells": cells, "source": {"seed": list(range(seeds))}}


def test_each_direction_is_tested_at_two_and_a_half_percent():
    """Two equal models "hold" or are "reversed" at most 5% of the time only if each direction is tested at
    2.5%: a column 1.3 points up over 5 seeds (std 1), one-sided p ≈ 0.037, is inconclusive, not "holds"."""
    rows = [glue_row("tiny+misad", 81.3, 1.0, [0, 1, 2, 3, 4]), glue_row("tiny+mlm", 80.0, 1.0, [0, 1, 2, 3, 4])]
    (pair,) = claim(judged({"glue": {"rows": rows}}), "ulr-glue-cola")["pairs"]
    direct = stats.ttest_ind_from_stats(81.3, 1.0, 5, 80.0, 1.0, 5, equal_var=False, alternative="greater")
    assert pair["p"] == pytest.approx(direct.pvalue) and 0.025 < pair["p"] < 0.05
    assert pair["verdict"] == "inconclusive"


def test_all_n_columns_hold_where_each_holds_at_its_own_level():
    """bf-transfer-over-max ("on all transfer tasks"): an intersection–union test (Berger 1982) needs no
    correction, so ten columns each 2 points up over 5 seeds (p ≈ 0.007 each) hold. Holm's correction for
    "holds" made each 0.07 and the claim inconclusive. "Reversed" stays on Holm's p-values, and each column
    says which adjustment it got, in the JSON and in the rendered table."""
    bf = seeded_row("bilstm-bf-combined-600", {c: 82.0 for c in TRANSFER_COLUMNS})
    board = judged({"transfer": {"rows": [bf, seeded_row("bilstm-max-600", {c: 80.0 for c in TRANSFER_COLUMNS})]}})
    over_max = claim(board, "bf-transfer-over-max")
    columns = over_max["pairs"][0]["columns"]
    assert all(0.005 < c["p"] < 0.025 and c["verdict"] == "holds" for c in columns)
    assert all("p_holm" not in c and c["p_reversed_holm"] == pytest.approx(1.0) for c in columns)
    assert "intersection–union" in columns[0]["adjustment"] and "reversed: Holm over 10" in columns[0]["adjustment"]
    assert over_max["verdict"] == "holds"
    text = scoreboard_render.markdown(board)
    assert "mr 82.00 ± 1.00 (n = 5) vs 80.00 ± 1.00 (n = 5) → holds (p = 0.00" in text
    assert "all 10 must hold (intersection–union test)" in text


def test_at_least_k_of_n_counts_columns_on_holms_p_values():
    """BURT §6.1's "4 out of 6 tasks" is not an intersection–union test: four columns each at p ≈ 0.007
    hold alone, but Holm over the six makes them 0.04, above 2.5%: inconclusive, and each column shows its
    Holm-adjusted p."""
    burt = dict(zip(CLUE_TASKS, [82.0, 82.0, 82.0, 82.0, 80.0, 80.0]))
    span = {c: 80.0 for c in CLUE_TASKS}
    board = judged({"clue": {"rows": [seeded_row("tiny+burt", burt), seeded_row("tiny+spanbert", span)]}})
    over_span = claim(board, "burt-clue-over-span")
    columns = over_span["pairs"][0]["columns"]
    assert all(c["p"] < 0.025 < c["p_holm"] < 0.05 for c in columns[:4])
    assert {c["verdict"] for c in columns} == {"inconclusive"} and over_span["verdict"] == "inconclusive"
    assert "Holm over 6 (at least 4 of 6)" in columns[0]["adjustment"]
    assert "→ inconclusive (p = 0.007 (Holm-adjusted 0.04" in scoreboard_render.markdown(board)


# ---------------------------------------------------------------------------- seeds and their spread
def glue_row(label: str, mean: float, std: float, seeds: list[int]) -> dict:
    return {
        "label": label,
        "pooling": None,
        "facet": None,
        "cells": {"cola": mean, "cola_std": std},
        "source": {"seed": seeds},
    }


def test_a_std_whose_square_overflows_is_tested_not_a_traceback():
    rows = [glue_row("tiny+misad", 9e200, 1e200, [0, 1, 2, 3, 4]), glue_row("tiny+mlm", 1e200, 1e200, [0, 1, 2, 3, 4])]
    (pair,) = claim(judged({"glue": {"rows": rows}}), "ulr-glue-cola")["pairs"]
    direct = stats.ttest_ind_from_stats(9.0, 1.0, 5, 1.0, 1.0, 5, equal_var=False, alternative="greater")
    assert pair["verdict"] == "holds" and pair["p"] == pytest.approx(direct.pvalue, rel=1e-9)
    assert math.isfinite(pair["detectable"])


def test_one_seed_listed_five_times_is_one_seed():
    rows = [glue_row("tiny+misad", 60.0, 1.0, [7] * 5), glue_row("tiny+mlm", 50.0, 1.0, [7] * 5)]
    board = judged({"glue": {"rows": rows}})
    (pair,) = claim(board, "ulr-glue-cola")["pairs"]
    assert pair["higher"]["n"] == 1 and pair["verdict"] == "untested"
    assert board["repeated_seeds"] == ["tiny+misad", "tiny+mlm"]


def test_the_seeds_caveat_stands_beside_welch_verdicts_only():
    rows = [glue_row("tiny+misad", 60.0, 1.0, [0, 1, 2]), glue_row("tiny+mlm", 50.0, 1.0, [0, 1, 2])]
    board = judged({"glue": {"rows": rows}})
    assert "fine-tuning seeds" in claim(board, "ulr-glue-cola")["seeds"]
    assert board["tests"] == ["Welch's t-test"]
    text = scoreboard_render.markdown(board)
    assert "1 holds, 0 inconclusive" in text and "Tests used in this run: Welch's t-test" in text


# ------------------------------------------------------------------------------------ bounded memory
def test_the_bootstrap_draws_in_chunks_whatever_the_item_count(monkeypatch):
    """100,000 items x 200 replicates drawn at once would hold 160 MB of draws; in chunks of 2^21 draws
    (16 MiB) the peak stays far below."""
    monkeypatch.setattr(scoreboard_bootstrap, "REPLICATES", 200)
    rng = np.random.default_rng(9)
    high, low = [rng.random(100_000)], [rng.random(100_000)]
    tracemalloc.start()
    try:
        scoreboard_bootstrap.paired_bootstrap(high, low)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 60 * 2**20


def test_the_correlation_bootstrap_sorts_each_list_once_however_many_chunks(monkeypatch):
    """200,000 STS pairs did not finish in 5 minutes: every chunk of replicates sorted the gold and both
    models' scores again (quadratic in the pairs). Each list is sorted once now, and a smaller chunk (more
    chunks) gives the same p-values."""
    rng = np.random.default_rng(3)
    gold = np.round(rng.uniform(0, 5, 3000) * 5) / 5
    high = [(1.0, scoreboard_bootstrap.Scored(gold, gold + rng.normal(0, 1, 3000)))]
    low = [(1.0, scoreboard_bootstrap.Scored(gold, gold + rng.normal(0, 1.2, 3000)))]
    sorts = []
    of = scoreboard_bootstrap.RankOrder.of.__func__
    monkeypatch.setattr(
        scoreboard_bootstrap.RankOrder, "of", classmethod(lambda cls, values: sorts.append(1) or of(cls, values))
    )
    whole = scoreboard_bootstrap.correlation_bootstrap("spearman", high, low)
    monkeypatch.setattr(scoreboard_bootstrap, "CHUNK_ELEMENTS", 4 * 3000 * 7)  # 7 replicates a chunk: 286 chunks
    chunked = scoreboard_bootstrap.correlation_bootstrap("spearman", high, low)
    assert len(sorts) == 6  # gold, high and low, once per call
    assert chunked["p"] == whole["p"] and chunked["p_reversed"] == whole["p_reversed"]
    assert whole["p"] < 0.05


# ------------------------------------------------------------------------------------------ report
def test_the_html_colours_each_verdict_and_the_markdown_counts_in_words():
    rows = [
        glue_row("tiny+misad", 60.0, 1.0, [0, 1, 2]),
        glue_row("tiny+mlm", 50.0, 1.0, [0, 1, 2]),
        glue_row("tiny+nsp", 50.0, 1.0, [0, 1, 2]),
    ]
    board = judged({"glue": {"rows": rows}})
    page = scoreboard_render.to_html(board)
    assert "<td class='verdict-holds'>ulr-glue-cola" not in page  # the class is on the verdict cell
    assert "<td class='verdict-holds'>holds" in page and "td.verdict-holds {" in page
    assert "<td class='verdict-not-run'>not run" in page


def test_a_replicates_correlation_is_scipys_on_the_resampled_pairs():
    """The bootstrap ranks each replicate from how often each pair was drawn (no sort per replicate): the
    same Spearman and Pearson as scipy's on the drawn pairs themselves, ties included."""
    rng = np.random.default_rng(1)
    gold = np.round(rng.uniform(0, 5, 50), 1)  # ties among the gold scores
    predicted = gold + rng.normal(0, 1, 50)
    predicted[3] = predicted[4]
    draws = rng.integers(0, 50, size=(5, 50))
    counts = np.stack([np.bincount(d, minlength=50) for d in draws]).astype(np.float64)
    for method, direct in (("spearman", stats.spearmanr), ("pearson", stats.pearsonr)):
        found = scoreboard_bootstrap.replicate_correlations(method, counts, predicted, gold)
        assert found == pytest.approx([direct(predicted[d], gold[d]).statistic for d in draws])
