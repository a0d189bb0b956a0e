"""Marking sentences with their document's kept n-grams (BURT §3.1, docs/method.md §2).

Each sentence is matched greedily from left to right, trying the longest n-gram first (N..2),
as the released code's ``ngram_match`` does. The longest kept n-gram starting at each token is
found for the whole batch at once; only the greedy walk, which is inherently sequential, runs
in Python, and it visits just the tokens where some kept n-gram starts.
"""

from __future__ import annotations

import numpy as np

from pipeline.ngrams.pmi import Order, Selection


def longest_match(orders: list[Order], selection: Selection, n_tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """Per token: the length of the longest kept n-gram starting there (0: none) and its score."""
    length = np.zeros(n_tokens, dtype=np.int64)
    score = np.zeros(n_tokens)
    for order in orders[1:]:
        chosen = selection.n == order.n
        groups = selection.group[chosen]
        group_score = np.zeros(len(order.count))
        group_score[groups] = selection.score[chosen]
        at, group = order.occurrences(groups)
        length[at] = order.n  # orders ascend, so the longest wins
        score[at] = group_score[group]
    return length, score


def greedy(length: np.ndarray) -> np.ndarray:
    """Start tokens of the spans the greedy left-to-right walk picks.

    A kept n-gram never crosses its run, so one walk over the whole batch equals a walk per
    sentence: after a span ends, the walk resumes at the next token that starts a match.
    """
    starts = np.flatnonzero(length)
    picked = []
    free = 0
    for start, n in zip(starts.tolist(), length[starts].tolist()):
        if start >= free:
            picked.append(start)
            free = start + n
    return np.array(picked, dtype=np.int64)
