"""Atomic outputs: write to a hidden temporary file beside the target, then rename.

A stage that fails or is killed therefore never leaves a file under an output name, and
a rerun simply finishes the job. A temporary's name holds the host and process id of its
writer, so stale temporaries of a killed run are removed when the same target is written
again, while those of another live writer of the same target are left alone (both writers
finish; the last rename wins). File-system failures on the outputs (a read-only folder, a
path under a file, a full disk) become an :class:`~pipeline.errors.InputError` naming the
output, also where a library reports a full disk only in its message (safetensors, tokenizers,
torch); :func:`writing` does the same for writes outside these writers. A target that is an
existing folder is refused before anything is written (:func:`check_file_target`), and a failed
rename leaves no temporary behind (docs/behaviour.md, "Atomic outputs").

A target that exists and is not a regular file (``/dev/null``, ``/dev/stdout``, a named pipe) is
written into, not replaced: its temporary lives in the system's temporary folder and is copied
into it on commit. A rename would put a regular file in the device's place (as root, in
``/dev``), and a stream has no partial output to protect.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import socket
import stat
import tempfile
from pathlib import Path
from typing import Self

from pipeline.errors import InputError, os_message

_HOST = socket.gethostname().replace("-", "_")
# Failures of the storage itself: whatever the enclosed code was writing, it was an output.
_STORAGE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}
# torch's zip writer reports a failed write without its errno
_WRITE_FAILED = ("PytorchStreamWriter failed writing", "file write failed")


def storage_failure(exc: BaseException) -> str | None:
    """What went wrong when ``exc`` is a failure of the storage itself (full disk, quota, file size
    limit, read-only file system), whoever raised it: an ``OSError`` with that errno, or a library's
    error that carries it only in its text (``os error 28``, ``[Errno 28]``, ``No space left on
    device``). None for anything else."""
    if isinstance(exc, InputError):
        return None
    if isinstance(exc, OSError) and exc.errno in _STORAGE_ERRNOS:
        return os_message(exc)
    text = str(exc)
    lowered = text.lower()
    for number in sorted(_STORAGE_ERRNOS):
        if f"os error {number})" in lowered or f"[errno {number}]" in lowered or os.strerror(number) in text:
            return os_message(OSError(number, os.strerror(number)))
    if any(marker in text for marker in _WRITE_FAILED):
        return "a write failed (is the disk full?)"
    return None


@contextlib.contextmanager
def writing(path):
    """Turn a failure of the storage inside the block into an :class:`InputError` naming ``path``
    (what is being written), for writes outside :class:`AtomicFiles` (a work folder, a log)."""
    try:
        yield
    except InputError:
        raise
    except Exception as exc:
        message = storage_failure(exc)
        if message is None:
            raise
        raise InputError(path, f"cannot write the output: {message}") from exc


def check_file_target(target) -> Path:
    """Fail before any work when ``target`` cannot become a file: an existing folder, a path under a file."""
    target = Path(target)
    if target.name in ("", ".", ".."):
        raise InputError(target, "is not a file name to write to")
    if target.is_dir():
        raise InputError(target, "is a folder, expected a file name: nothing was written or removed")
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                not_a_folder = NotADirectoryError(errno.ENOTDIR, "not a directory")
                raise InputError(target.parent, f"cannot create the output folder: {os_message(not_a_folder)}")
            break
    return target


def temp_path(target: Path) -> Path:
    """The hidden temporary name of ``target`` for this process (host and PID in the name); for a
    special file (:func:`is_special`), in the system's temporary folder."""
    name = f".{target.name}.tmp-{_HOST}-{os.getpid()}"
    return Path(tempfile.gettempdir()) / name if is_special(target) else target.with_name(name)


def is_special(target: Path) -> bool:
    """True when ``target`` exists and is neither a regular file nor a folder: a device, a pipe, a socket."""
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


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
        target = check_file_target(target) if Path(target) not in self._pending else Path(target)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if isinstance(exc, FileExistsError):  # some part of the folder's path is a file
                exc = NotADirectoryError(errno.ENOTDIR, "not a directory", exc.filename)
            raise InputError(target.parent, f"cannot create the output folder: {os_message(exc)}") from exc
        if target not in self._pending:
            if not is_special(target):
                _remove_stale_temporaries(target)
            self._pending[target] = temp_path(target)
        return self._pending[target]

    def commit(self) -> None:
        for target, temp in self._pending.items():
            if not temp.exists():
                raise RuntimeError(f"{target}: temporary output {temp} was never written")
        for target, temp in self._pending.items():
            try:
                if is_special(target):  # written into, never replaced (module docstring)
                    with open(temp, "rb") as source, open(target, "wb") as sink:
                        shutil.copyfileobj(source, sink)
                    temp.unlink()
                else:
                    os.replace(temp, target)
            except OSError as exc:
                self.abort()  # the temporaries not yet renamed: none is left behind
                raise InputError(target, f"cannot write the output: {os_message(exc)}") from exc
        self._pending.clear()

    def output_error(self, exc: BaseException) -> InputError | None:
        """The error naming the output when ``exc`` is a failure to write one of ours: the target whose
        temporary (or a file inside it, for a folder) the error names, else, for a failure of the
        storage that names no file, the targets being written."""
        if isinstance(exc, InputError):
            return None
        storage = storage_failure(exc)
        if not isinstance(exc, OSError) and storage is None:
            return None
        message = f"cannot write the output: {storage or os_message(exc)}"
        filename = getattr(exc, "filename", None) if isinstance(exc, OSError) else None
        for target, temp in self._pending.items():
            if filename is not None and _within(Path(filename), temp):
                return InputError(_real_path(Path(filename), temp, target), message)
            if filename is None and str(temp) in str(exc):  # Arrow names the file only in its message
                return InputError(target, message)
        if filename is None and storage is not None:  # the targets, or their folders when there are many
            named = [str(target) for target in self._pending]
            if len(named) > 3:
                named = sorted({str(target.parent) for target in self._pending})
            return InputError(", ".join(named) or "output", message)
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


def _within(path: Path, temp: Path) -> bool:
    return path == temp or temp in path.parents


def _real_path(path: Path, temp: Path, target: Path) -> Path:
    """``path`` (the temporary or a file inside it) under the name it is written to."""
    return target / path.relative_to(temp) if path != temp else target


def json_text(obj) -> str:
    """Indented, key-sorted JSON: stable across runs, readable in a diff."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_json(path, obj) -> None:
    """Write ``obj`` as JSON, atomically."""
    with AtomicFiles() as files:
        files.temp(path).write_text(json_text(obj))
