"""Small files (a lock, a record, a table index, a measured-floor file) read as small files.

A file the pipeline reads whole, with ``Path.read_text``, trusts that it is a regular file of a
sensible size: a named pipe (FIFO) in its place blocks the read forever, and a link to ``/dev/zero``
or to a huge file fills the memory before anything can be checked. :func:`read_small_text` opens
the file without blocking (``O_NONBLOCK``: opening a FIFO for reading returns at once), asks the
opened descriptor what it is (``fstat``, so a file swapped in between a check and the open is still
the one checked), refuses anything but a regular file, and reads at most ``limit + 1`` bytes, so a
file that grows past its limit while read is refused too. Each refusal is one
:class:`~pipeline.errors.InputError` naming the file (docs/behaviour.md: one line, exit 2).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pipeline.errors import InputError, translate

KIB = 1024
MIB = 1024 * KIB

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_MISSING = object()


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _size(limit: int) -> str:
    return f"{limit // MIB:,} MiB" if limit % MIB == 0 else f"{limit:,} bytes"


def read_small_bytes(path, limit: int, what: str, missing=_MISSING) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes (``what`` it is, for the error);
    ``missing`` where there is no such file, if given (else that too is an error)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if missing is not _MISSING:
            return missing
        raise InputError(path, f"not found (expected {what})") from None
    except OSError as exc:
        raise translate(exc, path) from None
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(path, f"is {_kind(mode)}, not a regular file: {what} is read only from a file")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(descriptor, min(left, MIB))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise translate(exc, path) from None
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    if len(data) > limit:
        raise InputError(path, f"larger than {_size(limit)}: too large for {what}")
    return data


def read_small_text(path, limit: int, what: str, missing=_MISSING) -> str:
    """The UTF-8 text of ``path``, read as :func:`read_small_bytes` reads it (``missing``: the same)."""
    data = read_small_bytes(Path(path), limit, what, missing)
    if data is missing:
        return missing
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(path, "invalid UTF-8 (the file must be UTF-8 text)", where=f"line {line}") from None


def read_small_yaml(path, limit: int, what: str):
    """The YAML document of ``path``, read as :func:`read_small_text` reads it (safe_load: no object is built
    from a tag); a file that is not YAML, or nests too deeply, is one error naming it."""
    import yaml

    text = read_small_text(path, limit, what)
    try:
        return yaml.safe_load(text)
    except RecursionError:
        raise InputError(path, "not YAML: nested too deeply") from None
    except yaml.YAMLError as exc:
        raise InputError(path, f"not YAML ({' '.join(str(exc).split())})") from None
