"""The per-item outcomes of the scoreboard's evaluations that score each model once, and the test each
column gets from them (docs/stages/report.md "The scoreboard"): two models scored on the same items are
compared item by item (:mod:`.scoreboard_bootstrap`), never by the sign of their difference.

* **Accuracy of one test set** (SNLI test ``test_correct``, SemEval 5(a) and the transfer classification
  tasks ``correct``): McNemar's exact test.
* **A mean of per-item scores** (GEOGRANNO Top-k and MRR from each query's gold rank, FAQ per data set,
  ``ranks``): a paired bootstrap over items.
* **Analogy accuracy** (``correct`` and ``word_pair_ids``, each question's two word pairs, the same ids at
  every level): a cluster bootstrap over word pairs across levels; a file without ``word_pair_ids`` (older)
  is clustered by its own files' ``pairs``, each level apart, and its test says so.
* **A correlation** (STS, PPDB and the word sets: Spearman; the transfer regressions: Pearson or
  Spearman; ``items``: each pair's gold and predicted score): a paired bootstrap over pairs.

A column's value is the mean over groups, with the weights the tables give them (analogy: a level's
semantic and syntactic pools, as ``analogy.evaluate`` averages them; STS: the mean over a year's subsets,
and Avg. the mean of the seven sets; FAQ's average: its data sets). Where a metrics file holds no per-item
outcomes (an older file) or malformed ones, the column is not tested (:func:`bootstrap` says why).

Every outcome list comes with its items' ids (:mod:`.scoreboard_ids`): an id repeated within a group, or two
sides scored on different ids, leave the column untested; a file written before the ids is tested as
before, and its verdict row says that the items' identity was not checked.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pipeline.scoreboard.scoreboard_bootstrap import (
    Hits,
    Scored,
    cluster_bootstrap,
    correlation_bootstrap,
    mcnemar,
    paired_bootstrap,
)
from pipeline.scoreboard.scoreboard_ids import Ids, ItemsError, item_ids, pairing

LARGEST_ID = 1 << 62  # an int64 holds it: a rank or pair id past it is not one an evaluation wrote
LARGEST_METRICS = 1 << 28  # bytes: a metrics file is far smaller; a path in tables.json is not trusted
ANALOGY_LEVELS = ("word", "phrase", "sentence")  # pipeline.tasks.analogy.LEVELS
FAQ_AVERAGE = "Avg."  # faq_cells' facet of the average over the data sets (retrieval_tables.py)
# (table, column) -> the per-query score of a gold rank
SCORES = {
    **{(table, f"top{k}"): k for table in ("geogranno", "geogranno_baselines") for k in (1, 5, 10)},
    ("faq", "acc"): 1,
    ("faq", "mrr"): "mrr",
}
# column -> the set names of the ``sts`` task's ``items`` (pipeline/report/similarity_tables.py STS_SCORES)
STS_SETS = {
    "sts12": ("STS12",),
    "sts13": ("STS13",),
    "sts14": ("STS14",),
    "sts15": ("STS15",),
    "sts16": ("STS16",),
    "stsb": ("STS-B",),
    "sickr": ("SICK-R",),
}
STS_SETS["avg"] = tuple(name for names in STS_SETS.values() for name in names)
WORD_SETS = {"simlex": "SimLex-999", "ws_sim": "WS-353-SIM", "ws_rel": "WS-353-REL", "men": "MEN", "scws": "SCWS"}
# transfer column -> (the harness's task name, how its value is scored)
TRANSFER = {
    "mr": ("MR", "accuracy"),
    "cr": ("CR", "accuracy"),
    "subj": ("SUBJ", "accuracy"),
    "mpqa": ("MPQA", "accuracy"),
    "sst": ("SST2", "accuracy"),
    "trec": ("TREC", "accuracy"),
    "sicke": ("SICK-E", "accuracy"),
    "sickr": ("SICK-R", "pearson"),
    "sts14_pearson": ("STS14", "pearson"),
    "sts14_spearman": ("STS14", "spearman"),
}


# ------------------------------------------------------------------------------------ per-item data
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


def _bits(text) -> np.ndarray | None:
    """A string of 0 / 1, one per item, as floats."""
    if not isinstance(text, str) or not text or set(text) - {"0", "1"}:
        return None
    return (np.frombuffer(text.encode("ascii"), dtype=np.uint8) - ord("0")).astype(np.float64)


def _numbers(values, length: int | None = None) -> np.ndarray | None:
    if not isinstance(values, list) or len(values) < 3 or (length is not None and len(values) != length):
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return None
    try:
        array = np.asarray(values, dtype=np.float64)
    except OverflowError:  # an int past any float
        return None
    return array if np.isfinite(array).all() else None


def _scored(node, group: str, ids: Ids) -> Scored | None:
    """A correlation set's gold and predicted scores; its ids go to ``ids``."""
    if not isinstance(node, dict):
        return None
    gold = _numbers(node.get("gold"))
    predicted = None if gold is None else _numbers(node.get("predicted"), len(gold))
    if predicted is None:
        return None
    ids.append((group, item_ids(node, len(gold), group)))
    return Scored(gold, predicted)


def _ranks(node, group: str, ids: Ids) -> np.ndarray | None:
    ranks = node.get("ranks") if isinstance(node, dict) else None
    if not isinstance(ranks, list) or not ranks:
        return None
    if not all(isinstance(r, int) and not isinstance(r, bool) and 1 <= r < LARGEST_ID for r in ranks):
        return None
    ids.append((group, item_ids(node, len(ranks), group)))
    return np.asarray(ranks, dtype=np.int64)


def _rank_groups(table: str, row: dict, data: dict, ids: Ids) -> list[np.ndarray] | None:
    if table.startswith("geogranno"):
        facet = row.get("facet")
        ranks = _ranks((data.get("splits") or {}).get(facet), f"the {facet} split", ids)
        return None if ranks is None else [ranks]
    datasets = data.get("datasets")
    if not isinstance(datasets, dict):
        return None
    names = list(datasets) if row.get("facet") == FAQ_AVERAGE else [row.get("facet")]
    groups = [_ranks(datasets.get(name), str(name), ids) for name in names]
    return None if not groups or any(g is None for g in groups) else groups


def _analogy_groups(column: str, data: dict, ids: Ids) -> list[Hits] | None:
    """Per-question hits of the pooled (level, kind) groups a column averages (analogy.evaluate: a level's
    sem / syn pool its table categories; its Avg. is their mean; the overall Avg. the mean of the levels'),
    with each question's word pairs: ``word_pair_ids``, shared by every level and category, where every
    category gives them (analogy.trace_word_pairs); and ``pairs``, each file's own, offset so that two
    categories' pairs stay apart (an older file's only clustering)."""
    categories = data.get("categories")
    if not isinstance(categories, dict):
        return None
    level, _, part = column.rpartition("_")
    levels = ANALOGY_LEVELS if column == "avg" else (level,)
    kinds = {"sem": ("semantic",), "syn": ("syntactic",)}.get(part, ("semantic", "syntactic"))
    groups = []
    for name in levels:
        for kind in kinds:
            hits, pairs, word_pairs, offset = [], [], [], 0
            for key, result in categories.items():
                if not (isinstance(result, dict) and str(key).startswith(f"{name}/")):
                    continue
                if result.get("type") != kind or result.get("in_tables") is not True:
                    continue
                correct = _bits(result.get("correct"))
                if correct is None:
                    return None
                hits.append(correct)
                ids.append((str(key), item_ids(result, len(correct), str(key))))
                pair_ids = _pair_ids(result.get("pairs"), len(correct))
                pairs.append(None if pair_ids is None else pair_ids + offset)
                offset += 0 if pair_ids is None else int(pair_ids.max()) + 1
                word_pairs.append(_pair_ids(result.get("word_pair_ids"), len(correct), LARGEST_ID))
            if not hits:
                return None
            joined = lambda parts: None if any(p is None for p in parts) else np.concatenate(parts)
            groups.append(Hits(np.concatenate(hits), joined(pairs), joined(word_pairs)))
    return groups


def _pair_ids(node, questions: int, largest: int | None = None) -> np.ndarray | None:
    """A category's ``pairs`` (for each question, the ids of its two word pairs (A, B) and (C, D) in its own
    file: two new pairs a question at most) or ``word_pair_ids`` (ids shared by every category, below
    ``largest``)."""
    if not isinstance(node, list) or len(node) != questions:
        return None
    if not all(
        isinstance(q, list) and len(q) == 2 and all(isinstance(i, int) and not isinstance(i, bool) for i in q)
        for q in node
    ):
        return None
    if not all(0 <= i < (largest or 2 * questions) for q in node for i in q):
        return None
    return np.asarray(node, dtype=np.int64).reshape(questions, 2)


def _metrics_file(row: dict | None, column: str) -> str | None:
    """The metrics file that gave a row's column: a merged task's file where the row merged one for it."""
    source = (row or {}).get("source") or {}
    for merged in source.get("merged") or []:
        if isinstance(merged, dict) and column in (merged.get("columns") or []):
            path = merged.get("metrics_file")
            return path if isinstance(path, str) else None
    path = source.get("metrics_file")
    return path if isinstance(path, str) else None


def _sts_groups(column: str, data: dict, ids: Ids) -> list[tuple[float, Scored]] | None:
    items = data.get("items")
    if not isinstance(items, dict) or column not in STS_SETS:
        return None
    sets = STS_SETS[column]
    groups = []
    for name in sets:
        subsets = items.get(name)
        if not isinstance(subsets, dict) or not subsets:
            return None
        for subset, node in subsets.items():
            scored = _scored(node, f"{name}/{subset}", ids)
            if scored is None:
                return None
            groups.append((1.0 / (len(sets) * len(subsets)), scored))
    return groups


def _correlation_groups(table: str, column: str, data: dict, ids: Ids) -> tuple[str, list[tuple[float, Scored]]] | None:
    """(method, [(weight, scored set)]) of a correlation column; None where the file has no per-pair scores."""
    items = data.get("items")
    if table in ("sts", "sts_senteval") or (table == "ablation" and column in STS_SETS):
        groups = _sts_groups(column, data, ids)
        return None if groups is None else ("spearman", groups)
    if not isinstance(items, dict):
        return None
    if column == "ppdb":
        name = data.get("headline", "ppdb-sample")
        scored = _scored(items.get(name) if isinstance(name, str) else None, str(name), ids)
    elif column in WORD_SETS:
        scored = _scored(items.get(WORD_SETS[column]), WORD_SETS[column], ids)
    else:
        return None
    return None if scored is None else ("spearman", [(1.0, scored)])


def _outcomes(table: str, column: str, row: dict | None, data: dict, ids: Ids):
    """(kind, per-item data) of a row's column in its metrics ``data``; each group's ids go to ``ids``."""
    if table == "analogy":
        groups = _analogy_groups(column, data, ids)
        return None if groups is None else ("hits", groups)
    if (table, column) in SCORES:
        groups = _rank_groups(table, row, data, ids)
        return None if groups is None else ("scores", [_score(g, SCORES[table, column]) for g in groups])
    if table == "bilstm_snli" and column == "test" or column == "semeval":
        key = "test_correct" if table == "bilstm_snli" else "correct"
        correct = _bits(data.get(key))
        if correct is not None:
            group = "the SNLI test set" if table == "bilstm_snli" else "the SemEval 5(a) test set"
            ids.append((group, item_ids(data, len(correct), group, "test_ids" if key == "test_correct" else "ids")))
        return None if correct is None else ("correct", correct)
    if table == "transfer" and column in TRANSFER:
        task, how = TRANSFER[column]
        node = (data.get("tasks") or {}).get(task)
        if how == "accuracy":
            correct = _bits(node.get("correct")) if isinstance(node, dict) else None
            if correct is not None:
                ids.append((task, item_ids(node, len(correct), task)))
            return None if correct is None else ("correct", correct)
        subsets = node.get("items") if isinstance(node, dict) else None
        if not isinstance(subsets, dict) or not subsets:
            return None
        # STS14: the subsets' mean
        groups = [(1.0 / len(subsets), _scored(one, f"{task}/{name}", ids)) for name, one in subsets.items()]
        return None if any(g is None for _, g in groups) else ("correlation", (how, groups))
    found = _correlation_groups(table, column, data, ids)
    return None if found is None else ("correlation", found)


def outcomes_and_ids(table: str, column: str, row: dict | None):
    """(kind, per-item data, ids) of a row's column (:func:`item_outcomes`) with each group's item ids
    (:mod:`.scoreboard_ids`); None where there are no per-item outcomes. Ids that repeat or are malformed
    raise :class:`.ItemsError`, its message one line naming the metrics file."""
    path = _metrics_file(row, column)
    data = _metrics(path) if path is not None else None
    if data is None:
        return None
    ids: Ids = []
    try:
        found = _outcomes(table, column, row, data, ids)
    except ItemsError as error:
        raise ItemsError(f"{path}: {error}") from None
    return None if found is None else (*found, ids)


def item_outcomes(table: str, column: str, row: dict | None):
    """(kind, per-item data) of a row's column; None where its metrics file holds no per-item outcomes (an
    older file, a file gone) or the column has none. Kinds: "hits" (analogy), "scores" (a mean of per-item
    scores), "correct" (accuracy), "correlation". Ids that repeat or are malformed raise
    :class:`.ItemsError`."""
    found = outcomes_and_ids(table, column, row)
    return None if found is None else found[:2]


def item_scores(table: str, column: str, row: dict | None) -> list[np.ndarray] | None:
    """The per-item scores of a mean column (analogy hits, retrieval scores), one array per group its value
    averages with equal weights; None for other columns or where the metrics file holds none."""
    found = item_outcomes(table, column, row)
    if found is None or found[0] not in ("hits", "scores"):
        return None
    return [group.hits for group in found[1]] if found[0] == "hits" else found[1]


def _score(ranks: np.ndarray, how) -> np.ndarray:
    return 1.0 / ranks if how == "mrr" else (ranks <= how).astype(np.float64)


# ------------------------------------------------------------------------------------------- tests
def _found(table: str, column: str, row: dict | None):
    """:func:`outcomes_and_ids`, or the one-line reason its ids leave the column untested."""
    try:
        return outcomes_and_ids(table, column, row)
    except ItemsError as error:
        return str(error)


def _with_note(result: dict | None, paired: dict | None) -> dict | None:
    """A test's result with the pairing's note (the items' identity not checked) in its description."""
    if result is None or not paired or "note" not in paired:
        return result
    return {**result, "test": f"{result['test']}; {paired['note']}"}


def bootstrap(table: str, column: str, high_row: dict | None, low_row: dict | None) -> dict:
    """The test over items of one claim column: a result with ``p`` and ``p_reversed``, or ``{"untested":
    why}`` where a row's metrics carry no per-item outcomes, an item is listed twice, or the two rows were
    not scored on the same items."""
    high, low = _found(table, column, high_row), _found(table, column, low_row)
    for found in (high, low):
        if isinstance(found, str):
            return {"untested": found}
    if high is None or low is None:
        missing = [row["label"] for row, found in ((high_row, high), (low_row, low)) if found is None and row]
        return {"untested": f"no per-item outcomes for {column} in the metrics of {', '.join(missing) or 'a side'}"}
    if high[0] != low[0]:
        return {"untested": f"the two rows' {column} outcomes are of different kinds"}
    paired = pairing(high[2], low[2], column)
    if paired and "untested" in paired:
        return paired
    kind = high[0]
    if kind == "hits":
        result = cluster_bootstrap(high[1], low[1])
        if result is None:
            return {
                "untested": "analogy metrics without each question's word pairs (an older file), or too few "
                "pairs: the cluster bootstrap over word pairs cannot run, and a bootstrap over questions "
                "would be far too confident"
            }
    elif kind == "scores":
        result = paired_bootstrap(high[1], low[1])
    elif kind == "correct":
        result = mcnemar(high[1], low[1])
    else:
        method = high[1][0]
        result = correlation_bootstrap(method, high[1][1], low[1][1])
    return _with_note(result, paired) or {"untested": f"the two rows were not scored on the same items of {column}"}


def bootstrap_mean(table: str, columns: list[str], high_row: dict | None, low_row: dict | None) -> dict:
    """The test over items of the mean of several correlation columns (a fallback's word sets): one paired
    bootstrap over every set's pairs, each set weighted 1 / the number of columns."""
    found = [(_found(table, c, high_row), _found(table, c, low_row)) for c in columns]
    reason = next((side for pair in found for side in pair if isinstance(side, str)), None)
    if reason is not None:
        return {"untested": reason}
    if any(h is None or lo is None or h[0] != "correlation" or lo[0] != "correlation" for h, lo in found):
        return {"untested": f"no per-pair scores for every one of {', '.join(columns)} on both sides"}
    methods = {h[1][0] for h, _ in found} | {lo[1][0] for _, lo in found}
    if len(methods) != 1:
        return {"untested": "the columns are scored by different correlations"}
    paired = pairing(
        [group for h, _ in found for group in h[2]], [group for _, lo in found for group in lo[2]], ", ".join(columns)
    )
    if paired and "untested" in paired:
        return paired
    share = 1.0 / len(columns)
    high = [(share * w, s) for h, _ in found for w, s in h[1][1]]
    low = [(share * w, s) for _, lo in found for w, s in lo[1][1]]
    result = _with_note(correlation_bootstrap(methods.pop(), high, low), paired)
    return result or {"untested": f"the two rows were not scored on the same pairs of {', '.join(columns)}"}
