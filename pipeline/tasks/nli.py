"""NLI sentence pairs (BURT twin §3.1: SNLI and MultiNLI merged) from the official files.

``--nli`` names one source:

- an official jsonl file (``snli_1.0_<split>.jsonl``, ``multinli_1.0_<split>.jsonl``): fields
  ``sentence1``, ``sentence2``, ``gold_label``;
- a CSV file with a header holding ``sentence1``, ``sentence2`` and ``label`` or ``gold_label``
  (the MultiNLI / SNLI CSV exports, ``pairID,sentence1,sentence2,label``), or the TAB-separated
  ``.txt`` of the original releases (``snli_1.0_train.txt``, label column ``gold_label``);
- ``DIR:SPLIT``, a directory in the InferSent / SentEval 3-file layout (``s1.SPLIT``,
  ``s2.SPLIT``, ``labels.SPLIT``, one item per line, aligned);
- ``ARCHIVE.zip:SPLIT``, the official ``snli_1.0.zip`` / ``multinli_1.0.zip`` as downloaded: the
  member ``*_SPLIT.jsonl`` is read without unpacking.

Labels are ``entailment`` / ``neutral`` / ``contradiction`` (ids 0, 1, 2). ``-`` (no gold label:
the annotators did not agree) is skipped and counted, as every NLI paper does. Any other label,
a missing field or misaligned files stop with an :class:`~pipeline.errors.InputError` naming
the file and line; so does text that is not UTF-8, and, in an archive, a member that cannot be
read back (a bad CRC, corrupt or truncated data): the error names ``ARCHIVE.zip:MEMBER``
(docs/behaviour.md).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.archives import MEMBER_ERRORS, member_name, open_archive
from pipeline.errors import InputError, reading

LABELS = ("entailment", "neutral", "contradiction")
NO_GOLD = "-"


@dataclass
class NLIPairs:
    premises: list[str] = field(default_factory=list)
    hypotheses: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    skipped: int = 0  # pairs without a gold label
    files: list[Path] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.labels)

    def extend(self, other: NLIPairs) -> None:
        self.premises += other.premises
        self.hypotheses += other.hypotheses
        self.labels += other.labels
        self.skipped += other.skipped
        self.files += other.files

    def subset(self, rows) -> NLIPairs:
        """The pairs at ``rows`` (a held-out dev split, a sample)."""
        rows = list(rows)
        return NLIPairs(
            [self.premises[i] for i in rows],
            [self.hypotheses[i] for i in rows],
            [self.labels[i] for i in rows],
            files=list(self.files),
        )


def _add(pairs: NLIPairs, path, where: str, premise, hypothesis, label) -> None:
    if not isinstance(label, str):
        raise InputError(path, f"missing or non-text label {label!r}", where=where)
    label = label.strip()
    if label == NO_GOLD:
        pairs.skipped += 1
        return
    if label not in LABELS:
        raise InputError(path, f"label {label!r} is not one of {', '.join(LABELS)} (or '-')", where=where)
    for name, text in (("premise", premise), ("hypothesis", hypothesis)):
        if not isinstance(text, str) or not text.strip():
            raise InputError(path, f"empty or missing {name}", where=where)
    pairs.premises.append(premise.strip())
    pairs.hypotheses.append(hypothesis.strip())
    pairs.labels.append(LABELS.index(label))


def read_jsonl(lines, path) -> NLIPairs:
    pairs = NLIPairs()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not a JSON object: {exc.msg}", where=f"line {number}") from exc
        except (RecursionError, ValueError):  # nested too deeply; an integer beyond Python's digit limit
            raise InputError(
                path, "not an NLI pair: JSON nested too deeply or a number too long", where=f"line {number}"
            ) from None
        if not isinstance(row, dict):
            raise InputError(path, "not a JSON object", where=f"line {number}")
        _add(pairs, path, f"line {number}", row.get("sentence1"), row.get("sentence2"), row.get("gold_label"))
    return pairs


def read_csv(handle, path, tab: bool = False) -> NLIPairs:
    """CSV with a header; ``tab``: the original releases' TAB-separated ``.txt`` (no quoting)."""
    reader = csv.DictReader(handle, **({"delimiter": "\t", "quoting": csv.QUOTE_NONE} if tab else {}))
    header = reader.fieldnames or []
    label_column = next((name for name in ("gold_label", "label") if name in header), None)
    if not {"sentence1", "sentence2"} <= set(header) or label_column is None:
        raise InputError(path, f"CSV header {header} lacks sentence1, sentence2 and label / gold_label", where="line 1")
    pairs = NLIPairs()
    for row in reader:
        where = f"line {reader.line_num}"
        if None in row or any(value is None for value in row.values()):
            raise InputError(path, f"expected {len(header)} fields", where=where)
        _add(pairs, path, where, row["sentence1"], row["sentence2"], row[label_column])
    return pairs


def read_three_files(directory: Path, split: str) -> NLIPairs:
    paths = [directory / f"{name}.{split}" for name in ("s1", "s2", "labels")]
    columns = []
    for path in paths:
        if not path.is_file():
            raise InputError(path, f"missing file of the 3-file layout (s1.{split}, s2.{split}, labels.{split})")
        with reading(path):  # not UTF-8: the line of the first bad byte
            lines = path.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        columns.append(lines)
    if len({len(column) for column in columns}) != 1:
        counts = ", ".join(f"{p.name} {len(c)}" for p, c in zip(paths, columns))
        raise InputError(paths[2], f"the three files are not aligned ({counts} lines)")
    pairs = NLIPairs()
    for number, (premise, hypothesis, label) in enumerate(zip(*columns), 1):
        bad_text = not premise.strip() or not hypothesis.strip()
        where = paths[0 if not premise.strip() else 1] if bad_text else paths[2]
        try:
            _add(pairs, paths[2], f"line {number}", premise, hypothesis, label)
        except InputError as exc:
            raise InputError(where, exc.message, where=f"line {number}") from exc
    pairs.files = paths
    return pairs


def _utf8_lines(raw, name: str):
    """The lines of a binary stream as text; one that is not UTF-8 stops naming ``name`` and its line."""
    for number, line in enumerate(raw, 1):
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(name, "invalid UTF-8 (the file must be UTF-8 text)", where=f"line {number}") from None


def read_archive(archive: Path, split: str) -> NLIPairs:
    bundle = open_archive(archive)
    with bundle:
        members = [name for name in bundle.namelist() if name.endswith(f"_{split}.jsonl")]
        if len(members) != 1:
            raise InputError(archive, f"expected one member *_{split}.jsonl, found {members or 'none'}")
        name = member_name(archive, members[0])
        try:
            with bundle.open(members[0]) as raw:
                return read_jsonl(_utf8_lines(raw, name), name)
        except InputError:
            raise
        except MEMBER_ERRORS as exc:
            raise InputError(name, f"unreadable archive member (corrupt, truncated or encrypted): {exc}") from exc


def read_source(spec: str) -> NLIPairs:
    """One ``--nli`` value: a jsonl or CSV file, ``DIR:SPLIT`` or ``ARCHIVE.zip:SPLIT``."""
    path, split = Path(spec), None
    if not path.exists() and ":" in spec:
        head, split = spec.rsplit(":", 1)
        path = Path(head)
    if not path.exists():
        raise InputError(path, "NLI file or directory not found")
    if path.is_dir():
        if split is None:
            raise InputError(path, "a 3-file NLI directory needs its split: DIR:SPLIT (e.g. DIR:dev)")
        pairs = read_three_files(path, split)
    elif path.suffix == ".zip":
        if split is None:
            raise InputError(path, "an NLI archive needs its split: ARCHIVE.zip:SPLIT (e.g. :train, :dev_matched)")
        pairs = read_archive(path, split)
    else:
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                if path.suffix in (".csv", ".txt", ".tsv"):
                    pairs = read_csv(handle, path, tab=path.suffix != ".csv")
                else:
                    pairs = read_jsonl(handle, path)
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not UTF-8 text: {exc}") from exc
    if not pairs.labels:
        raise InputError(path, "no labelled NLI pairs")
    pairs.files = pairs.files or [path]
    return pairs


def read_sources(specs: list[str]) -> NLIPairs:
    """Every ``--nli`` source, merged in order (SNLI + MultiNLI as one data set)."""
    merged = NLIPairs()
    for spec in specs:
        merged.extend(read_source(spec))
    return merged
