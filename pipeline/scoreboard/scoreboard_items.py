"""A paired bootstrap over items for the scoreboard's deterministic evaluations (docs/stages/report.md
"The scoreboard"): the analogy sets (ULR-BERT Table 2, BURT Table VIII), GEOGRANNO (ULR-BERT Tables 4, 8)
and FAQ (BURT Table X) score each model once, so there is no seed spread; two models are scored on the
same items, and their per-item outcomes (analogy: each question right or not, ``categories.*.correct``;
retrieval: each query's gold rank, ``ranks``, :func:`pipeline.tasks.retrieval.summary`) are resampled
together.

A column's value is the mean over groups, with equal weights, of the mean of a per-item score (analogy:
a level's semantic and syntactic pools, as ``analogy.evaluate`` averages them; FAQ's average: its data
sets; GEOGRANNO: one split; Top-k: gold within the first k; MRR: 1 / rank). Each bootstrap replicate draws
every group's items with replacement, the same draw for both models, and recomputes the difference; the
one-sided p-values are the shares of replicates at or below zero (holds) and at or above zero (reversed),
each with one added above and below so that no p-value is zero. A fixed seed makes the same input give the
same verdict.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

REPLICATES = 2000
SEED = 0
LARGEST_METRICS = 1 << 28  # bytes: a metrics file is far smaller; a path in tables.json is not trusted
ANALOGY_LEVELS = ("word", "phrase", "sentence")  # pipeline.tasks.analogy.LEVELS
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


def _rank_groups(table: str, row: dict, data: dict) -> list[np.ndarray] | None:
    if table.startswith("geogranno"):
        ranks = _ranks((data.get("splits") or {}).get(row.get("facet")))
        return None if ranks is None else [ranks]
    datasets = data.get("datasets")
    if not isinstance(datasets, dict):
        return None
    names = list(datasets) if row.get("facet") == FAQ_AVERAGE else [row.get("facet")]
    groups = [_ranks(datasets.get(name)) for name in names]
    return None if not groups or any(g is None for g in groups) else groups


def _analogy_groups(column: str, data: dict) -> list[np.ndarray] | None:
    """Per-question hits of the pooled (level, kind) groups a column averages (analogy.evaluate: a level's
    sem / syn pool its table categories; its Avg. is their mean; the overall Avg. the mean of the levels')."""
    categories = data.get("categories")
    if not isinstance(categories, dict):
        return None
    level, _, part = column.rpartition("_")
    levels = ANALOGY_LEVELS if column == "avg" else (level,)
    kinds = {"sem": ("semantic",), "syn": ("syntactic",)}.get(part, ("semantic", "syntactic"))
    groups = []
    for name in levels:
        for kind in kinds:
            hits = []
            for key, result in categories.items():
                if not (isinstance(result, dict) and str(key).startswith(f"{name}/")):
                    continue
                if result.get("type") != kind or result.get("in_tables") is not True:
                    continue
                correct = result.get("correct")
                if not isinstance(correct, str) or not correct or set(correct) - {"0", "1"}:
                    return None
                hits.append(np.frombuffer(correct.encode("ascii"), dtype=np.uint8) - ord("0"))
            if not hits:
                return None
            groups.append(np.concatenate(hits).astype(np.float64))
    return groups


def item_scores(table: str, column: str, row: dict | None) -> list[np.ndarray] | None:
    """The row's per-item scores, one array per group its value averages over (equal weights); None where
    its metrics file holds no per-item outcomes (an older file, a file gone) or the column has none."""
    path = ((row or {}).get("source") or {}).get("metrics_file")
    data = _metrics(path) if isinstance(path, str) else None
    if data is None:
        return None
    if table == "analogy":
        return _analogy_groups(column, data)
    how = SCORES.get((table, column))
    groups = None if how is None else _rank_groups(table, row, data)
    return None if groups is None else [_score(g, how) for g in groups]


def _score(ranks: np.ndarray, how) -> np.ndarray:
    return 1.0 / ranks if how == "mrr" else (ranks <= how).astype(np.float64)


def paired_bootstrap(high: list[np.ndarray], low: list[np.ndarray]) -> dict | None:
    """One-sided p-values of high > low and high < low over the same items; None where the two rows were
    not scored on the same items (a different number of groups or of items in one)."""
    if len(high) != len(low) or any(len(h) != len(lo) for h, lo in zip(high, low)):
        return None
    rng = np.random.default_rng(SEED)
    differences = np.zeros(REPLICATES)
    for h, lo in zip(high, low):
        per_item = np.asarray(h, dtype=np.float64) - np.asarray(lo, dtype=np.float64)
        draws = rng.integers(0, len(per_item), size=(REPLICATES, len(per_item)))
        differences += per_item[draws].mean(axis=1) / len(high)
    items = sum(len(h) for h in high)
    return {
        "test": f"paired bootstrap over {items} items, {REPLICATES} replicates, one-sided each way, α = 0.05",
        "p": float((1 + np.sum(differences <= 0)) / (REPLICATES + 1)),
        "p_reversed": float((1 + np.sum(differences >= 0)) / (REPLICATES + 1)),
        "interval": [float(x) for x in np.quantile(differences, [0.025, 0.975])],
    }


def bootstrap(table: str, column: str, high_row: dict | None, low_row: dict | None) -> dict | None:
    """The paired bootstrap of one claim column where both rows' metrics carry per-item outcomes."""
    high, low = item_scores(table, column, high_row), item_scores(table, column, low_row)
    if high is None or low is None:
        return None
    return paired_bootstrap(high, low)
