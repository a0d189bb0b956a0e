"""Atomic outputs: write to a hidden temporary file beside the target, then rename.

A stage that fails or is killed therefore never leaves a file under an output name, and
a rerun simply finishes the job. A temporary's name holds the host and process id of its
writer, so stale temporaries of a killed run are removed when the same target is written
again, while those of another live writer of the same target are left alone (both writers
finish; the last rename wins). File-system failures on the outputs (a read-only folder, a
path under a file, a full disk) become an :class:`~pipeline.errors.InputError` naming the
output.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
from pathlib import Path
from typing import Self

from pipeline.errors import InputError, os_message

_HOST = socket.gethostname().replace("-", "_")
# Failures of the storage itself: whatever the enclosed code was writing, it was an output.
_STORAGE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}


def temp_path(target: Path) -> Path:
    """The hidden temporary name of ``target`` for this process (host and PID in the name)."""
    return target.with_name(f".{target.name}.tmp-{_HOST}-{os.getpid()}")


def writer_is_gone(temp: Path) -> bool:
    """True when the process that named ``temp`` no longer runs on this host."""
    suffix = temp.name.rsplit(".tmp-", 1)[-1]
    host, _, pid = suffix.rpartition("-")
    if host and host != _HOST:
        return False  # another machine's writer (a shared file system): not ours to judge
    if not pid.isdigit():
        return True
    if int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, another user's
    return False


def _remove_stale_temporaries(target: Path) -> None:
    for stale in target.parent.glob(f".{target.name}.tmp-*"):
        if writer_is_gone(stale):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()


class AtomicFiles:
    """Several outputs that appear together, or not at all.

    ``temp(target)`` hands out the temporary path for a target; ``commit()`` renames them
    all (each rename is atomic); ``abort()`` (or leaving the ``with`` block on an
    exception) deletes the temporaries.
    """

    def __init__(self) -> None:
        self._pending: dict[Path, Path] = {}

    def temp(self, target) -> Path:
        target = Path(target)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if isinstance(exc, FileExistsError):  # some part of the folder's path is a file
                exc = NotADirectoryError(errno.ENOTDIR, "not a directory", exc.filename)
            raise InputError(target.parent, f"cannot create the output folder: {os_message(exc)}") from exc
        if target not in self._pending:
            _remove_stale_temporaries(target)
            self._pending[target] = temp_path(target)
        return self._pending[target]

    def commit(self) -> None:
        for target, temp in self._pending.items():
            if not temp.exists():
                raise RuntimeError(f"{target}: temporary output {temp} was never written")
        for target, temp in self._pending.items():
            try:
                os.replace(temp, target)
            except OSError as exc:
                raise InputError(target, f"cannot write the output: {os_message(exc)}") from exc
        self._pending.clear()

    def output_error(self, exc: BaseException) -> InputError | None:
        """The error naming the output when ``exc`` is a failure to write one of ours."""
        if not isinstance(exc, OSError) or isinstance(exc, InputError):
            return None
        temps = {str(temp): target for target, temp in self._pending.items()}
        if exc.filename is not None and str(exc.filename) in temps:
            return InputError(temps[str(exc.filename)], f"cannot write the output: {os_message(exc)}")
        mentioned = [target for temp, target in temps.items() if exc.filename is None and temp in str(exc)]
        if mentioned:  # Arrow names the file only in its message
            return InputError(mentioned[0], f"cannot write the output: {os_message(exc)}")
        if exc.filename is None and (exc.errno in _STORAGE_ERRNOS or _mentions_storage_errno(exc)):
            folders = sorted({str(target.parent) for target in self._pending})
            return InputError(", ".join(folders) or "output", f"cannot write the output: {os_message(exc)}")
        return None

    def abort(self) -> None:
        for temp in self._pending.values():
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
        self._pending.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
            return
        translated = self.output_error(exc)
        self.abort()
        if translated is not None:
            raise translated from exc


def output_error(exc: BaseException, targets: dict) -> InputError | None:
    """The error naming an output when ``exc`` is a failure to write one of ``targets``
    (target -> its temporary), else None; for writers other than :class:`AtomicFiles`."""
    files = AtomicFiles()
    files._pending = {Path(target): Path(temp) for target, temp in targets.items()}
    return files.output_error(exc)


def _mentions_storage_errno(exc: OSError) -> bool:
    text = str(exc).lower()
    return any(f"[errno {number}]" in text for number in _STORAGE_ERRNOS)


def json_text(obj) -> str:
    """Indented, key-sorted JSON: stable across runs, readable in a diff."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_json(path, obj) -> None:
    """Write ``obj`` as JSON, atomically."""
    with AtomicFiles() as files:
        files.temp(path).write_text(json_text(obj))
