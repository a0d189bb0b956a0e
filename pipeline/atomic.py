"""Atomic outputs: write to a hidden temporary file beside the target, then rename.

A stage that fails or is killed therefore never leaves a file under an output name, and
a rerun simply finishes the job. A temporary's name (:mod:`pipeline.leftovers`) holds a fixed mark,
the host and process id of its writer and a random token: a stale temporary of a killed run is removed
when the same target is written again only where its whole name has that form and its writer is gone,
so a user's ``.NAME.old-backup`` stays, and so do those of another live writer of the same target (both
writers finish; the last rename wins). An error names the output, never its temporary.
File-system failures on the outputs (a read-only folder, a path under a file, a full disk) become an :class:`~pipeline.errors.InputError` naming the
output, also where a library reports a full disk only in its message (safetensors, tokenizers,
torch); :func:`writing` does the same for writes outside these writers. A target that is an
existing folder is refused before anything is written (:func:`check_file_target`), and a failed
rename leaves no temporary behind (docs/behaviour.md, "Atomic outputs"). Several targets of one
:class:`AtomicFiles` are one set: a rename that fails puts back those already renamed
(docs/behaviour.md, "Grouped evaluation is one set of files"). A folder output (:class:`AtomicFolder`,
:class:`pipeline.models.directory.AtomicDir`) replaces an earlier one only where it holds nothing the
stage did not write, hidden files included (:func:`pipeline.folder_contents.unwritten`).

A target that is a symbolic link is resolved first (:func:`resolve_target`), link by link: a link
to a regular file (or to a name not yet written: a dangling link) has the file it points to replaced,
atomically, beside that file, and the link is kept; a link to a folder output is followed the same
way (:class:`pipeline.models.directory.AtomicDir`). A target that exists and is not a regular file
(``/dev/null``, a named pipe, a socket), or a link into ``/proc`` (``/dev/stdout`` is a link to
``/proc/self/fd/1``, whatever file the shell redirected it to), is written into, not replaced: its
temporary lives in the system's temporary folder and is copied into it on commit. A rename would put
a regular file in the link's or the device's place (as root, in ``/dev``), and a stream has no
partial output to protect (docs/behaviour.md, "Atomic outputs").
"""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Self

from pipeline.errors import InputError, os_message
from pipeline.folder_contents import listing
from pipeline.leftovers import leftover_name, own_leftover, remove_stale_temporaries, stale_leftover

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
    """A new hidden temporary name of ``target`` for this process (:func:`leftover_name`), beside the file
    a link points to (:func:`resolve_target`); for a special file (:func:`is_special`), in the system's
    temporary folder."""
    real = resolve_target(target)
    name = leftover_name(real.name)
    return Path(tempfile.gettempdir()) / name if is_special(target) else real.with_name(name)


# A link chain longer than this is a loop (the kernel's own limit, MAXSYMLINKS, is 40).
_MAX_LINKS = 40
_PROC = Path("/proc")


def _link_chain(target) -> list[Path]:
    """``target`` and every name its symbolic links lead to, in order, each with its folder resolved; the
    last is not a link (it is a file, a folder, a device or nothing yet)."""
    # no lexical normalisation first: ``x/../x/a.json`` climbs from where the link ``x`` points, as the kernel does
    path = Path(target)
    chain = []
    for _ in range(_MAX_LINKS + 1):
        if path.name in ("", ".", ".."):  # a link to "." or "..": a folder, resolved whole
            path = Path(os.path.realpath(path))
        else:
            path = Path(os.path.realpath(path.parent)) / path.name
        chain.append(path)
        if not path.is_symlink():
            return chain
        path = path.parent / os.readlink(path)
    raise InputError(target, f"is a loop of symbolic links (more than {_MAX_LINKS}): nothing was written")


def resolve_target(target) -> Path:
    """The path an output of ``target`` is written to: ``target`` itself, or, where it is a symbolic link
    (a chain of them, or a dangling one), the name its last link points to, so the rename replaces that
    file and keeps the links. A link into ``/proc`` (``/dev/stdout``, ``/dev/fd/N``) stays as it is: it is
    written into (:func:`is_special`)."""
    chain = _link_chain(target)
    if any(_in_proc(path) for path in chain):
        return Path(target)
    return chain[-1]


def _in_proc(path: Path) -> bool:
    return path == _PROC or _PROC in path.parents


def is_special(target: Path) -> bool:
    """True when ``target`` (through its links) exists and is neither a regular file nor a folder (a device,
    a pipe, a socket), or is reached through ``/proc`` (``/dev/stdout`` -> ``/proc/self/fd/1``: the shell's
    stream, whatever file it was redirected to, is written into, never renamed over)."""
    try:
        chain = _link_chain(target)
    except InputError:
        return False
    if any(_in_proc(path) for path in chain):
        return True
    try:
        mode = os.stat(chain[-1]).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


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
        real = resolve_target(target)  # a link's file is replaced beside it; the link is kept
        try:
            real.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if isinstance(exc, FileExistsError):  # some part of the folder's path is a file
                exc = NotADirectoryError(errno.ENOTDIR, "not a directory", exc.filename)
            raise InputError(target.parent, f"cannot create the output folder: {os_message(exc)}") from exc
        if target not in self._pending:
            if not is_special(target):
                remove_stale_temporaries(real)
            self._pending[target] = temp_path(target)
        return self._pending[target]

    def commit(self) -> None:
        """Rename every temporary over its target. With several targets the set is all or nothing: each
        target's previous version is kept (a hard link, else a copy, beside it) until every rename is done,
        and a failure puts the renamed ones back as they were (or removes them where they were new), so the
        error names one output and the earlier outputs stand unchanged. Special files (streams, written into)
        come last: what was appended to them cannot be taken back."""
        for target, temp in self._pending.items():
            if not temp.exists():  # a writer's bug: named by the output it did not write, not its temporary
                raise RuntimeError(f"{target}: the output was never written")
        ordered = sorted(self._pending.items(), key=lambda item: is_special(item[0]))
        several = len(ordered) > 1
        renamed: list[tuple[Path, Path | None]] = []  # (file replaced, its previous version kept beside it)
        target = None
        try:
            for target, temp in ordered:
                if is_special(target):  # written into, never replaced (module docstring)
                    # appended: through /proc/self/fd/N, a file the shell opened (maybe with >>) keeps what it holds
                    with open(temp, "rb") as source, open(target, "ab") as sink:
                        shutil.copyfileobj(source, sink)
                    temp.unlink()
                    continue
                real = resolve_target(target)
                previous = _keep_previous(real) if several else None
                try:
                    os.replace(temp, real)
                except OSError:
                    if previous is not None:
                        previous.unlink(missing_ok=True)
                    raise
                renamed.append((real, previous))
        except OSError as exc:
            _put_back(renamed)
            self.abort()  # the temporaries not yet renamed: none is left behind
            raise InputError(target, f"cannot write the output: {self._without_temporaries(os_message(exc))}") from exc
        for _, previous in renamed:
            if previous is not None:
                with contextlib.suppress(OSError):
                    previous.unlink()
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
        message = f"cannot write the output: {self._without_temporaries(storage or os_message(exc))}"
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

    def _without_temporaries(self, text: str) -> str:
        """``text`` with each temporary's path (as a library's message names it) replaced by its output's."""
        for target, temp in self._pending.items():
            text = text.replace(str(temp), str(target))
        return text

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


def _keep_previous(real: Path) -> Path | None:
    """A second name for the file ``real`` holds now (a hard link; a copy where the file system has none),
    so that :meth:`AtomicFiles.commit` can put it back; None where there is no regular file yet."""
    if not real.is_file():
        return None
    kept = real.with_name(leftover_name(real.name, "old"))
    try:
        os.link(real, kept)
    except OSError:
        shutil.copy2(real, kept)
    return kept


def _put_back(renamed: list[tuple[Path, Path | None]]) -> None:
    """Undo the renames of a commit that failed: each file's previous version back, a new file removed."""
    for real, previous in reversed(renamed):
        with contextlib.suppress(OSError):
            if previous is None:
                real.unlink()
            else:
                os.replace(previous, real)


def open_temp_folder(target: Path, real: Path, tidy=None) -> Path:
    """The hidden folder a folder output is built in, beside ``real`` (``target`` with its links
    followed, so that a link is kept): the parent made, temporaries of writers that are gone removed,
    ``tidy()`` run; a failure is one line naming ``target``."""
    temp = None
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        for stale in real.parent.glob(f".{glob.escape(real.name)}.*"):
            # only a folder named, in full, as ours whose writer is gone: a live writer's, or a user's, stays
            if stale_leftover(stale, [real.name]) and stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)
        if tidy is not None:
            tidy()
        temp = temp_path(target)
        temp.mkdir()
    except OSError as exc:
        if isinstance(exc, FileExistsError) and not (temp and temp.exists()):  # a part of the path is a file
            exc = NotADirectoryError(errno.ENOTDIR, "not a directory", exc.filename)
        raise InputError(target, f"cannot create the output folder: {os_message(exc)}") from exc
    return temp


def abandon_temp_folder(temp: Path, target: Path, exc: BaseException | None) -> None:
    """After a folder output failed: ``temp`` removed, and the failure raised as one line naming
    ``target`` where it is a known one (a full disk, a missing permission)."""
    shutil.rmtree(temp, ignore_errors=True)
    translated = output_error(exc, {target: temp}) if isinstance(exc, Exception) else None
    if translated is not None:
        raise translated from exc


class AtomicFolder:
    """A folder of outputs that appears whole or not at all (``tables``' 73 files): ``with
    AtomicFolder(target, names) as tmp:`` fill ``tmp``, a hidden folder beside ``target`` (beside the
    folder a link points to: the link is kept); on success it takes ``target``'s place in one step, an
    exchange of the two names (``renameat2(RENAME_EXCHANGE)``) where the file system has it, so the
    previous output stays whole until the new one is, and is then removed; elsewhere the previous one is
    moved aside first. A kill at any moment leaves the previous folder or the new one, never a mix.

    ``names``: the files the folder holds. An existing ``target`` is replaced only where it holds nothing
    else: a folder with any other file in it, hidden or not (a ``.notes``, a ``.git/``), is refused
    untouched; only the temporaries of ``names`` that a killed writer left (:func:`own_leftover`) go with it.
    """

    def __init__(self, target, names) -> None:
        self.target = Path(target)
        self.names = set(names)
        self.temp: Path | None = None

    def check(self) -> Path:
        """Refuse a target that cannot be replaced, before any work; the folder to write (links resolved)."""
        target = self.target
        if target.name in ("", ".", ".."):
            raise InputError(target, "is not a folder name to write to (give a new or empty folder)")
        real = resolve_target(target)
        if real.exists() and not real.is_dir():
            raise InputError(target, "exists and is not a folder: refused, nothing touched")
        check_file_target(real / "x")  # a part of the path that is a file
        if real.is_dir():
            try:
                foreign = sorted(
                    p.name
                    for p in real.iterdir()
                    if (p.name not in self.names and not own_leftover(p.name, self.names))
                    or (p.is_dir() and not p.is_symlink())  # a folder under an output's name holds someone's files
                )
            except OSError as exc:
                raise InputError(target, f"cannot read the existing output folder: {os_message(exc)}") from exc
            if foreign:
                raise InputError(
                    target,
                    f"holds files this stage does not write ({listing(foreign)}): refused, nothing touched; "
                    "choose a new or empty folder",
                )
        return real

    def __enter__(self) -> Path:
        real = self.check()

        def tidy() -> None:
            if real.is_dir():
                for name in self.names:  # per-file temporaries a killed run of the earlier writer left
                    remove_stale_temporaries(real / name)

        self.temp = open_temp_folder(self.target, real, tidy)
        return self.temp

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            try:
                self._swap()
                return
            except OSError as failure:
                exc = failure
        abandon_temp_folder(self.temp, self.target, exc)
        if exc_type is None:
            raise exc

    def _swap(self) -> None:
        real = self.check()  # again: a file may have appeared in it meanwhile
        if not real.exists():
            os.rename(self.temp, real)
        elif exchange(self.temp, real):
            shutil.rmtree(self.temp, ignore_errors=True)  # now the previous output
        else:
            old = real.with_name(leftover_name(real.name, "old"))
            os.rename(real, old)
            try:
                os.rename(self.temp, real)
            except OSError:
                os.rename(old, real)  # the previous output stays where it was
                raise
            shutil.rmtree(old, ignore_errors=True)


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def exchange(first: Path, second: Path) -> bool:
    """Swap the names ``first`` and ``second`` in one atomic step (Linux ``renameat2`` with
    ``RENAME_EXCHANGE``); False where the system or the file system cannot, so the caller falls back."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    number = ctypes.get_errno()
    if number in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(number, os.strerror(number), str(second))


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
