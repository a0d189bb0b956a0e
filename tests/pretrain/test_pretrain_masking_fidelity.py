"""The masking strategies deliver the units they promise, on the real English sample (MiniLM tokenizer).

The criteria of docs/method.md §3 as bench/masking.py prints them: corpus mask rate 15% ± 0.5%,
no unit masked in part, BURT's coverage ratio within 0.85–1.15 with masked-unit lengths close to
the pool's, SpanBERT lengths on the truncated Geometric(0.2) within 2 points per length.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.models.loading import load_tokenizer
from pipeline.pretrain import span_sampling
from pipeline.pretrain.masking import MaskingCollator
from pipeline.pretrain.masking_stats import MaskingStats

EPOCHS = 2
STRATEGIES = [
    ("token", "uniform"),
    ("whole-word", "uniform"),
    ("ngram", "uniform"),
    ("ngram", "ngrams-first"),
    ("entity", "uniform"),
    ("span", "uniform"),
]


def units_of(strategy: str, row: dict, eligible: np.ndarray) -> list[tuple[int, int]]:
    """The units a strategy promises to mask whole: kept n-gram / entity spans, or words."""
    if strategy in ("ngram", "entity"):
        spans = np.asarray(row["ngram_spans" if strategy == "ngram" else "entity_spans"]).reshape(-1, 2)
        return span_sampling.longest_non_overlapping(spans, eligible)
    return span_sampling.word_units(np.asarray(row["word_ids"]), eligible)


@pytest.fixture(scope="module")
def measured(minilm_sample):
    model, dataset = minilm_sample
    tokenizer = load_tokenizer(str(model))
    rows = [dataset[i] for i in range(len(dataset))]
    results = {}
    for strategy, pool in STRATEGIES:
        collator = MaskingCollator(tokenizer, strategy, seed=0, ngram_pool=pool)
        stats, partial, whole = MaskingStats(), 0, 0
        for epoch in range(EPOCHS):
            collator.set_epoch(epoch)
            for row in rows:
                _, labels = collator.mask_example(row, stats=stats)
                masked = labels != -100
                for start, end in units_of(strategy, row, collator.eligible(np.asarray(row["input_ids"]))):
                    hits = int(masked[start:end].sum())
                    partial += 0 < hits < end - start
                    whole += hits == end - start
        results[strategy, pool] = stats, partial, whole
    return results


@pytest.mark.parametrize(("strategy", "pool"), [s for s in STRATEGIES if s[0] != "token"])
def test_every_unit_is_masked_whole(measured, strategy, pool):
    _, partial, whole = measured[strategy, pool]
    assert whole > 500 and partial == 0


def test_token_masking_does_cut_words(measured):  # the check above can fail: BERT's MLM masks sub-words
    assert measured["token", "uniform"][1] > 1000


@pytest.mark.parametrize(("strategy", "pool"), [s for s in STRATEGIES if s[1] == "uniform"])
def test_corpus_mask_rate_is_fifteen_percent(measured, strategy, pool):
    rate = measured[strategy, pool][0].summary()["mask_rate"]
    assert rate == pytest.approx(0.15, abs=0.005)


def test_burt_masks_ngram_tokens_as_often_as_other_tokens(measured):
    uniform = measured["ngram", "uniform"][0].summary()
    first = measured["ngram", "ngrams-first"][0].summary()
    assert 0.85 <= uniform["coverage_ratio"] <= 1.15
    assert first["coverage_ratio"] > uniform["coverage_ratio"] + 0.1  # the option favours n-grams
    assert uniform["masked_share"]["pmi"] > 0.05 and uniform["masked_share"]["entity"] > 0.05
    pool, masked = uniform["pool_unit_share"], uniform["masked_unit_share"]
    assert set(masked) <= set(pool)
    assert all(abs(masked.get(k, 0.0) - share) <= 0.03 for k, share in pool.items())


def test_spanbert_lengths_follow_the_truncated_geometric(measured):
    stats = measured["span", "uniform"][0]
    total = sum(stats.masked_unit_words.values())
    law = span_sampling.truncated_geometric(0.2, 1, 6)
    got = np.array([stats.masked_unit_words.get(k, 0) / total for k in range(1, 7)])
    assert total > 3000 and set(stats.masked_unit_words) <= set(range(1, 7))
    assert np.abs(got - law).max() <= 0.02
