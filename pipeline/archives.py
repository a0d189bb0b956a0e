"""Zip archives read back safely: a damaged archive or member is one line naming ``ARCHIVE:MEMBER``.

The benchmarks (GLUE / CLUE, NLI) ship as zip archives, read by ``classify-unpack`` and by
``finetune --nli ARCHIVE.zip:SPLIT``. A bad CRC, corrupt deflate data, a truncated or encrypted
member, or a member name flagged UTF-8 that is not, stop the stage with an
:class:`~pipeline.errors.InputError` naming the archive and the member (docs/behaviour.md).
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

from pipeline.errors import InputError

# What reading a damaged archive or member raises: a bad CRC or header (BadZipFile), corrupt deflate
# data (zlib.error), a truncated member (EOFError), a compression method zipfile lacks, a broken record;
# RuntimeError is what zipfile raises for an encrypted member.
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, struct.error, OSError, ValueError)
MEMBER_ERRORS = (*ZIP_ERRORS, RuntimeError)


def printable(name: str) -> str:
    """A member name fit for a one-line message: control characters written as escapes."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in name)


def member_name(archive: Path, member: str) -> str:
    """``ARCHIVE:MEMBER``, how messages name a member."""
    return f"{archive}:{printable(member)}"


def open_archive(path: Path) -> zipfile.ZipFile:
    """``path`` as a zip archive; an :class:`InputError` naming it (and the member whose name is not
    UTF-8 though the archive flags it so) when it cannot be read as one."""
    try:
        return zipfile.ZipFile(path)
    except UnicodeDecodeError as exc:
        raw = exc.object if isinstance(exc.object, bytes) else str(exc.object).encode()
        name = printable(raw.decode("utf-8", "backslashreplace"))
        raise InputError(f"{path}:{name}", "the member's name is not UTF-8, though the archive says it is") from None
    except ZIP_ERRORS as exc:
        raise InputError(path, f"not a readable zip archive: {exc}") from exc
