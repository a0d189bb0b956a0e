"""Phrase similarity on PPDB pairs (BURT twin §4.2, Table 3 "PPDB"; docs/method.md §5): Spearman ×100
of cosine against human scores.

The paper scores 32,202 multi-word pairs of "the test set of PPDB" against PPDB's equivalence
scores; that set is not public. The stand-in here is the PPDB 2.0 *human paraphrase-quality*
judgements (Pavlick et al., ACL 2015, the ``ppdb-2.0-human-labels`` release), read from
``ppdb/ppdb2.0_human_labels/`` under the data root:

- ``ppdb-sample.tsv``: pairs sampled uniformly over PPDB's syntactic categories and stratified
  over paraphrase probability (the headline number, the table's PPDB column);
- ``wiki-sample.tsv``: every paraphrase of 100 phrases drawn from Wikipedia (reported beside it).

Format (TAB-separated, no header): mean human score (1–5), syntactic category, phrase,
paraphrase, the individual scores (comma-separated). Gold is the mean score. As in the paper,
pairs whose two sides are both single words are dropped (``single_word_pairs`` counts them):
a pair is kept when at least one side has two or more words.
"""

from __future__ import annotations

import numpy as np

from pipeline.errors import InputError
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.numbered_lines import number_in, tab_rows
from pipeline.tasks.sts import Pairs, row_ids, scored_pairs, spearman
from pipeline.tasks.vectors import paired_cosine

FOLDER = "ppdb/ppdb2.0_human_labels"
FILES = {"ppdb-sample": f"{FOLDER}/ppdb-sample.tsv", "wiki-sample": f"{FOLDER}/wiki-sample.tsv"}
HEADLINE = "ppdb-sample"
FIELDS = 5


def is_multi_word(phrase: str, paraphrase: str) -> bool:
    """The paper's filter: keep a pair unless both sides are single words."""
    return len(phrase.split()) > 1 or len(paraphrase.split()) > 1


def read_pairs(path) -> tuple[Pairs, int]:
    """The multi-word pairs of one human-labels file (each with its 0-based line, the scoreboard's item id),
    and how many single-word pairs were dropped."""
    left, right, scores, rows = [], [], [], []
    dropped = 0
    for number, fields in tab_rows(path, FIELDS, "score, category, phrase, paraphrase, individual scores"):
        score = number_in(path, number, fields[0], 1.0, 5.0, "mean score")
        phrase, paraphrase = fields[2].strip(), fields[3].strip()
        if not phrase or not paraphrase:
            raise InputError(path, "empty phrase or paraphrase", where=f"line {number}")
        if not is_multi_word(phrase, paraphrase):
            dropped += 1
            continue
        left.append(phrase)
        right.append(paraphrase)
        scores.append(score)
        rows.append(number - 1)
    if len(scores) < 2:
        raise InputError(path, f"{len(scores)} multi-word pair(s); a correlation needs at least 2")
    return Pairs((left, right, scores), rows), dropped


def load(data: DataRoot) -> dict[str, tuple[Pairs, int]]:
    return {
        name: read_pairs(data.file(relative, f"PPDB 2.0 human labels ({name})")) for name, relative in FILES.items()
    }


def evaluate(encoder, sets: dict[str, tuple[Pairs, int]]) -> dict:
    texts = [t for (left, right, _), _ in sets.values() for t in (*left, *right)]
    vectors = encoder.encode(texts)
    scores, counts, dropped, items, offset = {}, {}, {}, {}, 0
    for name, (pairs, single) in sets.items():
        left, _, gold = pairs
        n = len(left)
        block = vectors[offset : offset + 2 * n]
        offset += 2 * n
        cosine = paired_cosine(block[:n], block[n:])
        scores[name] = spearman(cosine, np.asarray(gold))
        items[name] = scored_pairs(gold, cosine, row_ids(pairs))
        counts[name], dropped[name] = n, single
    return {
        "scores": scores,
        "n": counts,
        "single_word_pairs": dropped,
        "items": items,
        "headline": HEADLINE,
        "data": "PPDB 2.0 human paraphrase-quality judgements, pairs with a multi-word side",
    }
