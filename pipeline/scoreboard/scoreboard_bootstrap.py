"""The scoreboard's tests over items (docs/stages/report.md "The scoreboard"), on the per-item outcomes
:mod:`.scoreboard_items` reads:

* :func:`mcnemar`: McNemar's exact test of two accuracies on one test set, the binomial test of the
  discordant items (one model right, the other wrong) against 1/2 (McNemar 1947; Edwards 1948), one-sided
  each way (``scipy.stats.binomtest``).
* :func:`paired_bootstrap`: a paired bootstrap over items of a mean of per-item scores (Efron & Tibshirani
  1993, ch. 16; Koehn 2004): each replicate draws every group's items with replacement, the same draw for
  both models.
* :func:`cluster_bootstrap`: the analogy's cluster bootstrap over word pairs (Davison & Hinkley 1997, §3.8;
  Field & Welsh 2007). A category's questions are ordered pairs of a few word pairs (capital-common: 506
  questions from 23 pairs), and the phrase and sentence questions wrap the same word pairs in templates
  (ULR App. A.2), so questions that share a word pair, at any level, are not independent and a
  question-level bootstrap is far too confident. A replicate draws word pairs with replacement and takes
  every question built from two drawn pairs, as often as both were drawn (weight m_a * m_b), at every
  level the column averages: one draw per word pair serves its word, phrase and sentence questions.
* :func:`correlation_bootstrap`: a paired bootstrap over pairs that recomputes both models' correlation
  with the gold scores (Spearman or Pearson) in each replicate.

The bootstraps' one-sided p-values are the shares of replicates at or below zero (holds) and at or above
zero (reversed), each with one added above and below so that no p-value is zero. A fixed seed makes the
same input give the same verdict. Replicates are drawn in chunks of at most :data:`CHUNK_ELEMENTS` draws,
so memory stays bounded whatever the number of items.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REPLICATES = 2000
SEED = 0
CHUNK_ELEMENTS = 1 << 21  # draws held at once (replicates x items): ~16 MiB of int64, whatever the item count
MCNEMAR = "McNemar's exact test"
ITEM_BOOTSTRAP = "paired bootstrap over items"
CLUSTER_BOOTSTRAP = "cluster bootstrap over word pairs"
CORRELATION_BOOTSTRAP = "paired bootstrap over pairs"


@dataclass(frozen=True)
class Hits:
    """Per-question outcomes of one analogy pool and the two word pairs each question is built from: as ids
    shared by every level and category (``word_pairs``, analogy.trace_word_pairs), and as the pairs of the
    question's own file (``pairs``: each level's and category's apart, what a file before ``word_pairs``
    gives)."""

    hits: np.ndarray
    pairs: np.ndarray | None  # (questions, 2) ids of the pool's own files; None: an older file
    word_pairs: np.ndarray | None = None  # (questions, 2) word-pair ids across levels; None: an older file


@dataclass(frozen=True)
class Scored:
    """Gold and predicted scores of one correlation set."""

    gold: np.ndarray
    predicted: np.ndarray


def _p_values(differences: np.ndarray) -> dict:
    replicates = len(differences)
    return {
        "p": float((1 + np.sum(differences <= 0)) / (replicates + 1)),
        "p_reversed": float((1 + np.sum(differences >= 0)) / (replicates + 1)),
        "interval": [float(x) for x in np.quantile(differences, [0.025, 0.975])],
    }


def draw_counts(rng: np.random.Generator, replicates: int, items: int) -> np.ndarray:
    """How often each of ``items`` is drawn in each of ``replicates`` draws of ``items`` with replacement
    (replicates x items): the bootstrap's resample as counts (a multinomial), by one bincount."""
    drawn = rng.integers(0, items, size=(replicates, items)) + items * np.arange(replicates)[:, None]
    return np.bincount(drawn.ravel(), minlength=replicates * items).reshape(replicates, items).astype(np.float64)


def _chunks(items: int):
    """Replicate counts whose draws (count x items) stay within CHUNK_ELEMENTS."""
    replicates, size = REPLICATES, max(1, CHUNK_ELEMENTS // max(items, 1))
    for start in range(0, replicates, size):
        yield min(size, replicates - start)


def paired_bootstrap(high: list[np.ndarray], low: list[np.ndarray]) -> dict | None:
    """One-sided p-values of high > low and high < low over the same items (equal-weight groups); None
    where the two rows were not scored on the same items (a different number of groups or of items)."""
    if len(high) != len(low) or any(len(h) != len(lo) for h, lo in zip(high, low)):
        return None
    rng = np.random.default_rng(SEED)
    differences = np.zeros(REPLICATES)
    for h, lo in zip(high, low):
        per_item = np.asarray(h, dtype=np.float64) - np.asarray(lo, dtype=np.float64)
        start = 0
        for count in _chunks(len(per_item)):
            draws = rng.integers(0, len(per_item), size=(count, len(per_item)))
            differences[start : start + count] += per_item[draws].mean(axis=1) / len(high)
            start += count
    items = sum(len(h) for h in high)
    return {"test": f"{ITEM_BOOTSTRAP} ({items} items, {REPLICATES} replicates)", **_p_values(differences)}


PER_LEVEL_NOTE = (
    "each level's and category's word pairs drawn apart: the metrics do not trace a phrase or sentence "
    "question to its word pair (an older file)"
)


def _clusters(high: list[Hits], low: list[Hits]) -> tuple[list[np.ndarray], str | None] | None:
    """Each pool's (questions, 2) cluster ids, with a note where they are not the word pairs across levels;
    None where the two rows were not built from the same pairs or a file gives no pairs at all. The word
    pairs across levels where both rows give them for every pool; else each pool's own pairs, offset so that
    no two pools share one (the clustering before the word pairs were traced across levels)."""
    sides = (*high, *low)
    if all(g.word_pairs is not None for g in sides):
        if all(np.array_equal(h.word_pairs, lo.word_pairs) for h, lo in zip(high, low)):
            return [h.word_pairs for h in high], None
        return None
    if any(g.pairs is None for g in sides) or any(not np.array_equal(h.pairs, lo.pairs) for h, lo in zip(high, low)):
        return None
    clusters, offset = [], 0
    for h in high:
        clusters.append(h.pairs + offset)
        offset += int(h.pairs.max()) + 1
    return clusters, PER_LEVEL_NOTE


def cluster_bootstrap(high: list[Hits], low: list[Hits]) -> dict | None:
    """The analogy columns' cluster bootstrap over word pairs (module docstring); None where the rows were
    not scored on the same questions or a file does not give each question's word pairs.

    One draw of the word pairs serves every pool (level and kind) the column averages, so a word pair and
    every question built from it, at any level, come and go together. The draw is stratified by the pools a
    pair appears in (the semantic pairs and the syntactic pairs of the overall average; each pool's own pairs
    in an older file, which is the bootstrap per pool it gave before)."""
    if len(high) != len(low) or any(len(h.hits) != len(lo.hits) for h, lo in zip(high, low)):
        return None
    found = _clusters(high, low)
    if found is None:
        return None
    clusters, note = found
    ids, inverse = np.unique(np.concatenate(clusters), return_inverse=True)
    inverse = inverse.reshape(-1, 2)
    per_pool = np.split(inverse, np.cumsum([len(c) for c in clusters])[:-1])
    # a pair's stratum: the set of pools its questions are in
    pools_of = np.zeros((len(ids), len(clusters)), dtype=bool)
    for pool, pairs in enumerate(per_pool):
        pools_of[pairs.ravel(), pool] = True
    _, stratum = np.unique(pools_of, axis=0, return_inverse=True)
    strata = [np.flatnonzero(stratum.ravel() == s) for s in range(int(stratum.max()) + 1)]
    per_item = [h.hits - lo.hits for h, lo in zip(high, low)]
    rng = np.random.default_rng(SEED)
    differences = np.zeros(REPLICATES)
    valid = np.ones(REPLICATES, dtype=bool)
    start = 0
    for count in _chunks(max(len(ids), max(len(p) for p in per_pool))):
        drawn = np.zeros((count, len(ids)))
        for members in strata:  # m_i: how often each pair was drawn, its stratum drawn as often as it has pairs
            drawn[:, members] = draw_counts(rng, count, len(members))
        part = slice(start, start + count)
        for pairs, outcome in zip(per_pool, per_item):
            weights = drawn[:, pairs[:, 0]] * drawn[:, pairs[:, 1]]
            total = weights.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                differences[part] += (weights @ outcome) / total / len(high)
            valid[part] &= total > 0  # a replicate with no question of a pool left (one pair drawn k times)
        start += count
    differences = differences[valid]
    if len(differences) < REPLICATES // 2:
        return None  # too few word pairs for the clusters to be resampled
    questions = sum(len(h.hits) for h in high)
    test = f"{CLUSTER_BOOTSTRAP} ({questions} questions from {len(ids)} pairs, {len(differences)} replicates)"
    return {"test": test + (f"; {note}" if note else ""), **_p_values(differences)}


@dataclass(frozen=True)
class RankOrder:
    """The sort of one score list, made once and used by every replicate: the items in ascending order, the
    first position of each distinct value in it, and each item's distinct-value index."""

    order: np.ndarray
    starts: np.ndarray
    of_item: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray) -> RankOrder:
        order = np.argsort(values, kind="stable")
        ordered = values[order]
        new_value = np.r_[True, ordered[1:] != ordered[:-1]]
        of_item = np.empty(len(values), dtype=np.int64)
        of_item[order] = np.cumsum(new_value) - 1
        return cls(order, np.flatnonzero(new_value), of_item)


def centred_ranks(values: np.ndarray | RankOrder, counts: np.ndarray) -> np.ndarray:
    """Each item's rank within every replicate (ties: the mean rank) less the replicate's mean rank, where
    ``counts`` (replicates x items) says how often each item was drawn: the ranks of the resampled values
    without sorting each replicate (the one sort, :class:`RankOrder`, serves every replicate).

    A value's drawn items take the ranks after the c items below it: mean rank below + (g + 1) / 2 for its g
    drawn items, i.e. cumsum - g / 2 + 1 / 2; the mean rank of N drawn items is (N + 1) / 2 in every
    replicate, ties or not, so the centred rank is cumsum - g / 2 - N / 2."""
    sorted_once = values if isinstance(values, RankOrder) else RankOrder.of(values)
    groups = counts[:, sorted_once.order]
    if len(sorted_once.starts) < len(sorted_once.order):  # ties: the drawn items of each value together
        groups = np.add.reduceat(groups, sorted_once.starts, axis=1)
    ranks = np.cumsum(groups, axis=1)
    groups *= 0.5
    ranks -= groups
    ranks -= counts.sum(axis=1, keepdims=True) / 2
    return ranks[:, sorted_once.of_item]


def _correlation(covariance: np.ndarray, x_squares: np.ndarray, y_squares: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        r = covariance / np.sqrt(x_squares * y_squares)
    return np.nan_to_num(r)  # a replicate whose scores are all equal: no correlation


def _weighted_squares(counts: np.ndarray, centred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(counts * centred, its row sums of squares): the weighted deviations and their sum of squares."""
    weighted = counts * centred
    return weighted, np.einsum("ij,ij->i", weighted, centred)


def _pearson_sums(counts: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of every replicate for scores that are the same in every replicate: five matrix-vector
    products (weighted sums of x, y, x², y², xy), on scores centred at their full-sample means."""
    x, y = x - x.mean(), y - y.mean()
    total = counts.sum(axis=1)
    sx, sy = counts @ x, counts @ y
    return _correlation(
        counts @ (x * y) - sx * sy / total, counts @ (x * x) - sx * sx / total, counts @ (y * y) - sy * sy / total
    )


def _spearman(counts: np.ndarray, ranked: np.ndarray, weighted_gold: np.ndarray, gold_squares: np.ndarray):
    """Spearman's rho of every replicate from centred ranks (Pearson's r of the ranks; their weighted mean
    is zero by construction, so no centring pass)."""
    covariance = np.einsum("ij,ij->i", weighted_gold, ranked)
    return _correlation(covariance, _weighted_squares(counts, ranked)[1], gold_squares)


def replicate_correlations(method: str, counts: np.ndarray, predicted: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """The correlation (Spearman or Pearson) of ``predicted`` with ``gold`` in each replicate, each item
    counted as often as it was drawn (``counts``: replicates x items)."""
    if method == "pearson":
        return _pearson_sums(counts, predicted, gold)
    return _spearman(counts, centred_ranks(predicted, counts), *_weighted_squares(counts, centred_ranks(gold, counts)))


def correlation_bootstrap(method: str, high: list[tuple[float, Scored]], low: list[tuple[float, Scored]]):
    """Paired bootstrap of the difference of two models' weighted mean correlation with the same gold
    scores; None where the two rows were not scored on the same pairs. A replicate is the number of times
    each pair is drawn (multinomial), the same for both models. Each list is sorted once, not once a chunk
    of replicates, so the time is linear in the pairs."""
    if len(high) != len(low) or any(
        len(h.gold) != len(lo.gold) or not np.array_equal(h.gold, lo.gold) for (_, h), (_, lo) in zip(high, low)
    ):
        return None
    rng = np.random.default_rng(SEED)
    differences = np.zeros(REPLICATES)
    for (weight, h), (_, lo) in zip(high, low):
        n, start = len(h.gold), 0
        if method == "spearman":
            gold, higher, lower = RankOrder.of(h.gold), RankOrder.of(h.predicted), RankOrder.of(lo.predicted)
        for count in _chunks(4 * n):  # counts, and the ranks of gold, high and low
            counts = draw_counts(rng, count, n)
            if method == "pearson":
                difference = _pearson_sums(counts, h.predicted, h.gold) - _pearson_sums(counts, lo.predicted, h.gold)
            else:  # the gold's ranks and their sum of squares, shared by both sides
                ranked_gold = _weighted_squares(counts, centred_ranks(gold, counts))
                difference = _spearman(counts, centred_ranks(higher, counts), *ranked_gold) - _spearman(
                    counts, centred_ranks(lower, counts), *ranked_gold
                )
            differences[start : start + count] += weight * difference
            start += count
    pairs = sum(len(h.gold) for _, h in high)
    return {
        "test": f"{CORRELATION_BOOTSTRAP} ({method}, {pairs} pairs, {REPLICATES} replicates)",
        **_p_values(differences),
    }


def mcnemar(high: np.ndarray, low: np.ndarray) -> dict | None:
    """McNemar's exact test of two accuracies on the same items: the discordant items, binomial at 1/2."""
    from scipy.stats import binomtest

    if len(high) != len(low):
        return None
    wins, losses = int(np.sum((high == 1) & (low == 0))), int(np.sum((high == 0) & (low == 1)))
    discordant = wins + losses
    p, p_reversed = (
        (binomtest(wins, discordant, 0.5, alternative=side).pvalue for side in ("greater", "less"))
        if discordant
        else (1.0, 1.0)
    )
    return {
        "test": f"{MCNEMAR} ({len(high)} items, {wins} won and {losses} lost)",
        "p": float(p),
        "p_reversed": float(p_reversed),
    }
