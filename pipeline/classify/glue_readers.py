"""Readers of the GLUE files (and of the other releases of the same data that a data root may hold).

Each reader returns :class:`~pipeline.classify.examples.Example` rows; a labelled split must
hold only the task's labels. Layouts (GLUE ``download_glue_data.py`` unless said otherwise):

- CoLA train/dev: no header, ``source, label, original mark, sentence``; test: ``index, sentence``.
- SST-2: header ``sentence, label``; test ``index, sentence``.
- MRPC: header ``Quality, #1 ID, #2 ID, #1 String, #2 String`` (with a BOM); test ``index, ...``.
- RTE, QNLI, MNLI, QQP: header with named columns (MNLI: ``sentence1, sentence2, gold_label``);
  MultiNLI's own CSV (``pairID, sentence1, sentence2, label``) is read too. Pairs whose gold label
  is ``-`` (no majority) are dropped, as GLUE does.
- STS-B: GLUE's TSV (``sentence1, sentence2, score`` by name) or the STS Benchmark original
  (no header: genre, file, year, id, score, s1, s2).
"""

from __future__ import annotations

from pathlib import Path

from pipeline.classify.examples import Example
from pipeline.classify.file_formats import TsvRows
from pipeline.errors import InputError

NO_GOLD_LABEL = "-"


def check_label(path: Path, labels: tuple[str, ...], value: str, where: str) -> str:
    value = value.strip()
    if value not in labels:
        raise InputError(path, f"label {value!r} is not one of the task's labels ({', '.join(labels)})", where=where)
    return value


def _first_present(rows: TsvRows, names: tuple[str, ...]) -> str | None:
    return next((name for name in names if rows.has(name)), None)


def read_cola(path: Path, labels: tuple[str, ...]) -> list[Example]:
    if not Path(path).is_file():
        raise InputError(path, "file not found")
    with open(path, "rb") as handle:  # the first bytes only: the layout, test (header) or train/dev
        first = handle.read(5)
    if first.startswith(b"index"):
        return [Example(id=get("index"), text_a=get("sentence")) for _, get in TsvRows(path, header=True)]
    return [
        Example(id=str(number - 1), text_a=get(3), label=check_label(path, labels, get(1), f"line {number}"))
        for number, get in TsvRows(path, header=False)
    ]


def read_named(
    path: Path,
    labels: tuple[str, ...],
    text_a: tuple[str, ...],
    text_b: tuple[str, ...] | None,
    label: tuple[str, ...],
    ids: tuple[str, ...] = ("index", "id", "pairID"),
) -> list[Example]:
    """A TSV with a header; each field is the first of its candidate column names the header has.

    A file without any of the label columns is an unlabelled test split; ``-`` gold labels are dropped.
    """
    rows = TsvRows(
        path, header=True, delimiter="," if Path(path).suffix == ".csv" else "\t", quoted=Path(path).suffix == ".csv"
    )
    a = _first_present(rows, text_a) or text_a[0]
    b = (_first_present(rows, text_b) or text_b[0]) if text_b else None
    gold = _first_present(rows, label)
    key = _first_present(rows, ids)
    examples = []
    for number, get in rows:
        value = get(gold).strip() if gold else None
        if value == NO_GOLD_LABEL:
            continue
        examples.append(
            Example(
                id=get(key) if key else str(len(examples)),
                text_a=get(a),
                text_b=get(b) if b else None,
                label=check_label(path, labels, value, f"line {number}") if gold else None,
            )
        )
    return examples


def read_sst2(path, labels):
    return read_named(path, labels, ("sentence",), None, ("label",))


def read_mrpc(path, labels):
    return read_named(path, labels, ("#1 String",), ("#2 String",), ("Quality",), ids=("index",))


def read_rte(path, labels):
    return read_named(path, labels, ("sentence1",), ("sentence2",), ("label",))


def read_qnli(path, labels):
    return read_named(path, labels, ("question",), ("sentence",), ("label",))


def read_mnli(path, labels):
    return read_named(path, labels, ("sentence1",), ("sentence2",), ("gold_label", "label"))


def read_qqp(path, labels):
    return read_named(path, labels, ("question1",), ("question2",), ("is_duplicate",))


def read_stsb(path: Path, labels=None) -> list[Example]:
    if Path(path).suffix == ".tsv":  # GLUE's STS-B
        rows = TsvRows(path, header=True)
        scored = rows.has("score")
        return [
            Example(
                id=get("index"),
                text_a=get("sentence1"),
                text_b=get("sentence2"),
                label=_score(path, get("score"), number) if scored else None,
            )
            for number, get in rows
        ]
    return [
        Example(id=str(index), text_a=get(5), text_b=get(6), label=_score(path, get(4), number))
        for index, (number, get) in enumerate(TsvRows(path, header=False))
    ]


def _score(path: Path, text: str, number: int) -> float:
    try:
        score = float(text)
    except ValueError:
        raise InputError(path, f"score {text!r} is not a number", where=f"line {number}") from None
    if not 0.0 <= score <= 5.0:
        raise InputError(path, f"score {score} is outside the STS-B range 0-5", where=f"line {number}")
    return score
