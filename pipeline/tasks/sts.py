"""Semantic textual similarity (BURT twin §4.1, Table 2; docs/method.md §5): Spearman ×100 of cosine vs gold.

- STS12–STS16 (``sts/STS1x/``): every ``STS.input.<set>.txt`` (STS16: ``STS2016.input.<set>.txt``)
  that has its ``gs`` file; pairs whose gold line is blank are unscored and skipped (docs/data.md).
  Gold files without an input file (STS12 ``ALL``, STS13 ``SMT``) are ignored. A year's score is
  the mean of its subsets' correlations (SentEval's "all" mean).
- STS-B: ``sts/STSBenchmark/sts-test.csv`` (genre, file, year, id, score, s1, s2; trailing source
  columns ignored).
- SICK-R: ``sick/SICK.txt``, rows whose ``SemEval_set`` is ``TEST``, gold ``relatedness_score``.

``avg`` is the mean of the seven scores (the tables' Avg. column). ``items`` gives each scored pair's gold
and predicted score and its ``ids``, the pair's 0-based line in the file it was read from (SICK: the line of
SICK.txt, header line 0), so the scoreboard counts each pair once and pairs two models item by item.
"""

from __future__ import annotations

import csv
import logging
import math

import numpy as np
from scipy.stats import spearmanr

from pipeline.errors import InputError
from pipeline.tasks.bounded_lines import file_lines
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.numbered_lines import finite_number
from pipeline.tasks.vectors import paired_cosine

log = logging.getLogger("pipeline.tasks.sts")

YEARS = ("STS12", "STS13", "STS14", "STS15", "STS16")
DATASETS = (*YEARS, "STS-B", "SICK-R")


class Pairs(tuple):
    """The (left, right, gold) lists of one test set, unpacked as three as before, with ``rows``: each pair's
    0-based line in the file it was read from (lines without a pair, such as a blank gold score, skipped).
    The lines are the pairs' ids in the metrics (docs/stages/report.md "The scoreboard"): positions, unique by
    construction, where the texts are not (a test set may hold the same pair twice)."""

    rows: list[int]

    def __new__(cls, pairs, rows: list[int] | None = None):  # (pairs,) alone: how pickle and copy rebuild it
        made = super().__new__(cls, pairs)
        made.rows = rows
        return made


def row_ids(pairs) -> list[int]:
    """Each pair's id: its line where the reader recorded it, else its position (pairs built in code)."""
    rows = getattr(pairs, "rows", None)
    return list(rows) if rows is not None and len(rows) == len(pairs[0]) else list(range(len(pairs[0])))


def spearman(predicted, gold) -> float:
    """Spearman's rho ×100 (scipy: average ranks for ties)."""
    return 100.0 * float(spearmanr(predicted, gold).statistic)


def scored_pairs(gold, predicted, ids) -> dict:
    """Each pair's gold and predicted score and id, in file order: the scoreboard's paired bootstrap over
    pairs (docs/stages/report.md "The scoreboard")."""
    return {"gold": [float(g) for g in gold], "predicted": [float(p) for p in predicted], "ids": [int(i) for i in ids]}


def read_semeval(input_path, gold_path) -> Pairs:
    """One SemEval STS subset: TAB-separated s1, s2 (more columns ignored) aligned with gold lines."""
    inputs = [text for _, text in file_lines(input_path)]
    golds = [text for _, text in file_lines(gold_path)]
    if len(inputs) != len(golds):
        raise InputError(gold_path, f"{len(golds)} gold lines for {len(inputs)} input lines in {input_path.name}")
    left, right, scores, rows = [], [], [], []
    for number, (line, gold) in enumerate(zip(inputs, golds), 1):
        if not gold.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 2:
            raise InputError(input_path, "expected two TAB-separated sentences", where=f"line {number}")
        scores.append(finite_number(gold_path, number, gold.strip(), "gold score"))
        left.append(fields[0])
        right.append(fields[1])
        rows.append(number - 1)
    return Pairs((left, right, scores), rows)


def year_subsets(data: DataRoot, year: str) -> dict[str, Pairs]:
    folder = data.folder(f"sts/{year}", f"{year} folder")
    prefix = "STS2016" if year == "STS16" else "STS"
    subsets = {}
    for input_path in sorted(folder.glob(f"{prefix}.input.*.txt")):
        name = input_path.name[len(f"{prefix}.input.") : -len(".txt")]
        gold_path = folder / f"{prefix}.gs.{name}.txt"
        if not gold_path.exists():
            log.warning("%s: no gold file %s, subset skipped", input_path, gold_path.name)
            continue
        data.file(str(input_path.relative_to(data.root)))
        data.file(str(gold_path.relative_to(data.root)))
        subsets[name] = read_semeval(input_path, gold_path)
    if not subsets:
        raise InputError(folder, f"no {prefix}.input.<set>.txt with a matching {prefix}.gs.<set>.txt")
    return subsets


def read_stsb(path) -> Pairs:
    left, right, scores, rows = [], [], [], []
    for number, line in file_lines(path):
        fields = line.split("\t")
        if len(fields) < 7:
            raise InputError(
                path, f"expected at least 7 TAB-separated columns, found {len(fields)}", where=f"line {number}"
            )
        scores.append(finite_number(path, number, fields[4], "score"))
        left.append(fields[5])
        right.append(fields[6])
        rows.append(number - 1)
    return Pairs((left, right, scores), rows)


def read_sick(path, split: str = "TEST") -> Pairs:
    left, right, scores, rows = [], [], [], []
    # no quote processing (SICK's sentences hold bare '"'); lines read with a bound, as csv's own
    # field limit (131,072 characters) is reached only after a whole line is held
    reader = csv.DictReader((text for _, text in file_lines(path)), delimiter="\t", quoting=csv.QUOTE_NONE)
    try:
        needed = {"sentence_A", "sentence_B", "relatedness_score", "SemEval_set"}
        if not needed <= set(reader.fieldnames or ()):
            raise InputError(path, f"header lacks {sorted(needed - set(reader.fieldnames or ()))}")
        for row in reader:
            if (row["SemEval_set"] or "").strip() == split:
                scores.append(finite_number(path, reader.line_num, row["relatedness_score"], "relatedness_score"))
                left.append(row["sentence_A"])
                right.append(row["sentence_B"])
                rows.append(reader.line_num - 1)  # one line a row (no quoting): the header is line 0
    except csv.Error as exc:
        raise InputError(path, f"not readable as TAB-separated text: {exc}", where=f"line {reader.line_num}") from None
    if not scores:
        raise InputError(path, f"no rows with SemEval_set {split}")
    return Pairs((left, right, scores), rows)


def load(data: DataRoot) -> dict[str, dict[str, Pairs]]:
    """{dataset: {subset: pairs}}; STS-B and SICK-R have one subset named after themselves."""
    sets = {year: year_subsets(data, year) for year in YEARS}
    sets["STS-B"] = {"test": read_stsb(data.file("sts/STSBenchmark/sts-test.csv", "STS Benchmark test set"))}
    sets["SICK-R"] = {"test": read_sick(data.file("sick/SICK.txt", "SICK corpus"))}
    return sets


def evaluate(encoder, sets: dict[str, dict[str, Pairs]]) -> dict:
    texts = [t for subsets in sets.values() for left, right, _ in subsets.values() for t in (*left, *right)]
    vectors = encoder.encode(texts)
    offset = 0
    scores, subsets_out, counts, items = {}, {}, {}, {}
    for name, subsets in sets.items():
        per_subset = {}
        for subset, pairs in subsets.items():
            left, _, gold = pairs
            n = len(left)
            block = vectors[offset : offset + 2 * n]
            offset += 2 * n
            cosine = paired_cosine(block[:n], block[n:])
            per_subset[subset] = spearman(cosine, gold)
            items.setdefault(name, {})[subset] = scored_pairs(gold, cosine, row_ids(pairs))
        counts[name] = sum(len(pairs[0]) for pairs in subsets.values())
        scores[name] = float(np.mean(list(per_subset.values())))
        if name in YEARS:
            subsets_out[name] = per_subset
    values = [scores.get(name, math.nan) for name in DATASETS]
    return {
        "scores": scores,
        "subsets": subsets_out,
        "n": counts,
        "avg": None if any(math.isnan(v) for v in values) else float(np.mean(values)),
        "items": items,
    }
