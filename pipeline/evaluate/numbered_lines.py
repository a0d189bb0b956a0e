"""A data file as numbered UTF-8 lines, so that a bad byte is reported with its line.

Python's text mode reports an undecodable byte by offset, far from anything a reader of the
file can find; reading bytes and decoding line by line names the line instead, through the
project's one error type (:class:`~pipeline.errors.InputError`).
"""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.errors import InputError


def numbered_lines(path) -> Iterator[tuple[int, str]]:
    """``(line number, text without its line ending)`` for every line of ``path`` (1-based)."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    path,
                    f"not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1})",
                    where=f"line {number}",
                ) from exc
            yield number, text.rstrip("\r\n")
