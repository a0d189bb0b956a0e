"""Per-document n-gram counts, PMI scores and top-K pruning, vectorised over a batch of documents.

The method is BURT §3.1 / ULR-BERT §3.1 as docs/method.md §2 pins it; ``tests/pmi_python.py``
is its plain-Python specification, and this module computes exactly the same numbers (the
same floating-point operations in the same order) for a whole batch at once:

* **Counting.** An n-gram is numbered by the pair (number of its (n-1)-gram prefix, its last
  token), so order n needs one ``np.unique`` over integer keys of order n-1's numbers. Because
  the order-1 key includes the document, every number is per document, which is what BURT
  asks for ("for each document instead of the entire corpus"). An n-gram whose prefix occurs
  once in its document occurs once too; those positions get a number without sorting, which
  is most positions for n >= 3.
* **Scoring** uses the count of the group and the unigram counts at its first occurrence.
* **Top-K** keeps, per document, the K best n-grams of orders 2..N; ties go to the shorter
  n-gram, then to the one that occurs first (the released code's stable sort).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pipeline.ngrams.token_batch import TokenBatch

MODES = ("paper", "reference")


@dataclass
class Order:
    """The n-grams of one order n in a batch, numbered per document.

    Groups ``0 .. n_shared - 1`` occur at least twice in their document, at the positions
    ``shared_pos`` (group ``shared_group``); the others occur once, at ``first``.
    """

    n: int
    count: np.ndarray  # per group: occurrences in its document
    first: np.ndarray  # per group: token position of the first occurrence
    doc: np.ndarray  # per group: batch-local document index
    n_shared: int
    shared_pos: np.ndarray  # sorted positions of the shared groups' occurrences
    shared_group: np.ndarray  # their group numbers

    def group_at(self, positions: np.ndarray) -> np.ndarray:
        """Group of the n-gram starting at each position (-1 where none does)."""
        positions = np.asarray(positions, dtype=np.int64)
        group = np.full(len(positions), -1, dtype=np.int64)
        i = np.minimum(np.searchsorted(self.shared_pos, positions), max(len(self.shared_pos) - 1, 0))
        if len(self.shared_pos):
            hit = self.shared_pos[i] == positions
            group[hit] = self.shared_group[i[hit]]
        unique_first = self.first[self.n_shared :]
        j = np.minimum(np.searchsorted(unique_first, positions), max(len(unique_first) - 1, 0))
        if len(unique_first):
            hit = (unique_first[j] == positions) & (group < 0)
            group[hit] = self.n_shared + j[hit]
        return group

    def occurrences(self, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every position where one of ``groups`` occurs, and the group occurring there."""
        groups = np.asarray(groups, dtype=np.int64)
        wanted = np.zeros(self.n_shared, dtype=bool)
        wanted[groups[groups < self.n_shared]] = True
        at_shared = wanted[self.shared_group]
        unique = groups[groups >= self.n_shared]
        return (
            np.concatenate([self.shared_pos[at_shared], self.first[unique]]),
            np.concatenate([self.shared_group[at_shared], unique]),
        )


def _number(keys: np.ndarray):
    """Group numbers of ``keys`` (in key order), with each group's first index and size."""
    if len(keys) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    order = np.argsort(keys)  # not stable, but SIMD-fast; first occurrences come from a min below
    sorted_keys = keys[order]
    starts = np.empty(len(keys), dtype=bool)
    starts[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=starts[1:])
    group_sorted = np.cumsum(starts) - 1
    group = np.empty(len(keys), dtype=np.int64)
    group[order] = group_sorted
    start_idx = np.flatnonzero(starts)
    first = np.minimum.reduceat(order, start_idx)
    size = np.diff(np.append(start_idx, len(keys)))
    return group, first, size


def _room(batch: TokenBatch) -> np.ndarray:
    """Per position: the longest n-gram that may start there (to the run's end or a blocked token)."""
    positions = np.arange(len(batch), dtype=np.int64)
    room = batch.run_end - positions
    if batch.blocked is not None and batch.blocked.any():
        blocked_at = np.where(batch.blocked, positions, len(batch))
        next_blocked = np.minimum.accumulate(blocked_at[::-1])[::-1]
        room = np.minimum(room, next_blocked - positions)
    return room


def count(batch: TokenBatch, max_n: int) -> list[Order]:
    """Orders 1..max_n of the batch, never across a run (sentence) boundary."""
    room = _room(batch)
    orders: list[Order] = []
    unique_pos = np.zeros(0, dtype=np.int64)
    for n in range(1, max_n + 1):
        if n == 1:
            candidates = np.flatnonzero(room >= 1)
            keys = batch.doc[candidates] * batch.vocab_size + batch.ids[candidates]
        else:
            # an n-gram whose (n-1)-gram prefix is unique in its document is unique too
            unique_pos = unique_pos[room[unique_pos] >= n]
            previous = orders[-1]
            extendable = room[previous.shared_pos] >= n
            candidates = previous.shared_pos[extendable]
            keys = previous.shared_group[extendable] * batch.vocab_size + batch.ids[candidates + n - 1]
        group, first_idx, size = _number(keys)
        shared = size >= 2
        at_shared = shared[group]
        renumber = np.cumsum(shared) - 1
        shared_pos = candidates[at_shared]
        unique_pos = np.sort(np.concatenate([unique_pos, candidates[~at_shared]]))
        first = np.concatenate([candidates[first_idx[shared]], unique_pos])
        orders.append(
            Order(
                n=n,
                count=np.concatenate([size[shared], np.ones(len(unique_pos), dtype=np.int64)]),
                first=first,
                doc=batch.doc[first],
                n_shared=int(shared.sum()),
                shared_pos=shared_pos,
                shared_group=renumber[group[at_shared]],
            )
        )
    return orders


def scores(orders: list[Order], batch: TokenBatch, mode: str, normalise: bool = False) -> list[np.ndarray]:
    """Scores of each group of orders 2..N (a list parallel to ``orders[1:]``), see pmi_python.

    ``paper`` from the exact ratio ``c(w) / (c(x_1) ... c(x_n))``: the product of unigram counts
    is exact in float64 below 2**53 (checked; larger ones are recomputed with Python integers),
    so the one division is correctly rounded and equal ratios give equal scores. ``reference``
    subtracts the logs left to right, as the released code does.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}, expected one of {MODES}")
    unigrams = orders[0]
    if mode == "reference":
        log_c1 = np.zeros(len(batch))  # a unique word: log 1 = 0
        log_c1[unigrams.shared_pos] = np.log(unigrams.count[unigrams.shared_group])
        result = []
        for order in orders[1:]:
            score = np.log(order.count.astype(np.float64))
            for k in range(order.n):  # left to right, as the released code subtracts
                score -= log_c1[order.first + k]
            if normalise:
                score /= order.n
            result.append(score)
        return result
    c1 = np.ones(len(batch))  # a unique word: count 1
    c1[unigrams.shared_pos] = unigrams.count[unigrams.shared_group]
    total_1 = np.bincount(unigrams.doc, weights=unigrams.count, minlength=batch.n_docs)
    log_total_1 = np.log(np.maximum(total_1, 1))
    result = []
    for order in orders[1:]:
        product = np.ones(len(order.count))
        for k in range(order.n):
            product *= c1[order.first + k]
        ratio = order.count / product
        inexact = np.flatnonzero(product >= 2.0**53)
        if len(inexact):
            ints = c1.astype(np.int64)
            ratio[inexact] = [
                int(order.count[g]) / math.prod(int(ints[order.first[g] + k]) for k in range(order.n))
                for g in inexact.tolist()
            ]
        score = np.log(ratio)
        total_n = np.bincount(order.doc, weights=order.count, minlength=batch.n_docs)
        score -= np.log(np.maximum(total_n, 1))[order.doc]
        score += order.n * log_total_1[order.doc]
        score /= order.n
        result.append(score)
    return result


@dataclass
class Selection:
    """The kept n-grams of a batch, in output order (document, then rank)."""

    doc: np.ndarray
    n: np.ndarray
    group: np.ndarray  # group number within its order
    first: np.ndarray
    count: np.ndarray
    score: np.ndarray
    rank: np.ndarray  # 1 = best in its document


def select(
    orders: list[Order],
    order_scores: list[np.ndarray],
    n_docs: int,
    k: int | np.ndarray,
    min_count: int = 1,
    threshold: float | np.ndarray | None = None,
) -> Selection:
    """The top ``k`` n-grams of orders 2..N per document, best first, ties shorter then earlier.

    ``k`` and ``threshold`` are one value for every document or one per document (docs/method.md §2,
    "Short documents": the presets scale them with the document's length).
    """
    k = np.broadcast_to(np.asarray(k, dtype=np.int64), (n_docs,))
    eligible = []
    for order, score in zip(orders[1:], order_scores):
        if min_count <= 1 and threshold is None:
            eligible.append(np.arange(len(order.count)))
            continue
        keep = order.count >= min_count
        if threshold is not None:
            keep &= score >= (threshold[order.doc] if np.ndim(threshold) else threshold)
        eligible.append(np.flatnonzero(keep))
    doc_sizes = sum(np.bincount(order.doc[idx], minlength=n_docs) for order, idx in zip(orders[1:], eligible))
    if np.any(doc_sizes > k):
        # Only candidates that reach their document's k-th best score need ranking.
        cut = _kth_best(orders[1:], order_scores, eligible, doc_sizes, k)
        eligible = [
            idx[score[idx] >= cut[order.doc[idx]]] for order, score, idx in zip(orders[1:], order_scores, eligible)
        ]
    n = np.concatenate([np.full(len(idx), order.n, dtype=np.int64) for order, idx in zip(orders[1:], eligible)])
    group = np.concatenate(eligible)
    first = np.concatenate([order.first[idx] for order, idx in zip(orders[1:], eligible)])
    doc = np.concatenate([order.doc[idx] for order, idx in zip(orders[1:], eligible)])
    counts = np.concatenate([order.count[idx] for order, idx in zip(orders[1:], eligible)])
    score = np.concatenate([score[idx] for score, idx in zip(order_scores, eligible)])
    order = rank_order(doc, score, n, first)
    n, group, first, doc, counts, score = n[order], group[order], first[order], doc[order], counts[order], score[order]
    doc_start = np.searchsorted(doc, np.arange(n_docs))
    rank = np.arange(len(doc)) - doc_start[doc] + 1
    keep = rank <= k[doc]
    return Selection(doc[keep], n[keep], group[keep], first[keep], counts[keep], score[keep], rank[keep])


def rank_order(doc: np.ndarray, score: np.ndarray, n: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Indices sorting by document, score descending, n, first occurrence (a total order).

    Packs the four keys into one int64 (the score by its dense rank) so that one SIMD
    argsort does the work of a four-key lexsort; falls back to lexsort when they do not fit.
    """
    if len(doc) == 0:
        return np.zeros(0, dtype=np.int64)
    distinct, score_rank = np.unique(-score, return_inverse=True)
    widths = [int(doc.max()) + 1, len(distinct), int(n.max()) + 1, int(first.max()) + 1]
    if sum(int(w).bit_length() for w in widths) > 63:
        return np.lexsort((first, n, -score, doc))
    key = doc.astype(np.int64)
    for column, width in zip((score_rank, n, first), widths[1:]):
        key = key * width + column
    return np.argsort(key)


def _kth_best(
    orders: list[Order],
    order_scores: list[np.ndarray],
    eligible: list[np.ndarray],
    doc_sizes: np.ndarray,
    k: np.ndarray,
) -> np.ndarray:
    """Per document, its k-th best eligible score (-inf where it has at most k candidates; ``k`` per document).

    Each order's groups are two runs sorted by document (the shared groups, numbered in key
    order, whose key starts with the document; the unique ones, by position), so a document's
    candidates are a slice of each run: no sort of the whole batch is needed.
    """
    docs = np.arange(len(doc_sizes) + 1)
    slices = []
    for order, score, idx in zip(orders, order_scores, eligible):
        split = np.searchsorted(idx, order.n_shared)
        for run in (idx[:split], idx[split:]):
            run_doc = order.doc[run]
            slices.append((score[run], np.searchsorted(run_doc, docs)))
    cut = np.full(len(doc_sizes), -np.inf)
    for d in np.flatnonzero(doc_sizes > k).tolist():
        doc_scores = np.concatenate([values[bounds[d] : bounds[d + 1]] for values, bounds in slices])
        cut[d] = np.partition(doc_scores, len(doc_scores) - k[d])[len(doc_scores) - k[d]]
    return cut


def cut_points(n_tokens: int, position: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per token boundary (``n_tokens + 1``; boundary b lies before token b): whether it lies strictly
    inside one of the spans that start at token ``position`` and cover ``n`` tokens (the entity spans)."""
    cut = np.zeros(n_tokens + 1, dtype=bool)
    position, n = np.asarray(position, dtype=np.int64), np.asarray(n, dtype=np.int64)
    inner = np.maximum(n - 1, 0)
    if inner.sum():
        starts = np.repeat(position + 1 - np.concatenate([[0], np.cumsum(inner)[:-1]]), inner)
        cut[starts + np.arange(int(inner.sum()))] = True
    return cut


def without_cuts(orders: list[Order], doc: np.ndarray, cut: np.ndarray) -> list[Order]:
    """Orders 2..N without the occurrences that cut an entity span (the released code's bracket rule).

    An occurrence ``[p, p + n)`` cuts a span when it starts or ends strictly inside it (``cut[p]`` or
    ``cut[p + n]``): it covers part of the entity, not all of it. The released code never counts an
    n-gram holding a ``[`` or ``]`` of a link (docs/method.md §2, "Entities"); here the n-grams that
    hold a whole entity, or lie wholly outside it, still count. Counts, first occurrences and the
    shared / unique split are recomputed from the occurrences that remain; unigrams are kept whole
    (they are the marginals of the PMI, not candidates). ``doc``: the document of each token.
    """
    if not cut.any():
        return orders
    result = [orders[0]]
    for order in orders[1:]:
        n = order.n
        ok = ~(cut[order.shared_pos] | cut[order.shared_pos + n])
        pos, group = order.shared_pos[ok], order.shared_group[ok]
        count = np.bincount(group, minlength=order.n_shared)
        shared = count >= 2
        at_shared = shared[group]
        renumber = np.cumsum(shared) - 1
        shared_pos, shared_group = pos[at_shared], renumber[group[at_shared]]
        # shared_pos is sorted, so a group's first index in it is its first occurrence
        _, first_index = np.unique(shared_group, return_index=True)
        unique_first = order.first[order.n_shared :]
        unique_first = unique_first[~(cut[unique_first] | cut[unique_first + n])]
        unique_pos = np.sort(np.concatenate([unique_first, pos[(count == 1)[group]]]))
        first = np.concatenate([shared_pos[first_index], unique_pos])
        result.append(
            Order(
                n=n,
                count=np.concatenate([count[shared], np.ones(len(unique_pos), dtype=np.int64)]),
                first=first,
                doc=doc[first],
                n_shared=int(shared.sum()),
                shared_pos=shared_pos,
                shared_group=shared_group,
            )
        )
    return result
