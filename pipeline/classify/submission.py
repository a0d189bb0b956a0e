"""Test-set predictions in the formats the GLUE and CLUE servers take, and a check of those formats.

GLUE (gluebenchmark.com, the files of ``submission.zip``): ``<Task>.tsv`` with the header
``index<TAB>prediction`` and one row per test example in the test file's order, the prediction
being the label string (``entailment`` / ``not_entailment`` / ``neutral`` / ``contradiction``
for the NLI tasks, ``0`` / ``1`` for CoLA, SST-2, MRPC, QQP) or, for STS-B, the score with
three decimals. CLUE (cluebenchmarks.com, the CLUE 1.1 baselines' ``*_predict.json``): JSON
lines ``{"id": ..., "label": "..."}`` for classification, the option index as ``label`` for
C3 and ChID (FewCLUE's ``{"id", "answer"}`` for ChID), and one JSON object ``{question id:
answer text}`` for CMRC 2018 (and ``{blank tag: option index}`` for ChID in CLUE's own layout,
whose examples are its numbered blanks ``#idiomNNNNNN#``).
"""

from __future__ import annotations

import json
from pathlib import Path


def _id(value: str):
    return int(value) if value.isdigit() else value


def _chid_release(task, ids: list[str]) -> bool:
    """ChID in CLUE's own layout: its examples are the numbered blanks."""
    return task.name == "chid" and bool(ids) and str(ids[0]).startswith("#idiom")


def render(task, ids: list[str], predictions: list) -> str:
    if task.benchmark == "glue":
        if task.head == "regression":
            rows = [f"{i}\t{min(max(float(p), 0.0), 5.0):.3f}" for i, p in zip(ids, predictions)]
        else:
            rows = [f"{i}\t{p}" for i, p in zip(ids, predictions)]
        return "index\tprediction\n" + "".join(row + "\n" for row in rows)
    if task.head == "span" or _chid_release(task, ids):
        return json.dumps(dict(zip(ids, predictions)), ensure_ascii=False, indent=1) + "\n"
    key = "answer" if task.name == "chid" else "label"
    return "".join(json.dumps({"id": _id(i), key: p}, ensure_ascii=False) + "\n" for i, p in zip(ids, predictions))


def validate(task, path: Path, ids: list[str]) -> list[str]:
    """Problems of a submission file against the server's format (empty when it is valid)."""
    text = Path(path).read_text(encoding="utf-8")
    problems = []
    if task.benchmark == "glue":
        lines = text.split("\n")
        if lines[0] != "index\tprediction":
            problems.append(f"header {lines[0]!r}, expected 'index<TAB>prediction'")
        rows = [line.split("\t") for line in lines[1:] if line]
        if [row[0] for row in rows] != list(ids):
            problems.append("the index column is not the test file's indices in order")
        for row in rows:
            if len(row) != 2:
                problems.append(f"row {row!r} has {len(row)} fields")
            elif task.head == "regression":
                try:
                    float(row[1])
                except ValueError:
                    problems.append(f"prediction {row[1]!r} is not a number")
            elif row[1] not in task.labels:
                problems.append(f"prediction {row[1]!r} is not one of {task.labels}")
        return problems
    if task.head == "span" or _chid_release(task, ids):
        answers = json.loads(text)
        if not isinstance(answers, dict) or set(answers) != set(ids):
            problems.append("expected one JSON object mapping every question id to an answer")
        elif task.head == "choice" and not all(isinstance(answer, int) for answer in answers.values()):
            problems.append("every answer must be an option index")
        return problems
    key = "answer" if task.name == "chid" else "label"
    rows = [json.loads(line) for line in text.split("\n") if line]
    if [str(row.get("id")) for row in rows] != list(ids):
        problems.append("the ids are not the test file's ids in order")
    for row in rows:
        if set(row) != {"id", key}:
            problems.append(f"row {row} must have exactly the keys id and {key}")
        elif task.head == "classification" and row[key] not in task.labels:
            problems.append(f"label {row[key]!r} is not one of the task's labels")
        elif task.head == "choice" and not isinstance(row[key], int):
            problems.append(f"{key} {row[key]!r} is not an option index")
    return problems
