"""The one exception type for bad input, and the one place known failures become it.

Stages raise :class:`InputError` for anything wrong with what they were given (a missing
file, a corrupt dump, an unknown language) or where they were told to write (a read-only
folder, a full disk). The CLI turns it into a one-line message on stderr and exit status 2,
without a traceback: the message names the file and, where there is one, the place in it.

Failures that the libraries raise on their own (``OSError`` from the file system,
``UnicodeDecodeError``, Arrow's errors on a corrupt Parquet file) are translated here, by
:func:`translate`: :func:`reading` wraps the code that reads one file, and the CLI applies
:func:`translate` to whatever still escapes a stage (``OSError`` carries its file name).
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path


class InputError(Exception):
    """Bad input: ``path`` names the offending file, ``where`` the place inside it."""

    def __init__(self, path, message: str, where: str | None = None):
        self.path = str(path)
        self.where = where
        self.message = message
        location = f"{self.path} ({where})" if where else self.path
        super().__init__(f"{location}: {message}")


# What an errno means for the user; the rest fall back to the system's own text.
_OS_MESSAGES = {
    errno.ENOENT: "not found",
    errno.EACCES: "permission denied (not readable or not writable)",
    errno.EPERM: "permission denied (not readable or not writable)",
    errno.EROFS: "is on a read-only file system (not writable)",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large for this system or its limit (ulimit -f)",
    errno.ENOTDIR: "a part of this path is a file, not a directory",
    errno.EISDIR: "is a directory, expected a file",
    errno.EEXIST: "already exists and is not a directory",
    errno.ENAMETOOLONG: "file name too long",
}


def os_message(exc: OSError) -> str:
    """A short description of a file-system failure (no path: the caller names it)."""
    if exc.errno in _OS_MESSAGES:
        return _OS_MESSAGES[exc.errno]
    text = exc.strerror or str(exc)
    # Arrow's I/O errors carry the errno only inside their text ("... [errno 28] No space left")
    for number, message in _OS_MESSAGES.items():
        if f"[errno {number}]" in text.lower() or os.strerror(number) in text:
            return message
    return text.splitlines()[0] if text else type(exc).__name__


def _unicode_where(exc: UnicodeDecodeError, path) -> str | None:
    """``line N`` of the first byte that is not UTF-8, found again in the file itself."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as found:
        line = data.count(b"\n", 0, found.start) + 1
        return f"line {line}"
    return None


def translate(exc: BaseException, path=None) -> InputError | None:
    """The :class:`InputError` for a known failure of reading or writing ``path``; None if unknown.

    Known: file-system errors (``OSError``: missing, a directory, no permission, no space, a
    path under a file), text that is not UTF-8, and Arrow's errors on a Parquet file that is
    corrupt or not Parquet at all.
    """
    if isinstance(exc, InputError):
        return exc
    if isinstance(exc, UnicodeDecodeError):
        return InputError(
            path or "input",
            "invalid UTF-8 (the file must be UTF-8 text)",
            where=_unicode_where(exc, path) if path else None,
        )
    arrow = _arrow_error_types()
    if arrow and isinstance(exc, arrow) and not _is_plain_os_error(exc):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return InputError(path or "input", f"not a readable Parquet file (corrupt or truncated): {first}")
    if isinstance(exc, OSError):
        named = exc.filename if exc.filename is not None else path
        return InputError(named or "output", os_message(exc))
    return None


def _is_plain_os_error(exc: BaseException) -> bool:
    """Arrow's I/O errors subclass OSError; those with an errno are file-system failures."""
    return isinstance(exc, OSError) and (exc.errno is not None or "[errno" in str(exc).lower())


def _arrow_error_types() -> tuple | None:
    import sys

    pyarrow = sys.modules.get("pyarrow")  # never import Arrow only to classify an error
    return (pyarrow.lib.ArrowException,) if pyarrow is not None else None


@contextlib.contextmanager
def reading(path):
    """Turn a known failure of the enclosed reads of ``path`` into an :class:`InputError`."""
    try:
        yield
    except InputError:
        raise
    except Exception as exc:  # translate() knows which; the rest propagate unchanged
        translated = translate(exc, path)
        if translated is None:
            raise
        raise translated from exc
