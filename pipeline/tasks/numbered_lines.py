"""A data file as numbered UTF-8 lines, so that a bad byte is reported with its line.

Python's text mode reports an undecodable byte by offset, far from anything a reader of the
file can find; reading bytes and decoding line by line names the line instead, through the
project's one error type (:class:`~pipeline.errors.InputError`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from pipeline.errors import InputError
from pipeline.tasks.bounded_lines import file_lines


def numbered_lines(path) -> Iterator[tuple[int, str]]:
    """``(line number, text without its line ending)`` for every line of ``path`` (1-based), each line
    read with a bound (:mod:`pipeline.tasks.bounded_lines`)."""
    return file_lines(path)


def tab_rows(path, fields: int, layout: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of every non-blank line of a TAB-separated file whose lines must
    hold exactly ``fields`` fields (``layout`` names them in the error)."""
    for number, line in numbered_lines(path):
        if not line.strip():
            continue
        row = line.split("\t")
        if len(row) != fields:
            raise InputError(
                path, f"expected {fields} TAB-separated fields ({layout}), found {len(row)}", where=f"line {number}"
            )
        yield number, row


def finite_number(path, number: int, text, what: str) -> float:
    """``text`` as a finite number, or the one-line error naming the line: ``nan`` and ``inf`` parse as
    floats but are no score (a NaN turns a whole correlation into null, an infinity outranks everything)."""
    try:
        value = float(text)
    except (TypeError, ValueError) as exc:
        raise InputError(path, f"{what} is not a number: {text!r}", where=f"line {number}") from exc
    if not math.isfinite(value):
        raise InputError(path, f"{what} is not a finite number: {text!r}", where=f"line {number}")
    return value


def number_in(path, number: int, text: str, low: float, high: float, what: str) -> float:
    """``text`` as a number within ``[low, high]``, or the one-line error naming the line."""
    value = finite_number(path, number, text, what)
    if not low <= value <= high:
        raise InputError(path, f"{what} {value} is outside the {low:g}-{high:g} scale", where=f"line {number}")
    return value
