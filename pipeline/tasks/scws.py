"""SCWS, Stanford's Contextual Word Similarities (Huang et al., ACL 2012; BURT twin §4.3, Table 3
"SCWS"; docs/method.md §5): Spearman ×100 of cosine vs the mean human rating.

SCWS is not redistributed with this project. Get ``SCWS.zip`` from
http://www-nlp.stanford.edu/~ehhuang/SCWS.zip and put its ``ratings.txt`` at
``scws/ratings.txt`` under the data root; the workflow evaluates the task only where that file
exists (``SKIPPED_TASKS`` in ``workflow/rules/functions/evaluate.smk``), and the stage stops with this explanation otherwise.

``ratings.txt`` (2,003 pairs): TAB-separated id, word 1, its POS, word 2, its POS, context 1,
context 2 (the target word marked ``<b> word </b>``), the mean rating (0–10), then the ten
individual ratings. As for the paper's other word sets, each word is embedded on its own
(contexts are read and checked, not used), and the pairs go through the word-similarity scorer
(:func:`pipeline.tasks.wordsim.evaluate`): a pair with an out-of-vocabulary word of a
bag-of-vectors baseline is skipped and counted.
"""

from __future__ import annotations

from pipeline.errors import InputError
from pipeline.tasks import wordsim
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.numbered_lines import number_in, tab_rows

RATINGS = "scws/ratings.txt"
URL = "http://www-nlp.stanford.edu/~ehhuang/SCWS.zip"
NAME = "SCWS"
RATERS = 10
FIELDS = 8 + RATERS


def read_ratings(path) -> wordsim.Pairs:
    left, right, scores, rows = [], [], [], []
    layout = f"id, word1, POS1, word2, POS2, context1, context2, mean rating, {RATERS} ratings"
    for number, fields in tab_rows(path, FIELDS, layout):
        rating = number_in(path, number, fields[7], 0.0, 10.0, "mean rating")
        for position, word in ((1, fields[1]), (3, fields[3])):
            if not word.strip():
                raise InputError(path, f"empty word in field {position + 1}", where=f"line {number}")
        left.append(fields[1].strip())
        right.append(fields[3].strip())
        scores.append(rating)
        rows.append(number - 1)
    if len(scores) < 2:
        raise InputError(path, f"{len(scores)} rated pair(s); a correlation needs at least 2")
    return wordsim.Pairs((left, right, scores), rows)


def load(data: DataRoot) -> dict[str, wordsim.Pairs]:
    path = data.root / RATINGS
    if not path.is_file():
        raise InputError(
            path,
            f"SCWS is absent: it is not redistributed; download {URL} and put its ratings.txt "
            f"at {RATINGS} under the data root",
        )
    return {NAME: read_ratings(data.file(RATINGS, "SCWS ratings"))}


def evaluate(encoder, sets: dict[str, wordsim.Pairs]) -> dict:
    return {**wordsim.evaluate(encoder, sets), "data": "SCWS ratings.txt (Huang et al. 2012), words without context"}
