"""The hidden names the atomic writers (:mod:`pipeline.atomic`) give their temporaries, and which of the
files beside an output are provably theirs (docs/behaviour.md, "Atomic outputs").

A temporary is ``.NAME.tmp-pipeline-HOST-PID-TOKEN``, a kept previous version ``.NAME.old-pipeline-...``:
the fixed mark, the host and process id of the writer and a random token. Only a name of exactly that
form, whose writer no longer runs on this host, is a stale leftover a later write removes
(:func:`stale_leftover`); a user's ``.w.json.old-backup``, ``.w.json.tmp-1`` or a folder under such a name
is no temporary of ours and stays, and a live writer's temporary is left to it.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import secrets
import socket
from pathlib import Path

_HOST = socket.gethostname().replace("-", "_")
# The fixed mark in the name of every temporary and kept previous version this module makes: with the writer's
# host and pid and a random token, a name of this exact form is ours; anything else beside an output is a user's.
_MARK = "pipeline"
_TOKEN_DIGITS = 12
_LEFTOVER = re.compile(
    rf"\.(?P<name>.+)\.(?P<kind>tmp|old)-{_MARK}-(?P<host>[^-/]+)-(?P<pid>[0-9]+)-(?P<token>[0-9a-f]{{{_TOKEN_DIGITS}}})"
)


def leftover_name(name: str, kind: str = "tmp") -> str:
    """A new hidden name for a temporary (``kind`` tmp) or a kept previous version (``old``) of the file
    ``name``, written by this process: ``.NAME.tmp-pipeline-HOST-PID-TOKEN`` (module docstring)."""
    return f".{name}.{kind}-{_MARK}-{_HOST}-{os.getpid()}-{secrets.token_hex(_TOKEN_DIGITS // 2)}"


def leftover_of(name: str, names) -> re.Match | None:
    """The parts of ``name`` where it is, in full, a temporary or kept previous version this module names
    (:func:`leftover_name`) of one of ``names``; None for anything else (a user's ``.w.json.old-backup``)."""
    match = _LEFTOVER.fullmatch(name)
    return match if match is not None and match["name"] in set(names) else None


def writer_is_gone(match: re.Match) -> bool:
    """True when the process named in a leftover's name (:func:`leftover_of`) no longer runs on this host."""
    if match["host"] != _HOST:
        return False  # another machine's writer (a shared file system): not ours to judge
    pid = int(match["pid"])
    if pid == os.getpid():
        return True  # an earlier process of this pid is gone (a container's pids repeat)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False  # alive, another user's (or no pid at all: not ours to judge)
    return False


def stale_leftover(path: Path, names) -> bool:
    """True when ``path`` is a temporary or kept previous version of one of ``names`` (:func:`leftover_of`)
    whose writer is gone: the only files beside an output this module ever deletes as stale."""
    match = leftover_of(path.name, names)
    return match is not None and writer_is_gone(match)


def remove_stale_temporaries(target: Path) -> None:
    """Temporaries and kept previous versions (:meth:`AtomicFiles.commit`) of ``target`` whose writer is gone."""
    for stale in target.parent.glob(f".{glob.escape(target.name)}.*"):
        if stale_leftover(stale, [target.name]) and not stale.is_dir():
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()


def own_leftover(name: str, names) -> bool:
    """True when ``name`` is a temporary or kept previous version of one of ``names`` (:func:`leftover_of`):
    what :class:`AtomicFiles` leaves beside a file only while it writes it."""
    return leftover_of(name, names) is not None
