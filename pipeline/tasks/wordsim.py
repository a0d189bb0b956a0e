"""Word similarity (BURT twin §4.3, Table 4; docs/method.md §5): Spearman ×100 of cosine vs human scores.

Reads every set of ``word_similarity/eval-word-vectors/`` (wordvectors.org layout: word1 TAB
word2 TAB score). Each word is embedded as its own sequence (``[CLS] word [SEP]`` for a
transformer). For bag-of-vectors baselines a pair with a word that has no vector is skipped
and counted (``oov``), as in the wordvectors.org evaluation script; ``n`` counts the pairs used, and
``items`` gives each used pair's scores with its id, its 0-based line in the set's file, so the rows kept
are on record.
A file of the folder that is not a ``.txt`` set (a ``.tsv`` saved beside them) is not read, with a
one-line warning naming it and the format expected, so that a set the user added is not left out
silently; the release's own licence and notes are not warned about.
"""

from __future__ import annotations

import logging

import numpy as np

from pipeline.errors import InputError
from pipeline.tasks.bounded_lines import file_lines
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.numbered_lines import finite_number
from pipeline.tasks.sts import Pairs, row_ids, scored_pairs, spearman
from pipeline.tasks.vectors import paired_cosine

FOLDER = "word_similarity/eval-word-vectors"
# file stem -> the name the papers' tables use
NAMES = {
    "EN-SIMLEX-999": "SimLex-999",
    "EN-WS-353-ALL": "WS-353-ALL",
    "EN-WS-353-SIM": "WS-353-SIM",
    "EN-WS-353-REL": "WS-353-REL",
    "EN-MEN-TR-3k": "MEN",
    "EN-RW-STANFORD": "RW",
    "EN-MC-30": "MC-30",
    "EN-RG-65": "RG-65",
    "EN-MTurk-287": "MTurk-287",
    "EN-MTurk-771": "MTurk-771",
    "EN-SimVerb-3500": "SimVerb-3500",
    "EN-VERB-143": "VERB-143",
    "EN-YP-130": "YP-130",
}

# What the folder holds beside its sets: wordvectors.org's LICENSE, and a README or notes
NOT_SETS = ("LICENSE", "README")
EXPECTED = "a word-similarity set is a .txt file of 'word1 word2 score' lines"

log = logging.getLogger("pipeline.tasks.wordsim")


def read_pairs(path) -> Pairs:
    left, right, scores, rows = [], [], [], []
    for number, line in file_lines(path):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 3:
            raise InputError(
                path, f"expected word1, word2, score; found {len(fields)} field(s)", where=f"line {number}"
            )
        scores.append(finite_number(path, number, fields[2], "score"))
        left.append(fields[0])
        right.append(fields[1])
        rows.append(number - 1)
    if not scores:
        raise InputError(path, "no word pairs")
    return Pairs((left, right, scores), rows)


def load(data: DataRoot) -> dict[str, Pairs]:
    folder = data.folder(FOLDER, "word-similarity sets")
    sets = {}
    for path in sorted(folder.iterdir()):
        if path.suffix != ".txt":
            if path.is_file() and not path.name.startswith((".", *NOT_SETS)) and path.suffix != ".md":
                log.warning("%s: skipped, not read: %s", path, EXPECTED)
            continue
        data.file(str(path.relative_to(data.root)))
        sets[NAMES.get(path.stem, path.stem)] = read_pairs(path)
    if not sets:
        raise InputError(folder, "no word-similarity files (*.txt)")
    return sets


def evaluate(encoder, sets: dict[str, Pairs]) -> dict:
    words = sorted({w for left, right, _ in sets.values() for w in (*left, *right)})
    vectors = encoder.encode(words)
    index = {w: i for i, w in enumerate(words)}
    known = np.linalg.norm(vectors, axis=1) > 0
    scores, counts, oov, items = {}, {}, {}, {}
    for name, pairs in sets.items():
        left, right, gold = pairs
        a = np.array([index[w] for w in left])
        b = np.array([index[w] for w in right])
        used = known[a] & known[b]
        counts[name], oov[name] = int(used.sum()), int((~used).sum())
        cosine = paired_cosine(vectors[a[used]], vectors[b[used]])
        scores[name] = spearman(cosine, np.asarray(gold)[used]) if used.sum() > 1 else None
        # the pairs scored (both words known), with the lines they were read from: the rows kept
        items[name] = scored_pairs(np.asarray(gold)[used], cosine, np.asarray(row_ids(pairs), dtype=np.int64)[used])
    return {"scores": scores, "n": counts, "oov": oov, "items": items}
