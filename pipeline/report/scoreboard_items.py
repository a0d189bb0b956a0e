"""A paired bootstrap over items for the scoreboard's deterministic evaluations (docs/stages/report.md
"The scoreboard"): GEOGRANNO (ULR-BERT Table 4, 8) and FAQ (BURT Table X) score each model once, so there
is no seed spread; the two models are scored on the same queries, and their per-query gold ranks (the
metrics' ``ranks``, :func:`pipeline.tasks.retrieval.summary`) are resampled together.

A column's value is the mean over groups (FAQ's average: its data sets; one split of GEOGRANNO: that split)
of a per-query score (Top-k: gold within the first k; MRR: 1 / rank). Each bootstrap replicate draws every
group's queries with replacement, the same draw for both models, and recomputes the difference; the
one-sided p-values are the shares of replicates at or below zero (holds) and at or above zero (reversed),
each with one added above and below so that no p-value is zero. A fixed seed makes the same input give the
same verdict.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

REPLICATES = 2000
SEED = 0
LARGEST_METRICS = 1 << 28  # bytes: a metrics file is far smaller; a path in tables.json is not trusted
FAQ_AVERAGE = "Avg."  # faq_cells' facet of the average over the data sets (retrieval_tables.py)
# (table, column) -> the per-query score of a gold rank
SCORES = {
    **{(table, f"top{k}"): k for table in ("geogranno", "geogranno_baselines") for k in (1, 5, 10)},
    ("faq", "acc"): 1,
    ("faq", "mrr"): "mrr",
}


def _metrics(path: str) -> dict | None:
    """The metrics JSON a table row came from; None where it is gone or is not a JSON object."""
    try:
        file = Path(path)
        if not file.is_file() or file.stat().st_size > LARGEST_METRICS:  # no device, FIFO or huge file
            return None
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _ranks(node) -> np.ndarray | None:
    ranks = node.get("ranks") if isinstance(node, dict) else None
    if not isinstance(ranks, list) or not ranks:
        return None
    if not all(isinstance(r, int) and not isinstance(r, bool) and r >= 1 for r in ranks):
        return None
    return np.asarray(ranks, dtype=np.int64)


def rank_groups(table: str, row: dict | None) -> list[np.ndarray] | None:
    """The row's per-query gold ranks, one array per group its value averages over; None where the metrics
    file holds none (an older file, another task, a file gone)."""
    path = ((row or {}).get("source") or {}).get("metrics_file")
    data = _metrics(path) if isinstance(path, str) else None
    if data is None:
        return None
    if table.startswith("geogranno"):
        ranks = _ranks((data.get("splits") or {}).get(row.get("facet")))
        return None if ranks is None else [ranks]
    datasets = data.get("datasets")
    if not isinstance(datasets, dict):
        return None
    names = list(datasets) if row.get("facet") == FAQ_AVERAGE else [row.get("facet")]
    groups = [_ranks(datasets.get(name)) for name in names]
    return None if not groups or any(g is None for g in groups) else groups


def _score(ranks: np.ndarray, how) -> np.ndarray:
    return 1.0 / ranks if how == "mrr" else (ranks <= how).astype(np.float64)


def paired_bootstrap(high: list[np.ndarray], low: list[np.ndarray], how) -> dict | None:
    """One-sided p-values of high > low and high < low over the same queries; None where the two rows were
    not scored on the same queries (a different number of groups or of queries in one)."""
    if len(high) != len(low) or any(len(h) != len(lo) for h, lo in zip(high, low)):
        return None
    rng = np.random.default_rng(SEED)
    differences = np.zeros(REPLICATES)
    for h, lo in zip(high, low):
        per_query = _score(h, how) - _score(lo, how)
        draws = rng.integers(0, len(per_query), size=(REPLICATES, len(per_query)))
        differences += per_query[draws].mean(axis=1) / len(high)
    queries = sum(len(h) for h in high)
    return {
        "test": f"paired bootstrap over {queries} queries, {REPLICATES} replicates, one-sided each way, α = 0.05",
        "p": float((1 + np.sum(differences <= 0)) / (REPLICATES + 1)),
        "p_reversed": float((1 + np.sum(differences >= 0)) / (REPLICATES + 1)),
        "interval": [float(x) for x in np.quantile(differences, [0.025, 0.975])],
    }


def bootstrap(table: str, column: str, high_row: dict | None, low_row: dict | None) -> dict | None:
    """The paired bootstrap of one claim column where both rows' metrics carry per-query ranks."""
    how = SCORES.get((table, column))
    if how is None:
        return None
    high, low = rank_groups(table, high_row), rank_groups(table, low_row)
    if high is None or low is None:
        return None
    result = paired_bootstrap(high, low, how)
    if result is None or not all(math.isfinite(p) for p in (result["p"], result["p_reversed"])):
        return None
    return result
