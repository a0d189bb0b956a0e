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
Table 4 reports), and Table 9's groupings of every split:

- ``by_query_length``: |q| = words of the (instantiated) question, punctuation-only tokens (the final ``?``)
  not counted; buckets ``1-6``, ``7-8``, ``9-15`` (longer questions go to the last bucket);
- ``by_length_difference``: abs(|q| - |Q|) with |Q| the words of the question's own ``can``;
  the buckets are cumulative, as in the paper: ``>=0`` (everything), ``>=2``, ``>=3``.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

import numpy as np

from pipeline.errors import InputError
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.retrieval import gold_ranks, scorer_for, summary

SPLITS = {"train": "geogranno/train_geo_granno.jsonl", "dev": "geogranno/dev_geo_granno.jsonl"}
QUERY_LENGTH_BUCKETS = (("1-6", 1, 6), ("7-8", 7, 8), ("9-15", 9, None))
DIFFERENCE_BUCKETS = ((">=0", 0), (">=2", 2), (">=3", 3))
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


def instantiate(question: str) -> str:
    """The question with each entity placeholder replaced by the canonical utterances' entity."""
    return _PLACEHOLDER.sub(lambda match: ENTITIES[match.group()], question)


def word_count(text: str) -> int:
    """Whitespace tokens that contain a letter or digit (``?`` and other punctuation do not count)."""
    return sum(1 for token in text.split() if _WORDISH.search(token))


def read_split(path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, f"not JSON: {exc}", where=f"line {number}") from exc
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
    for split, members in (*splits.items(), ("all", rows)):
        which = np.array([question_row[row["nl"]] for row in members])
        gold = np.zeros((len(members), len(candidates)), dtype=bool)
        for i, row in enumerate(members):
            gold[i, sorted(gold_cans[row["nl"]])] = True
        ranks, ties = gold_ranks(scores[which], gold)
        q_len = np.array([word_count(instantiate(row["nl"])) for row in members])
        diff = np.abs(q_len - np.array([word_count(row["can"]) for row in members]))
        out["splits"][split] = summary(ranks, ties)
        out["by_query_length"][split] = _bucket_summaries(
            ranks,
            ties,
            {
                name: (q_len >= low) & (q_len <= (high if high is not None else np.inf))
                for name, low, high in QUERY_LENGTH_BUCKETS
            },
        )
        out["by_length_difference"][split] = _bucket_summaries(
            ranks, ties, {name: diff >= low for name, low in DIFFERENCE_BUCKETS}
        )
    return out
