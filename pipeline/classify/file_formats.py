"""The file formats of the GLUE and CLUE releases: tab-separated text, CSV, JSON lines, JSON.

Lines are split on ``\\n`` only, never with ``str.splitlines()``: IFLYTEK's texts contain
U+2028 (a line separator to ``splitlines``), and CSL's files have CRLF ends (the ``\\r`` is
stripped). A byte-order mark (GLUE MRPC) is dropped. GLUE TSVs are read without quote
processing (MRPC and SST-2 have unbalanced ``"`` inside fields), as GLUE's own code reads them;
a CSV (MultiNLI dev) is read a record per line, a quote left open at a line's end refused.
Lines are read with a bound (1 MiB, :mod:`pipeline.tasks.bounded_lines`).
Every problem raises :class:`~pipeline.errors.InputError` naming the file and the line.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from pipeline.errors import InputError
from pipeline.tasks.bounded_lines import check_encodable, file_lines, json_line


def text_of(path: Path) -> str:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text: {exc}") from exc


def numbered_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, line) of every non-blank line, ``\\r`` stripped; each line read with a bound
    (:mod:`pipeline.tasks.bounded_lines`: a line over 1 MiB stops the reader before it is held)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    lines = []
    for number, line in file_lines(path):
        if number == 1:
            line = line.removeprefix("\ufeff")  # the byte-order mark of GLUE's MRPC
        if line.strip():
            lines.append((number, line))
    return lines


def csv_fields(path: Path, number: int, line: str, delimiter: str) -> list[str]:
    """The fields of one CSV line. A record is one line (the MultiNLI / SNLI CSV exports hold no line
    break in a field): a quote left open at the end of the line is a stray quote, refused, as is a
    field over csv's field limit (131,072 characters)."""
    try:
        return next(csv.reader([line], delimiter=delimiter, strict=True))
    except csv.Error as exc:
        problem = (
            "a quoted field does not close on its line (a stray '\"'?); a CSV row is one line"
            if "end of data" in str(exc)
            else f"not readable as CSV: {exc}"
        )
        raise InputError(path, problem, where=f"line {number}") from None


class TsvRows:
    """Rows of a delimited file, fields looked up by header name (or by position without a header)."""

    def __init__(self, path: Path, header: bool, delimiter: str = "\t", quoted: bool = False):
        self.path = Path(path)
        lines = numbered_lines(self.path)
        if quoted:  # CSV with quoted fields (MultiNLI dev): the csv module, one record per line
            self.rows = [(number, csv_fields(self.path, number, line, delimiter)) for number, line in lines]
        else:
            self.rows = [(number, line.split(delimiter)) for number, line in lines]
        self.columns: dict[str, int] = {}
        if header:
            if not self.rows:
                raise InputError(self.path, "empty file (no header)")
            _, names = self.rows.pop(0)
            self.columns = {name.strip(): index for index, name in enumerate(names)}

    def index(self, column: str | int) -> int:
        if isinstance(column, int):
            return column
        if column not in self.columns:
            raise InputError(
                self.path, f"no column {column!r} in the header ({', '.join(self.columns)})", where="line 1"
            )
        return self.columns[column]

    def has(self, column: str) -> bool:
        return column in self.columns

    def __iter__(self):
        """(line number, getter) per row; ``getter(column)`` fails naming the line when the row is short."""
        for number, fields in self.rows:

            def get(column, fields=fields, number=number):
                index = self.index(column)
                if index >= len(fields):
                    raise InputError(
                        self.path, f"{len(fields)} fields, expected at least {index + 1}", where=f"line {number}"
                    )
                return fields[index]

            yield number, get


def json_lines(path: Path) -> list[tuple[int, dict]]:
    """(line number, object) of a JSON-lines file."""
    rows = []
    for number, line in numbered_lines(path):
        value = json_line(line, path, f"line {number}")  # a lone surrogate (\\ud800) too
        if not isinstance(value, dict):
            raise InputError(path, f"expected a JSON object, found {type(value).__name__}", where=f"line {number}")
        rows.append((number, value))
    return rows


def json_document(path: Path):
    text = text_of(path)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not JSON: {exc.msg}", where=f"line {exc.lineno}") from exc
    except (RecursionError, ValueError):  # nested too deeply; an integer beyond Python's digit limit
        raise InputError(path, "not JSON this reader takes: nested too deeply or a number too long") from None
    if "\\u" in text:  # a lone surrogate (JSON "\ud800") can only come from an escape
        check_encodable(json.dumps(value, ensure_ascii=False), path, None)
    return value


def field(path: Path, row: dict, key: str, number: int | str):
    """A required key of a JSON object."""
    if key not in row:
        raise InputError(path, f"missing key {key!r}", where=f"line {number}" if isinstance(number, int) else number)
    return row[key]
