"""Which tokens to mask: the units (token ranges) each masking strategy picks, within a budget.

A *unit* is a half-open token range ``(start, end)`` that is masked as a whole, with one
80/10/10 draw (docs/method.md §3). Every strategy receives the example, the boolean mask of eligible
positions (not a special token, not excluded), the budget in tokens and a numpy generator,
and returns non-overlapping units whose total length never exceeds the budget. Units that
would overshoot the budget are skipped and sampling goes on, as in BERT's
``create_masked_lm_predictions``, so the budget is met exactly whenever single tokens remain.

Strategies:

- ``token``: BERT's token-level MLM, exactly ``budget`` tokens.
- ``whole-word``: whole words (English whitespace words, Chinese characters; ``word_ids``).
- ``ngram``: BURT's PMI n-gram masking over ``ngram_spans`` (or ``entity_spans`` for the
  named-entity baseline): overlapping spans keep the longest; n-grams are sampled uniformly
  without replacement until the budget is reached, then tokens not covered by any kept n-gram
  fill the rest at token level (n = 1 as the special case). Only when those run out (a
  sentence that is nearly one long n-gram) do tokens of unchosen n-grams fill the budget.
  ``pool="mixed"`` instead samples n-grams and uncovered single tokens from one pool (the
  other reading of BURT §3.2).
- ``span``: SpanBERT random spans, length ~ Geometric(p = 0.2) truncated to 1..6 whole words,
  uniformly placed, until the budget is reached.
"""

from __future__ import annotations

import math

import numpy as np


def budget_for(eligible_count: int, probability: float) -> int:
    """Tokens to mask: ``round(p * n)`` (halves up), at least one when anything is eligible."""
    if eligible_count <= 0:
        return 0
    return min(eligible_count, max(1, math.floor(probability * eligible_count + 0.5)))


def _fill(units, order, budget: int) -> list[tuple[int, int]]:
    chosen, used = [], 0
    for k in order:
        start, end = units[k]
        if used + end - start <= budget:
            chosen.append((start, end))
            used += end - start
            if used == budget:
                break
    return chosen


def token_units(eligible: np.ndarray, budget: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    positions = np.flatnonzero(eligible)
    picked = np.sort(rng.choice(positions, size=min(budget, len(positions)), replace=False))
    return [(int(p), int(p) + 1) for p in picked]


def word_units(word_ids: np.ndarray, eligible: np.ndarray) -> list[tuple[int, int]]:
    """Contiguous runs of eligible tokens with the same word id (a word's sub-words)."""
    positions = np.flatnonzero(eligible)
    if len(positions) == 0:
        return []
    words = word_ids[positions]
    breaks = np.flatnonzero((np.diff(positions) != 1) | (np.diff(words) != 0)) + 1
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [len(positions)]])
    return [(int(positions[s]), int(positions[e - 1]) + 1) for s, e in zip(starts, ends)]


def whole_word_units(example: dict, eligible: np.ndarray, budget: int, rng: np.random.Generator):
    units = word_units(np.asarray(example["word_ids"]), eligible)
    return _fill(units, rng.permutation(len(units)), budget)


def longest_non_overlapping(spans: np.ndarray, eligible: np.ndarray) -> list[tuple[int, int]]:
    """Spans lying wholly on eligible tokens; where spans overlap, the longest is kept (then the earliest)."""
    kept, covered = [], np.zeros(len(eligible), dtype=bool)
    for start, end in sorted(((int(s), int(e)) for s, e in spans), key=lambda se: (se[0] - se[1], se[0])):
        if end <= len(eligible) and eligible[start:end].all() and not covered[start:end].any():
            kept.append((start, end))
            covered[start:end] = True
    return sorted(kept)


def ngram_units(spans: np.ndarray, eligible: np.ndarray, budget: int, rng: np.random.Generator,
                pool: str = "ngrams-first") -> list[tuple[int, int]]:
    ngrams = longest_non_overlapping(spans, eligible)
    uncovered = eligible.copy()
    for start, end in ngrams:
        uncovered[start:end] = False
    singles = [(int(p), int(p) + 1) for p in np.flatnonzero(uncovered)]
    if pool == "mixed":
        units = ngrams + singles
        return _fill(units, rng.permutation(len(units)), budget)
    chosen = _fill(ngrams, rng.permutation(len(ngrams)), budget)
    remaining = budget - sum(end - start for start, end in chosen)
    if remaining > 0 and singles:
        chosen += _fill(singles, rng.permutation(len(singles)), remaining)
        remaining = budget - sum(end - start for start, end in chosen)
    if remaining > 0:  # n-grams cover (nearly) the whole sentence: the last resort is their tokens
        spare = [(p, p + 1) for start, end in ngrams if (start, end) not in chosen for p in range(start, end)]
        chosen += _fill(spare, rng.permutation(len(spare)), remaining)
    return sorted(chosen)


def truncated_geometric(p: float, low: int, high: int) -> np.ndarray:
    """P(l) ∝ p (1-p)^(l-low) for l in low..high (SpanBERT's clipped span-length law)."""
    lengths = np.arange(low, high + 1)
    weights = p * (1 - p) ** (lengths - low)
    return weights / weights.sum()


def span_units(example: dict, eligible: np.ndarray, budget: int, rng: np.random.Generator,
               p: float = 0.2, max_words: int = 6, max_tries: int = 100) -> list[tuple[int, int]]:
    words = word_units(np.asarray(example["word_ids"]), eligible)
    if not words:
        return []
    law = truncated_geometric(p, 1, max_words)
    lengths = rng.choice(np.arange(1, max_words + 1), size=max_tries, p=law)
    starts = rng.integers(0, len(words), size=max_tries)
    taken = np.zeros(len(words), dtype=bool)
    chosen, used = [], 0
    for length, first in zip(lengths, starts):
        last = min(first + length, len(words))
        size = words[last - 1][1] - words[first][0]
        # a span is contiguous words; a gap (an excluded token) between them breaks it
        contiguous = all(words[k][1] == words[k + 1][0] for k in range(first, last - 1))
        if taken[first:last].any() or used + size > budget or not contiguous:
            continue
        taken[first:last] = True
        chosen.append((words[first][0], words[last - 1][1]))
        used += size
        if used == budget:
            break
    return sorted(chosen)
