"""Chinese FAQ retrieval from question-matching sets (BURT §4.3, Table X; Acc@1 and MRR).

BURT's insurance FAQ set is not public, so Chinese question-matching corpora stand in for it:
the positive pairs (label 1) of a set form the FAQ. The FAQ is the distinct second questions
(``sentence2``) of the positive pairs; every distinct first question of a positive pair is a
query, and its gold set is the FAQ questions it is paired with. Each query ranks the whole FAQ
(ranks pessimistic, :mod:`.retrieval`). Sets and files (docs/data.md):

- BQ: ``chinese/bq_corpus/dev.tsv`` (q1 TAB q2 TAB label);
- AFQMC: ``chinese/afqmc/dev.json`` (JSON lines, ``sentence1``, ``sentence2``, ``label``);
- BUSTM: ``chinese/fewclue/bustm/test_public.json`` (same fields; the labelled FewCLUE test set).

``avg`` is the mean Acc@1 over the sets, ``avg_mrr`` the mean MRR; both ×100. Each set also keeps its
queries' gold ranks in query order (``ranks``) and each query's id (``ids``: the position of its first
positive pair among the file's pairs), so that the scoreboard can compare two models query by query (a
paired bootstrap; docs/stages/report.md "The scoreboard").
"""

from __future__ import annotations

import numpy as np

from pipeline.errors import InputError
from pipeline.tasks.bounded_lines import file_lines, json_line
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.retrieval import gold_ranks, scorer_for, summary

DATASETS = {
    "BQ": "chinese/bq_corpus/dev.tsv",
    "AFQMC": "chinese/afqmc/dev.json",
    "BUSTM": "chinese/fewclue/bustm/test_public.json",
}

Pair = tuple[str, str, str]


def read_pairs(path) -> list[Pair]:
    """(sentence1, sentence2, label) from a TSV (q1, q2, label) or JSON-lines file."""
    pairs = []
    for number, line in file_lines(path):
        if not line.strip():
            continue
        if path.suffix == ".json":
            row = json_line(line, path, f"line {number}")
            try:
                pairs.append((row["sentence1"], row["sentence2"], str(row["label"])))
            except (KeyError, TypeError) as exc:
                raise InputError(
                    path, f"expected JSON with sentence1, sentence2, label: {exc}", where=f"line {number}"
                ) from exc
        else:
            fields = line.split("\t")
            if len(fields) != 3:
                raise InputError(path, f"expected q1, q2, label; found {len(fields)} field(s)", where=f"line {number}")
            pairs.append((fields[0], fields[1], fields[2].strip()))
    return pairs


def build_faq(pairs: list[Pair]) -> tuple[list[str], list[str], np.ndarray]:
    """FAQ questions, queries (both sorted) and the boolean gold matrix (queries × FAQ)."""
    positive = [(q, f) for q, f, label in pairs if label == "1"]
    faq = sorted({f for _, f in positive})
    queries = sorted({q for q, _ in positive})
    faq_index = {text: i for i, text in enumerate(faq)}
    query_index = {text: i for i, text in enumerate(queries)}
    gold = np.zeros((len(queries), len(faq)), dtype=bool)
    for q, f in positive:
        gold[query_index[q], faq_index[f]] = True
    return faq, queries, gold


def query_ids(pairs: list[Pair], queries: list[str]) -> list[int]:
    """Each query's id: the position, among the file's pairs, of the first positive pair it is asked in. A
    query is one item however many pairs ask it; positions are unique where the texts would be too."""
    first: dict[str, int] = {}
    for position, (query, _, label) in enumerate(pairs):
        if label == "1":
            first.setdefault(query, position)
    return [first[query] for query in queries]


def load(data: DataRoot) -> dict[str, list[Pair]]:
    sets = {}
    for name, relative in DATASETS.items():
        path = data.file(relative, f"{name} question-matching set")
        sets[name] = read_pairs(path)
        if not any(label == "1" for _, _, label in sets[name]):
            raise InputError(path, "no positive (label 1) pairs to build an FAQ from")
    return sets


def evaluate(model, sets: dict[str, list[Pair]]) -> dict:
    scorer = scorer_for(model, "zh")
    datasets = {}
    for name, pairs in sets.items():
        faq, queries, gold = build_faq(pairs)
        ranks, ties = gold_ranks(scorer.scores(queries, faq), gold)
        result = summary(ranks, ties, ks=(1, 5, 10), ids=query_ids(pairs, queries))
        datasets[name] = {
            "acc1": result["top1"],
            "mrr": result["mrr"],
            "top5": result["top5"],
            "top10": result["top10"],
            "queries": len(queries),
            "faq_size": len(faq),
            "ties": result["ties"],
            "ranks": result["ranks"],  # each query's gold rank, in query order: the scoreboard's paired bootstrap
            "ids": result["ids"],  # each query's id: the position of its first positive pair in the file
        }
    return {
        "datasets": datasets,
        "avg": float(np.mean([d["acc1"] for d in datasets.values()])),
        "avg_mrr": float(np.mean([d["mrr"] for d in datasets.values()])),
    }
