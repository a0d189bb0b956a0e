"""Masking collators: budgets met in expectation, whole units, one 80/10/10 draw per unit, dynamic and reproducible."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest
from transformers import AutoTokenizer

from pipeline.pretrain import span_sampling
from pipeline.pretrain.masking import STRATEGIES, MaskingCollator, Strategy


@pytest.mark.parametrize(("eligible", "expected"), [(0, 0), (1, 0.15), (7, 1.05), (20, 3), (62, 9.3)])
def test_budget_is_fifteen_percent_of_the_eligible_tokens(eligible, expected):
    assert span_sampling.budget_for(eligible, 0.15) == pytest.approx(expected)


def test_a_unit_that_overshoots_is_taken_whole_with_probability_remaining_over_length():
    rng = np.random.default_rng(0)
    units = [(1, 3), (3, 7)]  # 2 tokens, then 4
    totals = [sum(e - s for s, e in span_sampling.take_units(units, [0, 1], 3.0, rng)) for _ in range(4000)]
    assert set(totals) == {2, 6}  # never part of the 4-token unit
    assert np.mean(totals) == pytest.approx(3.0, abs=0.1)  # taken with probability 1/4: 2 + 4/4
    singles = [(p, p + 1) for p in range(10)]
    counts = [len(span_sampling.take_units(singles, rng.permutation(10), 2.3, rng)) for _ in range(4000)]
    assert set(counts) == {2, 3} and np.mean(counts) == pytest.approx(2.3, abs=0.03)  # stochastic rounding


def test_truncated_geometric_span_lengths():
    weights = [0.2 * 0.8**k for k in range(6)]  # 0.2, 0.16, 0.128, 0.1024, 0.08192, 0.065536
    law = span_sampling.truncated_geometric(0.2, 1, 6)
    assert law == pytest.approx([w / 0.737856 for w in weights])
    assert law[0] == pytest.approx(0.2710556, abs=1e-7)


def test_span_length_draws_are_numpys_choice_from_the_same_stream():
    """span_units draws lengths by the inverse CDF as Generator.choice(p=...) does, without its checks:
    the same draws, the stream left in the same state (so every later draw of a masking is unchanged)."""
    laws = np.random.default_rng(7).dirichlet(np.ones(6), size=50)
    laws[:, 4] = 0.0  # an infeasible length, as span_units zeroes them
    for seed, law in enumerate(laws / laws.sum(axis=1, keepdims=True)):
        ours, numpys = np.random.default_rng(seed), np.random.default_rng(seed)
        assert [span_sampling._draw(law, ours) for _ in range(20)] == [int(numpys.choice(6, p=law)) for _ in range(20)]
        assert ours.random() == numpys.random()


def test_overlapping_ngrams_keep_the_longest():
    eligible = np.array([False] + [True] * 8 + [False])
    spans = np.array([[1, 3], [2, 6], [5, 7], [7, 8], [8, 10]])  # (8, 10) reaches [SEP]: never maskable
    assert span_sampling.longest_non_overlapping(spans, eligible) == [(2, 6), (7, 8)]


def test_ngrams_first_is_the_default():
    assert span_sampling.POOLS[0] == "ngrams-first"


def test_ngrams_first_tokens_only_where_every_ngram_is_taken():
    eligible = np.array([False] + [True] * 8 + [False])
    spans = np.array([[1, 4]])
    for seed in range(20):
        rng = np.random.default_rng(seed)
        assert span_sampling.ngram_units(spans, eligible, 3, rng) == [(1, 4)]
        units = span_sampling.ngram_units(spans, eligible, 5, rng)  # the trigram, then two tokens
        assert (1, 4) in units and sum(e - s for s, e in units) == 5
        assert all(e - s == 1 and s >= 4 for s, e in units if (s, e) != (1, 4))


def test_ngrams_first_an_ngram_that_does_not_fit_gives_way_and_the_budget_holds_in_expectation():
    eligible = np.array([False] + [True] * 12 + [False])
    spans = np.array([[1, 4], [5, 7], [8, 11]])  # a trigram, a bigram, a trigram; 4 uncovered tokens
    rng = np.random.default_rng(0)
    totals, singles, bigram_first = [], 0, 0
    for _ in range(6000):
        units = span_sampling.ngram_units(spans, eligible, 2.5, rng)
        totals.append(sum(e - s for s, e in units))
        singles += sum(1 for s, e in units if e - s == 1)
        bigram_first += (5, 7) in units
    assert singles == 0  # n-grams are left: no single token is masked
    assert np.mean(totals) == pytest.approx(2.5, abs=0.05)  # 15% in expectation, never a unit cut
    # the bigram fits whatever is drawn first (a trigram that does not fit gives way to it)
    assert bigram_first > 5000


def test_ngrams_first_fills_with_tokens_only_what_no_ngram_can():
    eligible = np.array([False] + [True] * 12 + [False])
    spans = np.array([[1, 3]])  # one bigram: a budget of 4.2 takes it and 2.2 single tokens on average
    rng = np.random.default_rng(0)
    totals = []
    for _ in range(4000):
        units = span_sampling.ngram_units(spans, eligible, 4.2, rng)
        assert (1, 3) in units
        totals.append(sum(e - s for s, e in units))
    assert np.mean(totals) == pytest.approx(4.2, abs=0.05)


def test_ngrams_only_is_the_released_rule_and_overshoots():
    eligible = np.array([False] + [True] * 12 + [False])
    spans = np.array([[1, 4], [5, 7], [8, 11]])
    rng = np.random.default_rng(0)
    for _ in range(200):
        units = span_sampling.ngram_units(spans, eligible, 2.5, rng, "ngrams-only")
        assert len(units) in (1, 2) and all(e - s > 1 for s, e in units)
        assert sum(e - s for s, e in units) >= 2.5  # masks until the budget is passed


def test_uniform_pool_samples_ngrams_and_uncovered_tokens_alike():
    eligible = np.array([False] + [True] * 12 + [False])
    spans = np.array([[1, 4], [2, 3], [6, 8]])  # (2, 3) lies inside the trigram: not a unit
    rng = np.random.default_rng(1)
    taken = {"trigram": 0, "bigram": 0, "single": 0}
    totals = []
    for _ in range(3000):
        units = span_sampling.ngram_units(spans, eligible, 1.8, rng, "uniform")
        assert (2, 3) not in units
        for s, e in units:
            assert (s, e) in [(1, 4), (6, 8)] or (e - s == 1 and not 1 <= s < 4 and not 6 <= s < 8)
            taken["trigram" if e - s == 3 else "bigram" if e - s == 2 else "single"] += 1
        totals.append(sum(e - s for s, e in units))
    assert np.mean(totals) == pytest.approx(1.8, abs=0.05)
    # 9 units (2 n-grams, 7 single tokens): each is the first drawn 1/9 of the time
    assert taken["trigram"] > 150 and taken["bigram"] > 300 and taken["single"] > 2000


def test_word_units_follow_word_ids():
    word_ids = np.array([-1, 0, 1, 1, 1, 2, 3, 3, -1, -1])
    eligible = word_ids >= 0
    assert span_sampling.word_units(word_ids, eligible) == [(1, 2), (2, 5), (5, 6), (6, 8)]
    eligible[3] = False  # an excluded token splits its word into the parts around it
    assert span_sampling.word_units(word_ids, eligible) == [(1, 2), (2, 3), (4, 5), (5, 6), (6, 8)]


@pytest.fixture(scope="module")
def tokenizer(tiny_en):
    return AutoTokenizer.from_pretrained(tiny_en)


@pytest.fixture(scope="module")
def rows(dataset_en):
    return [dataset_en[i] for i in range(len(dataset_en))]


def collate(tokenizer, rows, strategy, epoch=0, seed=0, **options):
    collator = MaskingCollator(tokenizer, strategy, seed=seed, **options)
    collator.set_epoch(epoch)
    return [collator([row]) for row in rows], collator


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_budgets_specials_and_padding(tokenizer, rows, strategy):
    collator = MaskingCollator(tokenizer, strategy, seed=3)
    batch = collator(rows[:32])
    special = set(tokenizer.all_special_ids)
    total_masked = total_eligible = 0
    for i, row in enumerate(rows[:32]):
        ids = np.asarray(row["input_ids"])
        labels = batch["labels"][i].numpy()
        eligible = ~np.isin(ids, list(special))
        budget = span_sampling.budget_for(int(eligible.sum()), 0.15)
        masked = int((labels[: len(ids)] != -100).sum())
        if strategy == "token":
            assert masked in (np.floor(budget), np.ceil(budget))
        total_masked += masked
        total_eligible += eligible.sum()
        assert (labels[: len(ids)][~eligible] == -100).all()  # special tokens are never predicted
        assert (batch["input_ids"][i, : len(ids)].numpy()[~eligible] == ids[~eligible]).all()
        assert (labels[len(ids) :] == -100).all() and (batch["attention_mask"][i, len(ids) :] == 0).all()
        assert (batch["input_ids"][i, len(ids) :] == tokenizer.pad_token_id).all()
        assert (labels[labels != -100] == ids[labels[: len(ids)] != -100]).all()
    assert 0.12 < total_masked / total_eligible < 0.18


def test_a_masked_ngram_is_masked_whole_with_one_draw(tokenizer, rows):
    mask_id = tokenizer.mask_token_id
    ngram_units = masked_units = 0
    for epoch in range(4):
        batches, collator = collate(tokenizer, rows, "ngram", epoch=epoch)
        for row, batch in zip(rows, batches):
            ids = np.asarray(row["input_ids"])
            labels = batch["labels"][0].numpy()
            out = batch["input_ids"][0].numpy()
            eligible = collator.eligible(ids)
            kept = span_sampling.longest_non_overlapping(row["ngram_spans"], eligible)
            units = collator.units(row, eligible, collator.rng_for(row))  # the same draws as the collator
            assert set(np.flatnonzero(labels != -100)) == {p for s, e in units for p in range(s, e)}
            predicted = labels != -100
            for start, end in kept:  # never part of an n-gram
                assert predicted[start:end].all() or not predicted[start:end].any()
            for start, end in units:
                if (start, end) in kept:
                    is_mask = out[start:end] == mask_id
                    assert is_mask.all() or not is_mask.any(), "one 80/10/10 draw per n-gram"
                    ngram_units += 1
                    masked_units += bool(is_mask.all())
    assert ngram_units > 300
    assert 0.74 < masked_units / ngram_units < 0.86


def test_whole_words_stay_whole(tokenizer, rows):
    batches, _ = collate(tokenizer, rows, "whole-word", epoch=1)
    for row, batch in zip(rows, batches):
        labels = batch["labels"][0].numpy()[: len(row["input_ids"])]
        word_ids = np.asarray(row["word_ids"])
        for word in set(word_ids[word_ids >= 0].tolist()):
            predicted = labels[word_ids == word] != -100
            assert predicted.all() or not predicted.any()


def test_random_spans_are_whole_words_of_at_most_six(tokenizer, rows):
    lengths = []
    for epoch in range(3):
        batches, collator = collate(tokenizer, rows, "span", epoch=epoch)
        for row, batch in zip(rows, batches):
            labels = batch["labels"][0].numpy()[: len(row["input_ids"])]
            word_ids = np.asarray(row["word_ids"])
            words = set(word_ids[labels != -100].tolist())
            for word in words:
                assert (labels[word_ids == word] != -100).all()
            rng = collator.rng_for(row)
            units = span_sampling.span_units(
                row,
                collator.eligible(np.asarray(row["input_ids"])),
                span_sampling.budget_for(int((word_ids >= 0).sum()), 0.15),
                rng,
            )
            lengths += [len(set(word_ids[s:e].tolist())) for s, e in units]
    assert max(lengths) <= 6 and min(lengths) >= 1
    assert max(lengths) == 6 and np.mean(lengths) > 2.3  # the law's mean is 2.87 words


def test_eighty_ten_ten_at_token_level(tokenizer, rows):
    counts = {"mask": 0, "kept": 0, "random": 0}
    special = set(tokenizer.all_special_ids)
    for epoch in range(6):
        batches, _ = collate(tokenizer, rows, "token", epoch=epoch)
        for row, batch in zip(rows, batches):
            labels = batch["labels"][0].numpy()
            out = batch["input_ids"][0].numpy()
            for position in np.flatnonzero(labels != -100):
                if out[position] == tokenizer.mask_token_id:
                    counts["mask"] += 1
                elif out[position] == labels[position]:
                    counts["kept"] += 1
                else:
                    counts["random"] += 1
                    assert out[position] not in special
    total = sum(counts.values())
    assert total > 3000
    assert counts["mask"] / total == pytest.approx(0.8, abs=0.03)
    assert counts["random"] / total == pytest.approx(0.1, abs=0.025)
    assert counts["kept"] / total == pytest.approx(0.1, abs=0.025)


def test_masks_are_dynamic_reproducible_and_independent_of_batching(tokenizer, rows, tokens_en):
    collator = MaskingCollator(tokenizer, "ngram", seed=7)
    first = collator(rows[:16])["labels"]
    again = collator(rows[:16])["labels"]
    alone = collator([rows[5]])["labels"][0]
    collator.set_epoch(1)
    next_epoch = collator(rows[:16])["labels"]
    assert (first == again).all()
    assert (first[5, : len(alone)] == alone).all()
    assert not (first == next_epoch).all()
    assert not (first == MaskingCollator(tokenizer, "ngram", seed=8)(rows[:16])["labels"]).all()
    stored = pq.read_table(tokens_en, columns=["input_ids"]).column("input_ids").to_pylist()
    assert all(row["input_ids"].tolist() == stored[i] for i, row in enumerate(rows))  # dataset untouched


def test_plain_hugging_face_examples(tokenizer):
    collator = MaskingCollator(tokenizer, "token", seed=0)
    encoded = [tokenizer(t)["input_ids"] for t in ("the state of the art", "anarchism is a political philosophy")]
    batch = collator([{"input_ids": ids} for ids in encoded])
    assert batch["input_ids"].shape == batch["labels"].shape == (2, max(map(len, encoded)))
    assert ((batch["labels"] != -100).sum(dim=1) == 1).all()
    assert "idx" not in batch


def test_a_strategy_cannot_leave_out_what_its_statistics_count():
    """Issue 57: a strategy's statistics are part of its one entry; without them it is refused, not miscounted."""
    draw = STRATEGIES["token"].draw
    with pytest.raises(TypeError, match="source"):
        Strategy("new", draw)
    with pytest.raises(ValueError, match="either a source"):
        Strategy("new", draw, source=None, spans=None)


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_each_strategy_counts_its_masked_tokens_by_its_own_source(tokenizer, rows, strategy):
    entry = STRATEGIES[strategy]
    stats = MaskingCollator(tokenizer, strategy, seed=5)(rows[:32])["masking_stats"]
    assert sum(stats.masked_by_source.values()) == stats.counts["masked_tokens"] > 0
    pool = {"pmi", "entity", "token"} if entry.source is None else {entry.source}
    assert set(stats.masked_by_source) <= pool, stats.masked_by_source
    assert bool(stats.pool_unit_words) == (entry.source is None or entry.word_pool)
