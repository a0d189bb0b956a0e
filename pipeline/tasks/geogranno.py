"""GEOGRANNO question-paraphrase retrieval (ULR §5.1.3, Tables 4, 8 and 9).

Each train and dev question (``nl``) ranks the distinct canonical utterances (``can``) of
train ∪ dev: 158 candidates on the real data, the paper's "all 158 different sentences".
Questions carry typed entity placeholders (``_state_``) where the canonical utterances, made
by the grammar, name one fixed entity per type (``california``); each placeholder is replaced
by that entity (:data:`ENTITIES`) so that a question and its paraphrase speak of the same thing
(with the placeholders left in, BM25 gets 9.4 Top-1 instead of the paper's 27.1; with them
instantiated, 22.6 / 58.2 / 74.9 against the paper's 27.1 / 62.5 / 76.4). A
question's gold set is every ``can`` it is paired with anywhere in train ∪ dev ("some have two
or more matches"). Ranks are pessimistic (:mod:`.retrieval`): a tie with a wrong candidate is
a miss. Reported: Top-1/5/10 and MRR per split and for train+dev together (``all``, the split
Table 4 reports), with each question's gold rank in question order (``ranks``: the scoreboard compares
two models question by question) and its id (``ids``: its position among the split file's questions; in
``all``, the train questions' then the dev questions'), and Table 9's groupings of every split:

- ``by_query_length``: |q| = words of the (instantiated) question, punctuation-only tokens (the final ``?``)
  not counted; buckets ``1-6``, ``7-8``, ``9-15`` (longer questions go to the last bucket);
- ``by_length_difference``: abs(|q| - |Q|) with |Q| the words of the question's own ``can``;
  the buckets are cumulative, as in the paper: ``>=0`` (everything), ``>=2``, ``>=3``.

The buckets are defined once, here, under the labels Table 9 prints (:data:`QUERY_LENGTH_BUCKETS`,
:data:`LENGTH_DIFFERENCE_BUCKETS`); the metrics JSON writes their ASCII spelling (:func:`ascii_label`), and the
report's Table 9 reads either spelling back (:func:`canonical_bucket`).
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np

from pipeline.errors import InputError
from pipeline.tasks.bounded_lines import file_lines, json_line
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.retrieval import gold_ranks, scorer_for, summary

SPLITS = {"train": "geogranno/train_geo_granno.jsonl", "dev": "geogranno/dev_geo_granno.jsonl"}
# The split of Table 4: every train and dev question against the 158 distinct canonical utterances of
# train ∪ dev (the paper's "train-dev set"); the published GEOGRANNO rows carry it.
TRAIN_DEV_SPLIT = "all"
# ULR-BERT Table 9, left block: query length |q| in words, inclusive ranges. The paper's longest query has
# 15 words; the last bucket is open-ended so that every query is counted.
QUERY_LENGTH_BUCKETS: dict[str, tuple[int, int | None]] = {"1~6": (1, 6), "7~8": (7, 8), "9~15": (9, None)}
# Table 9, right block: abs(|q| - |Q|) (query vs. its canonical utterance, in words). The buckets are
# cumulative thresholds ("≥ 2" holds every query whose difference is at least 2), so "≥ 0" is the whole split.
LENGTH_DIFFERENCE_BUCKETS: dict[str, int] = {"≥ 0": 0, "≥ 2": 2, "≥ 3": 3}
# the metrics JSON's key of each grouping -> its buckets
LENGTH_BUCKETS = {"by_query_length": QUERY_LENGTH_BUCKETS, "by_length_difference": LENGTH_DIFFERENCE_BUCKETS}
_WORDISH = re.compile(r"\w")
# placeholder -> the entity the grammar's canonical utterances use for it (checked on train ∪ dev)
ENTITIES = {
    "_state_": "california",
    "_city_": "sacramento",
    "_river_": "colorado",
    "_country_": "usa",
    "_place_": "death valley",
}
_PLACEHOLDER = re.compile("|".join(map(re.escape, ENTITIES)))


def ascii_label(label: str) -> str:
    """A Table 9 label as the metrics JSON writes it: "1~6" -> "1-6", "≥ 2" -> ">=2"."""
    return label.replace("~", "-").replace("≥ ", ">=")


def canonical_bucket(label: str) -> str | None:
    """The Table 9 label a metrics file means: the paper's own, or an ASCII spelling ("1-6", ">=2")."""

    def compact(text: str) -> str:
        return text.replace(" ", "").replace(">=", "≥").replace("-", "~")

    known = {compact(known): known for buckets in LENGTH_BUCKETS.values() for known in buckets}
    return known.get(compact(label))


def query_length_bucket(length: int) -> str | None:
    """The Table 9 bucket label of a query of ``length`` words (None for an empty query)."""
    for label, (low, high) in QUERY_LENGTH_BUCKETS.items():
        if length >= low and (high is None or length <= high):
            return label
    return None


def length_difference_buckets(difference: int) -> list[str]:
    """Every Table 9 bucket that holds a query whose abs(|q| - |Q|) is ``difference``."""
    return [label for label, low in LENGTH_DIFFERENCE_BUCKETS.items() if abs(difference) >= low]


def instantiate(question: str) -> str:
    """The question with each entity placeholder replaced by the canonical utterances' entity."""
    return _PLACEHOLDER.sub(lambda match: ENTITIES[match.group()], question)


def word_count(text: str) -> int:
    """Whitespace tokens that contain a letter or digit (``?`` and other punctuation do not count)."""
    return sum(1 for token in text.split() if _WORDISH.search(token))


def read_split(path) -> list[dict]:
    rows = []
    for number, line in file_lines(path):
        if not line.strip():
            continue
        row = json_line(line, path, f"line {number}")
        if not isinstance(row, dict) or not isinstance(row.get("nl"), str) or not isinstance(row.get("can"), str):
            raise InputError(path, "expected an object with string fields 'nl' and 'can'", where=f"line {number}")
        rows.append(row)
    if not rows:
        raise InputError(path, "no questions")
    return rows


def load(data: DataRoot) -> dict[str, list[dict]]:
    return {split: read_split(data.file(relative, f"GEOGRANNO {split} set")) for split, relative in SPLITS.items()}


def _bucket_summaries(ranks, ties, members: dict[str, np.ndarray]) -> dict:
    return {name: summary(ranks[mask], ties[mask]) for name, mask in members.items()}


def evaluate(model, splits: dict[str, list[dict]]) -> dict:
    rows = [row for split in splits.values() for row in split]
    candidates = sorted({row["can"] for row in rows})
    position = {text: i for i, text in enumerate(candidates)}
    gold_cans = defaultdict(set)
    for row in rows:
        gold_cans[row["nl"]].add(position[row["can"]])
    questions = sorted({row["nl"] for row in rows})
    scores = scorer_for(model, "en").scores([instantiate(q) for q in questions], candidates)
    question_row = {text: i for i, text in enumerate(questions)}

    out = {
        "candidates": len(candidates),
        "placeholders": ENTITIES,
        "splits": {},
        "by_query_length": {},
        "by_length_difference": {},
    }
    for split, members in (*splits.items(), (TRAIN_DEV_SPLIT, rows)):
        which = np.array([question_row[row["nl"]] for row in members])
        gold = np.zeros((len(members), len(candidates)), dtype=bool)
        for i, row in enumerate(members):
            gold[i, sorted(gold_cans[row["nl"]])] = True
        ranks, ties = gold_ranks(scores[which], gold)
        q_len = np.array([word_count(instantiate(row["nl"])) for row in members])
        diff = np.abs(q_len - np.array([word_count(row["can"]) for row in members]))
        # per-query ranks and their ids (each question's position in its split; ``all``: train's then dev's)
        out["splits"][split] = summary(ranks, ties, ids=range(len(members)))
        out["by_query_length"][split] = _bucket_summaries(
            ranks,
            ties,
            {
                ascii_label(label): (q_len >= low) & (q_len <= (high if high is not None else np.inf))
                for label, (low, high) in QUERY_LENGTH_BUCKETS.items()
            },
        )
        out["by_length_difference"][split] = _bucket_summaries(
            ranks, ties, {ascii_label(label): diff >= low for label, low in LENGTH_DIFFERENCE_BUCKETS.items()}
        )
    return out
