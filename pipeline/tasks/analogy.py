"""Universal analogy (ULR §5.1.1 and App. A; ALBURT "Evaluation", "Further Analysis"; docs/method.md §5).

Each line of ``ulr_analogy/<semantic|syntactic>/<word|phrase|sentence>/<category>.txt`` is
``A, B, C`` and the candidates, gold ``D`` first (TAB-separated; surrounding spaces dropped).
Every sequence is embedded and L2-normalised; the answer is ``argmax_d cos(b - a + c, d)``
over the question's candidates. Scores are float64, and a gold candidate that only *ties*
with another counts as wrong (its rank is pessimistic: 1 + candidates scoring at least as
high); the ties are counted.

Reported, as percentages:

- per category: accuracy, ``n``, ties, the histogram of the gold's rank (ranks 1..#candidates);
- per level: ``sem`` and ``syn``, the accuracy pooled over the questions of the papers' table
  categories (semantic capital-common, capital-world, city-state, male-female; syntactic
  do-doing = present-participle, good-better = positive-comparative, positive-negative;
  word-level country-currency and the other word-only syntactic sets are reported per
  category but left out of the tables, as in the papers), and ``avg = (sem + syn) / 2``;
- ``overall``: the mean of the three level averages (the tables' last column);
- PPR / PNR (ALBURT, Table 6): among the questions answered correctly (P) / wrongly (N) at
  word level, the share answered correctly at phrase / sentence level. Line *i* of a phrase or
  sentence file is built from line *i* of the word file of the same category, so questions are
  matched by line. Per category for every such pair of files; the top-level ``ppr`` and ``pnr``
  pool the semantic table categories per level, as Table 6 does (its GloVe row, 0.0 with 40 %
  syntactic phrase accuracy, shows the syntactic sets are not in it).
- for the scoreboard's tests, per category each question's outcome, its line, the two pairs of its own
  file (``pairs``) and the two word pairs they wrap (``word_pair_ids``, the same ids at every level and in
  every category, named by ``word_pairs``; :func:`trace_word_pairs`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import numpy as np

from pipeline.errors import InputError
from pipeline.tasks.bounded_lines import file_lines
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.vectors import unit_rows

log = logging.getLogger("pipeline.tasks.analogy")

LEVELS = ("word", "phrase", "sentence")
KINDS = ("semantic", "syntactic")
TABLE_CATEGORIES = {
    "semantic": ("capital-common", "capital-world", "city-state", "male-female"),
    "syntactic": ("do-doing", "good-better", "positive-negative"),
}
FOLDER = "ulr_analogy"


@dataclass
class Category:
    """The questions of one file: ``rows[i] = [A, B, C, gold D, distractor, ...]``; ``lines[i]`` its 0-based
    line in the file (blank lines skipped), the question's id in the metrics."""

    kind: str
    level: str
    name: str
    rows: list[list[str]]
    lines: list[int] | None = None
    correct: np.ndarray = field(default=None, repr=False)

    @property
    def key(self) -> str:
        return f"{self.level}/{self.name}"

    @property
    def in_tables(self) -> bool:
        return self.name in TABLE_CATEGORIES[self.kind]


def read_category(path, kind: str, level: str) -> Category:
    rows, lines = [], []
    for number, line in file_lines(path):
        if not line.strip():
            continue
        fields = [text.strip() for text in line.split("\t")]
        if len(fields) < 5 or not all(fields):
            raise InputError(
                path,
                "expected A, B, C, gold D and at least one more candidate, TAB-separated, "
                f"none empty; found {len(fields)} field(s)",
                where=f"line {number}",
            )
        rows.append(fields)
        lines.append(number - 1)
    if not rows:
        raise InputError(path, "no analogy questions")
    return Category(kind, level, path.stem, rows, lines)


def load(data: DataRoot) -> list[Category]:
    """Every category file under ``ulr_analogy/``, in a fixed order (kind, level, name)."""
    base = data.folder(FOLDER, "universal analogy dataset")
    categories = []
    for kind in KINDS:
        for level in LEVELS:
            files = sorted((base / kind / level).glob("*.txt"))
            if not files:  # half a dataset would report a table row with gaps as a success
                raise InputError(
                    base / kind / level,
                    f"missing part of the analogy set: no {kind} {level}-level "
                    "category files (*.txt); every <semantic|syntactic>/<word|phrase|sentence> is needed",
                )
            for path in files:
                data.file(str(path.relative_to(data.root)))
                categories.append(read_category(path, kind, level))
    return categories


def score_questions(unit: np.ndarray, abc: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """cos(b - a + c, d) for each question's candidates; ``-inf`` where ``candidates`` is -1 (padding).

    ``unit`` holds unit-length (or zero) embeddings, float64; ``abc`` is ``(n, 3)`` and
    ``candidates`` ``(n, m)`` row indices into it. Works from the Gram matrix ``G`` of the
    sequences the questions use: ``q·d = G[b,d] - G[a,d] + G[c,d]`` and ``|q|² = G[a,a] + G[b,b]
    + G[c,c] - 2G[a,b] + 2G[b,c] - 2G[a,c]``, so no ``(n, m, dim)`` array is ever built. Equal
    candidate vectors still give bit-equal scores (a tie stays a tie); ``q = 0`` scores 0.
    """
    used, local = np.unique(np.concatenate([abc.ravel(), candidates[candidates >= 0]]), return_inverse=True)
    gram = unit[used] @ unit[used].T
    a, b, c = local[: abc.size].reshape(abc.shape).T
    d = np.zeros(candidates.shape, dtype=np.int64)
    d[candidates >= 0] = local[abc.size :]
    dot = gram[b[:, None], d] - gram[a[:, None], d] + gram[c[:, None], d]
    squared = gram[a, a] + gram[b, b] + gram[c, c] - 2 * gram[a, b] + 2 * gram[b, c] - 2 * gram[a, c]
    norm = np.sqrt(np.maximum(squared, 0.0))[:, None]
    scores = np.divide(dot, norm, out=np.zeros_like(dot), where=norm > 0)
    return np.where(candidates >= 0, scores, -np.inf)


def gold_first_ranks(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pessimistic rank of column 0 (the gold) in each row, and whether it ties another candidate."""
    gold = scores[:, :1]
    others = scores[:, 1:]
    return 1 + (others >= gold).sum(axis=1), (others == gold).any(axis=1)


def _percent(hits: np.ndarray) -> float | None:
    return 100.0 * float(np.mean(hits)) if len(hits) else None


def _pooled(categories: list[Category]) -> tuple[float | None, int]:
    hits = np.concatenate([c.correct for c in categories]) if categories else np.zeros(0, dtype=bool)
    return _percent(hits), len(hits)


def _transfer(word: np.ndarray, level: np.ndarray) -> tuple[float | None, float | None]:
    """(PPR, PNR) ×100 for aligned per-question correctness at word level and a higher level."""
    right, wrong = word, ~word
    ppr = 100.0 * float(np.sum(level & right)) / right.sum() if right.any() else None
    pnr = 100.0 * float(np.sum(level & wrong)) / wrong.sum() if wrong.any() else None
    return ppr, pnr


def _mean(values) -> float | None:
    values = list(values)
    return None if not values or any(v is None for v in values) else float(np.mean(values))


def question_pairs(rows: list[list[str]]) -> list[list[int]]:
    """For each question ``A, B, C, D, ...``, the ids of its two word pairs (A, B) and (C, D), numbered in
    order of first appearance in the file (case-insensitive). A category's questions are ordered pairs of a
    few word pairs, so its questions are clusters of pairs (docs/stages/report.md "The scoreboard")."""
    ids: dict[tuple[str, str], int] = {}
    pair = lambda a, b: ids.setdefault((a.casefold(), b.casefold()), len(ids))
    return [[pair(row[0], row[1]), pair(row[2], row[3])] for row in rows]


@dataclass(frozen=True)
class WordPairs:
    """Every question traced to the word pairs it is built from, the same ids at every level.

    ``words[i]`` is word pair i's two words; ``of_category[key]`` each question's two word-pair ids, for
    each category that could be traced; ``by_line[key]`` how many of a category's phrase or sentence pairs
    were placed by their line because their words named no single word pair."""

    words: list[list[str]]
    of_category: dict[str, list[list[int]]]
    by_line: dict[str, int]


def _tokens(text: str) -> str:
    """A text's words (and its other characters, one a token), casefolded, with a space either side, so
    that ``f" {word} " in _tokens(text)`` finds a whole word and never a part of one."""
    return " " + " ".join(re.findall(r"\w+|[^\w\s]", text.casefold())) + " "


def _named_pair(first: str, second: str, candidates: list[tuple[str, str, int]]) -> int | None:
    """The one word pair (a, b) whose a is a word of ``first`` and b a word of ``second``; None where none
    or several are."""
    first, second = _tokens(first), _tokens(second)
    found = {i for a, b, i in candidates if a in first and b in second}
    return found.pop() if len(found) == 1 else None


def trace_word_pairs(categories: list[Category]) -> WordPairs:
    """Each question's two word pairs as ids shared across levels and categories (ULR App. A.2: the phrase and
    sentence sets wrap the word-level pairs in templates, two variants a pair: "employed by the university
    of athens" and "hired by the university of athens" both stand for athens : greece).

    A word-level question's pairs are (A, B) and (C, D), one id per distinct pair of words (casefolded), so
    a pair found in two categories (capital-common's 23 are all capital-world's too) is one pair. A phrase
    or sentence pair (A', B') is the word pair (a, b) of the same category's word file with a a word of A'
    and b a word of B', where exactly one is; else the pair of the same line of the word file, from which
    the line is built (the files are aligned line by line), where the template changed the word: a typo
    ("lager" for larger), "not acceptable" for unacceptable, "cost" for increase. A category with neither
    (no word file of its name, or one of another length) is left out of ``of_category``."""
    ids: dict[tuple[str, str], int] = {}
    pair_id = lambda a, b: ids.setdefault((a.casefold(), b.casefold()), len(ids))
    of_category: dict[str, list[list[int]]] = {}
    word_files = {(c.kind, c.name): c for c in categories if c.level == "word"}
    for category in word_files.values():
        of_category[category.key] = [[pair_id(r[0], r[1]), pair_id(r[2], r[3])] for r in category.rows]
    words = {i: pair for pair, i in ids.items()}
    by_line: dict[str, int] = {}
    for category in categories:
        word = word_files.get((category.kind, category.name))
        if category.level == "word" or word is None:
            continue
        word_ids = of_category[word.key]
        candidates = [
            (f" {words[i][0]} ", f" {words[i][1]} ", i) for i in dict.fromkeys(j for q in word_ids for j in q)
        ]
        aligned = len(word.rows) == len(category.rows)
        named: dict[tuple[str, str], int | None] = {}  # each distinct (A', B') is looked up once
        traced, placed_by_line = [], 0
        for line, row in enumerate(category.rows):
            question = []
            for slot, (first, second) in enumerate(((row[0], row[1]), (row[2], row[3]))):
                if (first, second) not in named:
                    named[first, second] = _named_pair(first, second, candidates)
                found = named[first, second]
                if found is None and aligned:
                    found, placed_by_line = word_ids[line][slot], placed_by_line + 1
                question.append(found)
            if None in question:
                break
            traced.append(question)
        else:
            of_category[category.key] = traced
            by_line[category.key] = placed_by_line
    return WordPairs([list(words[i]) for i in range(len(words))], of_category, by_line)


def question_ids(category: Category) -> list[int]:
    """Each question's id: its line where read from a file, else its position (questions built in code)."""
    lines = category.lines
    return list(lines) if lines is not None and len(lines) == len(category.rows) else list(range(len(category.rows)))


def evaluate(encoder, categories: list[Category]) -> dict:
    strings = {text: i for i, text in enumerate(dict.fromkeys(t for c in categories for row in c.rows for t in row))}
    log.info(
        "analogy: %d questions in %d files, %d distinct sequences",
        sum(len(c.rows) for c in categories),
        len(categories),
        len(strings),
    )
    unit = unit_rows(encoder.encode(list(strings)))
    traced = trace_word_pairs(categories)

    results: dict[str, dict] = {}
    for category in categories:
        width = max(len(row) for row in category.rows) - 3
        ids = np.array(
            [[strings[text] for text in row] + [-1] * (width + 3 - len(row)) for row in category.rows], dtype=np.int64
        )
        abc, candidates = ids[:, :3], ids[:, 3:]
        ranks, ties = gold_first_ranks(score_questions(unit, abc, candidates))
        category.correct = ranks == 1
        results[category.key] = {
            "type": category.kind,
            "in_tables": category.in_tables,
            "candidates": int(width),
            "accuracy": _percent(category.correct),
            "n": len(category.rows),
            "ties": int(ties.sum()),
            "rank_histogram": np.bincount(ranks, minlength=width + 1)[1:].tolist(),
            # each question right (1) or not (0), in file order: the scoreboard's paired bootstrap
            "correct": "".join("1" if hit else "0" for hit in category.correct),
            # each question's id, its line in the file: the scoreboard counts a question once
            "ids": question_ids(category),
            # each question's word pairs (A, B) and (C, D): the scoreboard resamples pairs, not questions
            "pairs": question_pairs(category.rows),
            "ppr": None,
            "pnr": None,
        }
        if category.key in traced.of_category:
            # each question's word pairs as ids shared by every level and category (``word_pairs`` names
            # them): the scoreboard resamples a word pair with every question built from it, at any level
            results[category.key]["word_pair_ids"] = traced.of_category[category.key]
            if category.level != "word":
                results[category.key]["word_pairs_by_line"] = traced.by_line[category.key]

    by_key = {c.key: c for c in categories}
    aligned: dict[str, np.ndarray] = {}  # phrase/sentence key -> word-level correctness, line by line
    for category in categories:
        word = by_key.get(f"word/{category.name}")
        if category.level == "word" or word is None:
            continue
        if len(word.rows) != len(category.rows):
            log.warning(
                "%s: %d questions vs %d at word level, no PPR/PNR", category.key, len(category.rows), len(word.rows)
            )
            continue
        aligned[category.key] = word.correct
        ppr, pnr = _transfer(word.correct, category.correct)
        results[category.key].update(ppr=ppr, pnr=pnr)

    levels = {}
    ppr, pnr = {}, {}
    for level in LEVELS:
        entry = {}
        for kind, short in (("semantic", "sem"), ("syntactic", "syn")):
            chosen = [c for c in categories if c.level == level and c.kind == kind and c.in_tables]
            entry[short], entry[f"{short}_n"] = _pooled(chosen)
        entry["avg"] = _mean([entry["sem"], entry["syn"]])
        levels[level] = entry
        if level != "word":
            pairs = [
                (aligned[c.key], c.correct)
                for c in categories
                if c.level == level and c.kind == "semantic" and c.in_tables and c.key in aligned
            ]
            ppr[level], pnr[level] = (
                _transfer(np.concatenate([w for w, _ in pairs]), np.concatenate([h for _, h in pairs]))
                if pairs
                else (None, None)
            )
    return {
        "overall": _mean(levels[level]["avg"] for level in LEVELS),
        "levels": levels,
        "categories": results,
        "ties": int(sum(r["ties"] for r in results.values())),
        "ppr": ppr,
        "pnr": pnr,
        "questions": int(sum(r["n"] for r in results.values())),
        "sequences": len(strings),
        "word_pairs": traced.words,
    }
