"""Which tokens to mask: the units (token ranges) each masking strategy picks, within a budget.

A *unit* is a half-open token range ``(start, end)`` that is masked as a whole, with one
80/10/10 draw (docs/method.md §3). No strategy ever masks part of a unit: a unit is taken
whole or not at all.

The budget rule. BURT §3.2 (*Towards Universal Language Representation*): "Following BERT, we
mask 15% of all tokens in each sequence. The data processing algorithm uniformly samples one
n-gram at a time until the maximum number of masking tokens is reached." We read the budget
as ``b = p · n`` tokens (p = 0.15, n = the sequence's eligible tokens), met **in expectation**
and never by cutting a unit: units are drawn one at a time in random order; a unit that fits
in what remains of the budget is taken; the first one that does not fit (``remaining <
length``) is taken whole with probability ``remaining / length``, and sampling stops. The
expected number of masked tokens is then exactly ``b`` (for single tokens the rule is
stochastic rounding of ``b``), so the corpus-level mask rate is ``p``, while a budget of 3.8
tokens can still mask a 6-token n-gram. BERT's own rule (skip what overshoots, fill with
single tokens) would starve every unit longer than the budget, which in 128-token sentences
is most n-grams.

Strategies:

- ``token``: BERT's token-level MLM.
- ``whole-word``: whole words (English whitespace words, Chinese characters; ``word_ids``).
- ``ngram``: BURT's PMI n-gram masking over ``ngram_spans`` (or ``entity_spans`` for the
  named-entity baseline). Overlapping spans keep the longest (then the earlier); only the kept
  spans are units. Three pools (docs/method.md §3):

  - ``"ngrams-first"`` (default), BURT §3.2 read with the budget rule above: kept n-grams are
    drawn uniformly, one at a time; one that fits in what remains is taken, one that does not
    gives way to the next. When none of the rest fits, the first of them in the draw order is
    taken whole with probability ``remaining / length`` (so the budget holds in expectation)
    and sampling stops. Only when every kept n-gram is taken and budget remains do single
    tokens (n = 1, "the original token-level masking is retained and considered as a special
    case of n-gram masking where n = 1") fill it. The authors' ``run_ngram.py`` likewise masks
    n-grams, not tokens, wherever a sentence has enough of them.
  - ``"uniform"``: uniform over the sequence's units, the kept n-grams plus every token they
    leave uncovered, so n-gram tokens are masked about as often as other tokens.
  - ``"ngrams-only"``: the released ``run_ngram.py`` rule: n-grams drawn uniformly, each taken
    while fewer than the budget's tokens are masked (the last one overshoots), and no token
    outside them.
- ``span``: SpanBERT random spans (ULR-BERT §7.1, BURT §5): length ~ Geometric(p = 0.2)
  truncated to 1..6 whole words, placed uniformly without overlap. To keep the masked lengths
  on that law (an overshoot rule would prefer short spans), the number of spans is drawn
  first, with mean ``b / (expected tokens of a span in this sequence)``, and every span is
  taken whole: the budget again holds in expectation. :func:`one_span` draws a single span
  by the same law (MiSAD's w in ULR-BERT §7.2's "Random Spans").
"""

from __future__ import annotations

import functools
import math

import numpy as np

POOLS = ("ngrams-first", "uniform", "ngrams-only")  # the first is the default


def budget_for(eligible_count: int, probability: float) -> float:
    """Tokens to mask, in expectation: ``p * n`` (a real number; see the budget rule above)."""
    return max(0, eligible_count) * probability


def take_units(units, order, budget: float, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Walk ``units`` in ``order``, taking each that fits; the first that overshoots is taken with
    probability ``remaining / length`` and ends the walk (expected total: ``budget``)."""
    chosen, used = [], 0
    for k in order:
        start, end = units[k]
        length = end - start
        remaining = budget - used
        if remaining <= 0:
            break
        if length <= remaining:
            chosen.append((start, end))
            used += length
            continue
        if rng.random() < remaining / length:
            chosen.append((start, end))
        break
    return chosen


def token_units(eligible: np.ndarray, budget: float, rng: np.random.Generator) -> list[tuple[int, int]]:
    positions = np.flatnonzero(eligible)
    whole = math.floor(budget)
    count = min(len(positions), whole + int(rng.random() < budget - whole))
    picked = np.sort(rng.choice(positions, size=count, replace=False))
    return [(int(p), int(p) + 1) for p in picked]


def word_bounds(word_ids: np.ndarray, eligible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of the contiguous runs of eligible tokens with the same word id (a word's
    sub-words), as arrays."""
    positions = np.flatnonzero(eligible)
    if len(positions) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    words = word_ids[positions]
    breaks = np.flatnonzero((np.diff(positions) != 1) | (np.diff(words) != 0)) + 1
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [len(positions)]])
    return positions[starts].astype(np.int64), positions[ends - 1].astype(np.int64) + 1


def word_units(word_ids: np.ndarray, eligible: np.ndarray) -> list[tuple[int, int]]:
    """Contiguous runs of eligible tokens with the same word id (a word's sub-words)."""
    starts, ends = word_bounds(word_ids, eligible)
    return list(zip(starts.tolist(), ends.tolist()))


def whole_word_units(example: dict, eligible: np.ndarray, budget: float, rng: np.random.Generator):
    units = word_units(np.asarray(example["word_ids"]), eligible)
    return sorted(take_units(units, rng.permutation(len(units)), budget, rng))


def longest_non_overlapping(spans: np.ndarray, eligible: np.ndarray) -> list[tuple[int, int]]:
    """Spans lying wholly on eligible tokens; where spans overlap, the longest is kept (then the earliest)."""
    kept, covered = [], np.zeros(len(eligible), dtype=bool)
    for start, end in sorted({(int(s), int(e)) for s, e in spans}, key=lambda se: (se[0] - se[1], se[0])):
        if start < end <= len(eligible) and eligible[start:end].all() and not covered[start:end].any():
            kept.append((start, end))
            covered[start:end] = True
    return sorted(kept)


def ngram_pool(spans: np.ndarray, eligible: np.ndarray) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """``(kept n-grams, uncovered single tokens)``: the sequence's units for n-gram masking."""
    ngrams = longest_non_overlapping(spans, eligible)
    uncovered = eligible.copy()
    for start, end in ngrams:
        uncovered[start:end] = False
    return ngrams, [(int(p), int(p) + 1) for p in np.flatnonzero(uncovered)]


def ngram_units(
    spans: np.ndarray,
    eligible: np.ndarray,
    budget: float,
    rng: np.random.Generator,
    pool: str = POOLS[0],
    units: tuple | None = None,
) -> list[tuple[int, int]]:
    """The units BURT masks in one sequence under ``pool`` (module docstring).
    ``units``: :func:`ngram_pool`'s result when the caller already has it."""
    if pool not in POOLS:
        raise ValueError(f"unknown n-gram pool {pool!r}; choose from {POOLS}")
    ngrams, singles = units if units is not None else ngram_pool(spans, eligible)
    if pool == "uniform":
        units = ngrams + singles
        return sorted(take_units(units, rng.permutation(len(units)), budget, rng))
    order = rng.permutation(len(ngrams))
    if pool == "ngrams-only":
        chosen, used = [], 0
        for k in order:
            if used >= budget:
                break
            chosen.append(ngrams[k])
            used += ngrams[k][1] - ngrams[k][0]
        return sorted(chosen)
    chosen, used, passed = [], 0, []
    for k in order:  # n-grams that fit; the others give way
        start, end = ngrams[k]
        if used + end - start <= budget:
            chosen.append((start, end))
            used += end - start
        else:
            passed.append(k)
    remaining = budget - used
    if passed:  # no n-gram left fits: the first passed over is taken with probability remaining / length
        start, end = ngrams[passed[0]]
        if remaining > 0 and rng.random() < remaining / (end - start):
            chosen.append((start, end))
        return sorted(chosen)
    chosen += take_units(singles, rng.permutation(len(singles)), remaining, rng)  # every n-gram taken
    return sorted(chosen)


@functools.lru_cache(maxsize=16)
def _geometric(p: float, low: int, high: int) -> np.ndarray:
    lengths = np.arange(low, high + 1)
    weights = p * (1 - p) ** (lengths - low)
    law = weights / weights.sum()
    law.setflags(write=False)  # shared by every call: read-only
    return law


def truncated_geometric(p: float, low: int, high: int) -> np.ndarray:
    """P(l) ∝ p (1-p)^(l-low) for l in low..high (SpanBERT's clipped span-length law)."""
    return _geometric(p, low, high)


def _windows(starts: np.ndarray, ends: np.ndarray, max_words: int) -> np.ndarray:
    """``(max_words, words)`` token lengths: row l - 1 holds, for each first word, the length of the
    window of l contiguous words starting there (-1 where the window crosses a gap, i.e. an excluded
    token, or runs past the end)."""
    count = len(starts)
    joined = np.zeros(count, dtype=np.int64)
    joined[:-1] = starts[1:] == ends[:-1]  # word k continues into word k+1
    chained = np.concatenate([[0], np.cumsum(joined)])
    words = np.arange(1, max_words + 1)[:, None]
    first = np.arange(count)[None, :]
    last = np.minimum(first + words - 1, count - 1)
    ok = (first + words <= count) & (chained[last] - chained[first] == words - 1)
    return np.where(ok, ends[last] - starts[first], -1)


def _draw(law: np.ndarray, rng: np.random.Generator) -> int:
    """``rng.choice(len(law), p=law)`` (the same draw from the same stream: numpy's inverse-CDF rule),
    without ``choice``'s per-call validation, which dominated the span collator's time."""
    cdf = np.cumsum(law)
    cdf /= cdf[-1]
    return int(cdf.searchsorted(rng.random(), side="right"))


def span_units(
    example: dict,
    eligible: np.ndarray,
    budget: float,
    rng: np.random.Generator,
    p: float = 0.2,
    max_words: int = 6,
    max_tries: int = 20,
) -> list[tuple[int, int]]:
    starts, ends = word_bounds(np.asarray(example["word_ids"]), eligible)
    if not len(starts) or budget <= 0:
        return []
    windows = _windows(starts, ends, max_words)
    valid = windows >= 0
    counts = valid.sum(axis=1)
    feasible = counts > 0
    law = np.where(feasible, truncated_geometric(p, 1, max_words), 0.0)
    law /= law.sum()
    means = np.where(valid, windows, 0).sum(axis=1) / np.maximum(counts, 1)
    mean_tokens = sum(law[k] * means[k] for k in range(max_words) if feasible[k])
    expected = budget / mean_tokens
    count = math.floor(expected) + int(rng.random() < expected - math.floor(expected))
    taken = np.zeros(len(starts), dtype=bool)
    first_words = np.arange(len(starts))
    chosen = []
    for _ in range(count):
        for _ in range(max_tries):  # a length with room left; a full sentence ends the sampling
            length = _draw(law, rng) + 1
            busy = np.concatenate([[0], np.cumsum(taken)])
            past = np.minimum(first_words + length, len(starts))
            free = np.flatnonzero(valid[length - 1] & (busy[past] == busy[first_words]))
            if len(free):
                first = int(free[int(rng.integers(len(free)))])
                taken[first : first + length] = True
                chosen.append((int(starts[first]), int(ends[first + length - 1])))
                break
    return sorted(chosen)


def one_span(
    words: list[tuple[int, int]], rng: np.random.Generator, p: float = 0.2, max_words: int = 6
) -> tuple[int, int] | None:
    """One SpanBERT span of whole ``words`` that leaves at least one word out (MiSAD's w for ULR-BERT §7.2
    "Random Spans"): length ~ Geometric(p) truncated to the feasible lengths of 1..``max_words``, then a
    start drawn uniformly among the windows of that length; None where there are fewer than two words."""
    if len(words) < 2:
        return None
    starts = np.array([s for s, _ in words], dtype=np.int64)
    ends = np.array([e for _, e in words], dtype=np.int64)
    windows = _windows(starts, ends, min(max_words, len(words) - 1))
    law = truncated_geometric(p, 1, max_words)[: len(windows)]
    law = np.where((windows >= 0).any(axis=1), law, 0.0)
    if law.sum() == 0:
        return None
    length = _draw(law / law.sum(), rng) + 1
    candidates = np.flatnonzero(windows[length - 1] >= 0)
    first = int(candidates[int(rng.integers(len(candidates)))])
    return words[first][0], words[first + length - 1][1]
