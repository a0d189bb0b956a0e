"""Lines of untrusted input read with a bound: a line longer than :data:`MAX_LINE_BYTES` stops the
reader before it is held in memory (docs/behaviour.md, "Bad input").

Python's own line iteration (``for line in handle``, ``readline()``, ``read_text()``) holds a whole
line, however long: a 1 MB ``.gz`` that decompresses to one 1 GB line took 2.1 GB before the
first check ran. Every line-oriented reader of a data file (NLI, PPDB, GLUE / CLUE, the
evaluation sets) reads through :func:`bounded_lines` instead, which asks for at most the bound
plus one byte per line and stops with an :class:`~pipeline.errors.InputError` naming the file and
the line as soon as a line is longer.

The bound, 1 MiB, is far above any line of the data this project reads (the longest in the real
GLUE / CLUE / NLI / PPDB releases is 17 KB, a Chinese FAQ answer; an NLI sentence is under 1 KB).

Text decoded from JSON ``\\uD800``-style escapes can hold lone surrogates, which are valid in a
Python string but cannot be encoded to UTF-8 again (a tokenizer, a Parquet or JSON writer raises
deep inside a stage): :func:`check_encodable` refuses them where the line is read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from pipeline.errors import InputError

MAX_LINE_BYTES = 1 << 20


def bounded_lines(handle, name, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line with its ending)`` of a binary stream, each at most ``limit`` bytes
    (the ending not counted); a longer line raises before more than ``limit + 2`` bytes of it are read."""
    number = 0
    while True:
        raw = handle.readline(limit + 2)  # room for the content, "\r" and "\n"
        if not raw:
            return
        number += 1
        if len(raw.rstrip(b"\r\n")) > limit:
            raise InputError(
                name, f"line longer than {limit:,} bytes; no line of this format is that long", where=f"line {number}"
            )
        yield number, raw


def text_lines(handle, name, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, UTF-8 text with its line ending)`` of a binary stream, bounded as :func:`bounded_lines`;
    a line that is not UTF-8 raises naming ``name`` and the line."""
    for number, raw in bounded_lines(handle, name, limit):
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                name,
                f"not UTF-8 text (invalid UTF-8 byte {raw[exc.start]:#04x} at column {exc.start + 1})",
                where=f"line {number}",
            ) from None


def file_lines(path, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, text without its line ending)`` of every line of the file ``path``."""
    with open(path, "rb") as handle:
        for number, text in text_lines(handle, path, limit):
            yield number, text.rstrip("\r\n")


def check_encodable(text: str, name, where: str | None) -> str:
    """``text`` unchanged, or an :class:`InputError` when it holds a lone surrogate (from a JSON
    ``\\ud800`` escape): such a string cannot be written as UTF-8 by anything downstream."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        raise InputError(
            name,
            f"text holds a lone surrogate \\u{code:04x} (a JSON escape that is half of a UTF-16 pair; not valid Unicode)",
            where=where,
        ) from None
    return text


def json_line(text: str, name, where: str):
    """One JSON value of a JSON-lines file, its strings checked by :func:`check_encodable`."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(name, f"not JSON: {exc.msg}", where=where) from None
    except (RecursionError, ValueError):  # nested too deeply; an integer beyond Python's digit limit
        raise InputError(
            name, "not JSON this reader takes: nested too deeply or a number too long", where=where
        ) from None
    if "\\u" in text:  # a surrogate can only come from an escape
        check_encodable(json.dumps(value, ensure_ascii=False), name, where)
    return value
