"""NLI sentence pairs for training the BiLSTM encoders (paper 004 §2.2: SNLI, 3 labels).

Two layouts (``shared/data/SOURCES.md``):

- CSV with a header holding ``sentence1``, ``sentence2`` and ``label`` (the SNLI / MultiNLI
  ``.csv`` exports, e.g. ``snli_1.0_dev.csv``, ``multinli_1.0_dev_matched.csv``), or the
  TAB-separated ``.txt`` of the original SNLI / MultiNLI releases (``snli_1.0_train.txt``), whose
  label column is ``gold_label``;
- InferSent / SentEval's three aligned files ``s1.<split>``, ``s2.<split>``, ``labels.<split>``,
  named by the path of the ``s1`` file.

Pairs without a gold label (``-``) are dropped and counted; any other label outside
entailment / neutral / contradiction stops with an :class:`~pipeline.errors.InputError` naming
the file and the line. (The fine-tuning stage has its own NLI readers; the two should be merged.)
"""

from __future__ import annotations

import csv
import logging
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.errors import InputError

log = logging.getLogger("pipeline.bilstm")

LABELS = ("entailment", "neutral", "contradiction")
NO_GOLD = "-"


@dataclass
class Pairs:
    premises: list[str] = field(default_factory=list)
    hypotheses: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)  # index into LABELS
    dropped: int = 0  # pairs without a gold label

    def __len__(self) -> int:
        return len(self.labels)

    def extend(self, other: Pairs) -> None:
        self.premises += other.premises
        self.hypotheses += other.hypotheses
        self.labels += other.labels
        self.dropped += other.dropped

    def subset(self, rows) -> Pairs:
        rows = list(rows)
        return Pairs(
            [self.premises[i] for i in rows], [self.hypotheses[i] for i in rows], [self.labels[i] for i in rows]
        )


def _add(pairs: Pairs, path: Path, number: int, premise: str, hypothesis: str, label: str) -> None:
    label = label.strip()
    if label == NO_GOLD:
        pairs.dropped += 1
        return
    if label not in LABELS:
        raise InputError(
            path, f"label {label!r} is not one of {', '.join(LABELS)} (or - for no gold label)", where=f"line {number}"
        )
    pairs.premises.append(premise.strip())
    pairs.hypotheses.append(hypothesis.strip())
    pairs.labels.append(LABELS.index(label))


def read_csv(path: Path) -> Pairs:
    pairs = Pairs()
    tab = path.suffix in (".txt", ".tsv")
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, **({"delimiter": "\t", "quoting": csv.QUOTE_NONE} if tab else {}))
        label = "gold_label" if "gold_label" in (reader.fieldnames or ()) else "label"
        missing = {"sentence1", "sentence2", label} - set(reader.fieldnames or ())
        if missing:
            raise InputError(path, f"CSV header lacks {', '.join(sorted(missing))}", where="line 1")
        for row in reader:
            if None in row or any(row[key] is None for key in ("sentence1", "sentence2", label)):
                raise InputError(path, "wrong number of fields", where=f"line {reader.line_num}")
            _add(pairs, path, reader.line_num, row["sentence1"], row["sentence2"], row[label])
    return pairs


def read_three_files(s1: Path) -> Pairs:
    split = s1.name.removeprefix("s1.")
    paths = [s1, s1.with_name(f"s2.{split}"), s1.with_name(f"labels.{split}")]
    columns = []
    for path in paths:
        if not path.is_file():
            raise InputError(path, f"missing file of the s1 / s2 / labels layout beside {s1.name}")
        columns.append(path.read_text(encoding="utf-8").rstrip("\n").split("\n"))
    if len({len(column) for column in columns}) != 1:
        raise InputError(
            paths[2], f"line counts differ: s1 {len(columns[0])}, s2 {len(columns[1])}, labels {len(columns[2])}"
        )
    pairs = Pairs()
    for number, (premise, hypothesis, label) in enumerate(zip(*columns), 1):
        _add(pairs, paths[2], number, premise, hypothesis, label)
    return pairs


def read(path) -> Pairs:
    """Pairs of one file (CSV, or the ``s1.<split>`` of the three-file layout)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "NLI file not found")
    pairs = read_three_files(path) if path.name.startswith("s1.") else read_csv(path)
    if not len(pairs):
        raise InputError(path, "no labelled NLI pairs")
    log.info("%s: %d pairs (%d without a gold label dropped)", path, len(pairs), pairs.dropped)
    return pairs


def read_all(paths) -> Pairs:
    pairs = Pairs()
    for path in paths:
        pairs.extend(read(path))
    return pairs
