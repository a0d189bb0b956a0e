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
the file and line; so does text that is not UTF-8, a line longer than 1 MiB (read with a bound,
:mod:`pipeline.tasks.bounded_lines`), a JSON string holding a lone surrogate (``\\ud800``), a CSV
quoted field that runs onto the next line (a stray quote) and, in an archive, a member that cannot be
read back (a bad CRC, corrupt or truncated data): the error names ``ARCHIVE.zip:MEMBER``
(docs/behaviour.md).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.archives import MEMBER_ERRORS, member_name, open_archive
from pipeline.errors import InputError, reading
from pipeline.tasks.bounded_lines import file_lines, json_line, text_lines

LABELS = ("entailment", "neutral", "contradiction")
NO_GOLD = "-"


@dataclass
class NLIPairs:
    premises: list[str] = field(default_factory=list)
    hypotheses: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    skipped: int = 0  # pairs without a gold label
    files: list[Path] = field(default_factory=list)
    # each pair's 0-based line in its file (a pair without a gold label skipped; a second file's lines
    # numbered on from the first's last pair): the scoreboard's item ids, unique where texts are not
    lines: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.labels)

    def ids(self) -> list[int]:
        """Each pair's id: its line where the readers recorded it, else its position (pairs built in code)."""
        return list(self.lines) if len(self.lines) == len(self) else list(range(len(self)))

    def extend(self, other: NLIPairs) -> None:
        start = max(self.ids(), default=-1) + 1
        lines = [start + i for i in other.ids()]
        self.lines = self.ids() + lines
        self.premises += other.premises
        self.hypotheses += other.hypotheses
        self.labels += other.labels
        self.skipped += other.skipped
        self.files += other.files

    def subset(self, rows) -> NLIPairs:
        """The pairs at ``rows`` (a held-out dev split, a sample)."""
        rows = list(rows)
        lines = self.ids()
        return NLIPairs(
            [self.premises[i] for i in rows],
            [self.hypotheses[i] for i in rows],
            [self.labels[i] for i in rows],
            files=list(self.files),
            lines=[lines[i] for i in rows],
        )


def _add(pairs: NLIPairs, path, where: str, premise, hypothesis, label, line: int) -> None:
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
    pairs.lines.append(line)


def read_jsonl(lines, path) -> NLIPairs:
    """Pairs of a JSON-lines source; ``lines``: ``(line number, text)`` (:mod:`pipeline.tasks.bounded_lines`)."""
    pairs = NLIPairs()
    for number, line in lines:
        if not line.strip():
            continue
        row = json_line(line, path, f"line {number}")
        if not isinstance(row, dict):
            raise InputError(path, "not a JSON object", where=f"line {number}")
        where = f"line {number}"
        _add(pairs, path, where, row.get("sentence1"), row.get("sentence2"), row.get("gold_label"), number - 1)
    return pairs


def _csv_records(lines, path, tab: bool):
    """``(line number, fields)`` of every non-blank CSV record of ``lines``, each on one line.

    An NLI row is one line: the official releases are JSON lines and TAB-separated text, one pair
    per line, and their sentences hold no line break. The ``.txt`` / ``.tsv`` releases are read as
    their own loaders read them, without quote processing (``csv.QUOTE_NONE``: a ``"`` is text). In
    a ``.csv`` export a quoted field may hold a comma (``"I like him, but ..."``, MultiNLI dev), so
    quotes are honoured, but a quoted field that runs onto the next line is a stray quote joining
    two rows into one premise: it stops naming the line where it opened, as does a field beyond
    csv's field limit (131,072 characters; an NLI sentence is under 1 KB).
    """
    reader = csv.reader((text for _, text in lines), **({"delimiter": "\t", "quoting": csv.QUOTE_NONE} if tab else {}))
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problem = (
                f"a field longer than {csv.field_size_limit():,} characters (csv's field limit; an NLI sentence is under 1 KB)"
                if "field limit" in str(exc)
                else f"not readable as {'TAB-separated text' if tab else 'CSV'}: {exc}"
            )
            raise InputError(path, problem, where=f"line {start}") from None
        if reader.line_num > start:
            raise InputError(
                path,
                f"a quoted field runs from line {start} to line {reader.line_num} (a stray '\"'?); "
                "NLI rows are one line each",
                where=f"line {start}",
            )
        if row:
            yield start, row
        start = reader.line_num + 1


def read_csv(lines, path, tab: bool = False) -> NLIPairs:
    """CSV with a header; ``tab``: the original releases' TAB-separated ``.txt`` (no quoting).
    ``lines``: ``(line number, text)`` (:mod:`pipeline.tasks.bounded_lines`)."""
    records = _csv_records(lines, path, tab)
    header = next(records, (1, []))[1]
    label_column = next((name for name in ("gold_label", "label") if name in header), None)
    if not {"sentence1", "sentence2"} <= set(header) or label_column is None:
        raise InputError(path, f"CSV header {header} lacks sentence1, sentence2 and label / gold_label", where="line 1")
    pairs = NLIPairs()
    for number, fields in records:
        where = f"line {number}"
        if len(fields) != len(header):
            raise InputError(path, f"expected {len(header)} fields, found {len(fields)}", where=where)
        row = dict(zip(header, fields))
        _add(pairs, path, where, row["sentence1"], row["sentence2"], row[label_column], number - 1)
    return pairs


def read_three_files(directory: Path, split: str) -> NLIPairs:
    paths = [directory / f"{name}.{split}" for name in ("s1", "s2", "labels")]
    columns = []
    for path in paths:
        if not path.is_file():
            raise InputError(path, f"missing file of the 3-file layout (s1.{split}, s2.{split}, labels.{split})")
        with reading(path):  # a file that cannot be opened; a bad byte or an overlong line names its line
            columns.append([text for _, text in file_lines(path)])
    if len({len(column) for column in columns}) != 1:
        counts = ", ".join(f"{p.name} {len(c)}" for p, c in zip(paths, columns))
        raise InputError(paths[2], f"the three files are not aligned ({counts} lines)")
    pairs = NLIPairs()
    for number, (premise, hypothesis, label) in enumerate(zip(*columns), 1):
        bad_text = not premise.strip() or not hypothesis.strip()
        where = paths[0 if not premise.strip() else 1] if bad_text else paths[2]
        try:
            _add(pairs, paths[2], f"line {number}", premise, hypothesis, label, number - 1)
        except InputError as exc:
            raise InputError(where, exc.message, where=f"line {number}") from exc
    pairs.files = paths
    return pairs


def read_archive(archive: Path, split: str) -> NLIPairs:
    bundle = open_archive(archive)
    with bundle:
        members = [name for name in bundle.namelist() if name.endswith(f"_{split}.jsonl")]
        if len(members) != 1:
            raise InputError(archive, f"expected one member *_{split}.jsonl, found {members or 'none'}")
        name = member_name(archive, members[0])
        try:
            with bundle.open(members[0]) as raw:
                return read_jsonl(text_lines(raw, name), name)
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
        with reading(path), open(path, "rb") as handle:  # bad bytes and overlong lines: bounded_lines
            lines = text_lines(handle, path)
            if path.suffix in (".csv", ".txt", ".tsv"):
                pairs = read_csv(lines, path, tab=path.suffix != ".csv")
            else:
                pairs = read_jsonl(lines, path)
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
