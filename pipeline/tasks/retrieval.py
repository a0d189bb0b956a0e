"""Ranking metrics shared by the retrieval tasks (ULR §5.1.3 Top-k; BURT §4.3 Acc@1 and MRR).

A query's rank is that of its best gold candidate, counted pessimistically: every non-gold
candidate scoring *at least as high* ranks above it. A tie with a wrong candidate is therefore
never a hit (the same rule as the analogy task), and the number of such ties is reported, so
a lexical baseline that scores many candidates 0 cannot win by the order of the list.

A scorer maps ``(queries, candidates)`` to a score matrix; :class:`DenseScorer` wraps any
encoder (cosine), :mod:`.lexical` provides BM25 and TF-IDF.
"""

from __future__ import annotations

import numpy as np

from pipeline.tasks.vectors import cosine_matrix


def gold_ranks(scores: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pessimistic 1-based rank of the best gold candidate per row, and whether it was tied.

    ``scores`` and ``gold`` are ``(queries, candidates)``; ``gold`` is boolean with at least one
    ``True`` per row.
    """
    scores = np.asarray(scores, dtype=np.float64)
    gold = np.asarray(gold, dtype=bool)
    if not gold.any(axis=1).all():
        raise ValueError("every query needs at least one gold candidate")
    best_gold = np.where(gold, scores, -np.inf).max(axis=1, keepdims=True)
    wrong = ~gold
    above_or_level = (wrong & (scores >= best_gold)).sum(axis=1)
    level = (wrong & (scores == best_gold)).sum(axis=1)
    return 1 + above_or_level, level > 0


def top_k(ranks: np.ndarray, k: int) -> float:
    """Percentage of queries whose gold is within the first ``k``."""
    return 100.0 * float(np.mean(np.asarray(ranks) <= k)) if len(ranks) else float("nan")


def mrr(ranks: np.ndarray) -> float:
    """Mean reciprocal rank ×100."""
    return 100.0 * float(np.mean(1.0 / np.asarray(ranks, dtype=np.float64))) if len(ranks) else float("nan")


def summary(ranks: np.ndarray, ties: np.ndarray, ks=(1, 5, 10), ids=None) -> dict:
    """Top-k for each k, MRR, the count of queries and of gold-vs-wrong ties; given each query's ``ids`` (its
    position in the source file), each query's gold rank in query order too (``ranks``, with ``ids``), from
    which every figure above follows, so that two models scored on the same queries can be compared query by
    query (the scoreboard's paired bootstrap)."""
    out = {f"top{k}": top_k(ranks, k) for k in ks}
    out.update(mrr=mrr(ranks), n=len(ranks), ties=int(np.sum(ties)))
    if ids is not None:
        out["ranks"] = [int(rank) for rank in ranks]
        out["ids"] = [int(i) for i in ids]
    return out


class DenseScorer:
    """Cosine of embeddings; queries and candidates go to the encoder in one call (one pass per string)."""

    def __init__(self, encoder):
        self.encoder = encoder

    def scores(self, queries: list[str], candidates: list[str]) -> np.ndarray:
        vectors = self.encoder.encode(list(queries) + list(candidates))
        return cosine_matrix(vectors[: len(queries)], vectors[len(queries) :])


def scorer_for(model, lang: str):
    """A scorer for ``model``: a lexical baseline rebuilt for the task's language, or cosine over embeddings."""
    if hasattr(model, "scores"):
        return type(model)(lang=lang)
    return DenseScorer(model)
