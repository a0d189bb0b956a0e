"""The analogy questions BURT Table VII and ALBURT Table 5 print, each candidate with its score
(docs/stages/evaluate.md, ``analogy_examples``).

Both tables show sentence-level questions of the "positive-negative" (Negation) analogy set, A : B :: C : ?,
with two candidates each and a similarity score per candidate under each model (BURT §6.2: GloVe, USE,
BURT-base; ALBURT "Results and Analysis" (5): GloVe, SALBERT, ALBURT). The score is the analogy's own
(BURT §4.2: "maximizing the cosine similarity between the target ... embedding and the linear combination
of the given vectors"): ``cos(b - a + c, d)`` over L2-normalised embeddings, as :mod:`.analogy` scores every
question (:func:`pipeline.tasks.analogy.score_questions`, float64), each sentence embedded alone. The
sentences are the tables' as printed, in the package file ``analogy_examples.yaml`` (not the data root:
the released analogy files word these questions otherwise), so the task reads no data-root file.

Reported (scores x 100, as every evaluate metric is a percentage; the tables print them on a 0-1 scale):
``scores`` {candidate key: cosine x 100}, ``questions`` (each question's sentences, its candidates with
their scores and which is gold, ``right``: whether the gold candidate scores highest, strictly) and ``n``,
the number of questions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from pipeline.errors import InputError
from pipeline.tasks.analogy import score_questions
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.vectors import unit_rows

EXAMPLES = Path(__file__).with_name("analogy_examples.yaml")


@dataclass(frozen=True)
class Question:
    """One printed question: ``candidates`` are (key, sentence) pairs, the gold (bold) one first."""

    key: str
    tables: tuple[str, ...]
    a: str
    b: str
    c: str
    candidates: tuple[tuple[str, str], ...]


def read_questions(path: Path = EXAMPLES) -> list[Question]:
    """The questions of ``path`` (the package's ``analogy_examples.yaml``), each with at least two candidates
    and every key once; anything else is refused naming the file."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    entries = document.get("questions") if isinstance(document, dict) else None
    if not isinstance(entries, list) or not entries:
        raise InputError(path, "expected a 'questions' list")
    questions, keys = [], []
    for number, entry in enumerate(entries, 1):
        try:
            candidates = tuple((str(c["key"]), str(c["text"])) for c in entry["candidates"])
            question = Question(
                str(entry["key"]), tuple(entry["tables"]), str(entry["a"]), str(entry["b"]), str(entry["c"]), candidates
            )
        except (KeyError, TypeError) as exc:
            raise InputError(path, f"question {number}: needs key, tables, a, b, c and candidates ({exc})") from None
        if len(candidates) < 2:
            raise InputError(path, f"question {question.key}: needs at least two candidates, the gold one first")
        keys += [question.key, *(key for key, _ in candidates)]
        questions.append(question)
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise InputError(path, f"keys given twice: {', '.join(repeated)}")
    return questions


def load(data: DataRoot) -> list[Question]:
    """The printed questions; the data root holds none of them (the module docstring says why), so the
    package file is recorded as the task's input (its SHA-256 in the metrics' provenance)."""
    return read_questions(data.package_file(EXAMPLES))


def evaluate(encoder, questions: list[Question]) -> dict:
    strings = {text: i for i, text in enumerate(dict.fromkeys(t for q in questions for t in sentences(q)))}
    unit = unit_rows(encoder.encode(list(strings)))
    width = max(len(q.candidates) for q in questions)
    abc = np.array([[strings[q.a], strings[q.b], strings[q.c]] for q in questions], dtype=np.int64)
    candidates = np.array(
        [[strings[text] for _, text in q.candidates] + [-1] * (width - len(q.candidates)) for q in questions],
        dtype=np.int64,
    )
    scores = score_questions(unit, abc, candidates)
    result: dict = {"scores": {}, "questions": [], "n": len(questions)}
    for question, row in zip(questions, scores, strict=True):
        shown = [float(100 * score) for score in row[: len(question.candidates)]]
        result["scores"].update({key: score for (key, _), score in zip(question.candidates, shown, strict=True)})
        result["questions"].append(
            {
                "key": question.key,
                "tables": list(question.tables),
                "a": question.a,
                "b": question.b,
                "c": question.c,
                "candidates": [
                    {"key": key, "text": text, "score": score, "gold": index == 0}
                    for index, ((key, text), score) in enumerate(zip(question.candidates, shown, strict=True))
                ],
                "right": bool(shown[0] > max(shown[1:])),
            }
        )
    return result


def sentences(question: Question) -> list[str]:
    return [question.a, question.b, question.c, *(text for _, text in question.candidates)]
