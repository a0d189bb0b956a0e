"""What a folder holds beyond the files a stage wrote into it, hidden ones included.

A stage that replaces a folder output whole (``tables``, a model directory, ``download-model``) may
delete only what it wrote there: :func:`folder_entries` lists everything under a folder, hidden names
and links included, and :func:`unwritten` names what is not in the stage's list, so that the stage
refuses the folder instead (docs/behaviour.md, "Outputs are never someone else's files").

A list the folder itself carries (a model directory's ``.pipeline-files.json``, a snapshot's
``SNAPSHOT.json``, a rehearsal's ``.rehearsal-work``) could have been written or edited by anyone, so it
proves nothing by naming a file: it holds each file with the SHA-256 and size it had as written
(:func:`proof_of`, :func:`written_record`), and :func:`unproven` counts a listed file as the stage's own only
where its bytes still match. A file the list names with other bytes, or an entry of an older list that
carries no hash, is unproven: kept and named like any other file the stage did not write.

Bytes prove a file is unchanged, not who wrote it: anyone can list a user's ``thesis.txt`` with its true
SHA-256 (issue 55 §1). So each kind of folder also declares the names it writes (:func:`own_names`: a
model directory's save_pretrained, tokenizer and sentence-transformers files and our records, a snapshot's
hub files, a rehearsal's layout), and :func:`unproven` counts a listed file as the stage's own only where
its name is one of those too: a forged list can then name only files the stage itself would write there.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath


def folder_entries(folder) -> list[str]:
    """Everything under ``folder``, hidden names included: each file, link (a link to a folder is not
    followed) and empty folder, as a path relative to ``folder`` (``a/b``; an empty folder ``a/``), sorted.
    A subfolder that cannot be read raises (its contents would otherwise go unseen)."""
    folder = Path(folder)
    entries = []

    def unreadable(exc: OSError) -> None:
        raise exc

    for root, folders, files in os.walk(folder, onerror=unreadable):
        here = Path(root)
        relative = here.relative_to(folder)
        for name in list(folders):
            if (here / name).is_symlink():
                folders.remove(name)
                files.append(name)
        entries += [(relative / name).as_posix() for name in files]
        if not folders and not files and here != folder:
            entries.append(relative.as_posix() + "/")
    return sorted(entries)


def unwritten(folder, written) -> list[str]:
    """What ``folder`` holds beyond ``written`` (entries as :func:`folder_entries` names them), each named by
    its topmost folder that holds nothing written (``.git``, not every file under it), sorted."""
    written = set(written)
    holding = {parent.as_posix() for entry in written for parent in PurePosixPath(entry.rstrip("/")).parents}
    found = set()
    for entry in folder_entries(folder):
        if entry in written:
            continue
        parts = PurePosixPath(entry.rstrip("/")).parts
        for end in range(1, len(parts) + 1):
            prefix = "/".join(parts[:end])
            if prefix not in holding or end == len(parts):
                found.add(prefix)
                break
    return sorted(found)


def listing(names: list[str], shown: int = 3) -> str:
    """``a, b, c and 4 more``: the first names of a list, for an error line."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def proof_of(path) -> dict:
    """What :func:`unproven` checks an entry against: a file's ``sha256`` and ``size``, a symbolic link's
    target (``link``; never followed), ``{}`` for an empty folder."""
    path = Path(path)
    if path.is_symlink():
        return {"link": os.readlink(path)}
    if path.is_dir():
        return {}
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return {"sha256": digest.hexdigest(), "size": size}


def written_record(folder, leave_out=()) -> dict[str, dict]:
    """Every entry under ``folder`` (:func:`folder_entries`) but ``leave_out``, with its proof (:func:`proof_of`):
    the list a stage keeps of what it wrote, so that a later run can tell its files from anyone else's."""
    folder = Path(folder)
    return {entry: proof_of(folder / entry) for entry in folder_entries(folder) if entry not in set(leave_out)}


def _proven(path: Path, proof) -> bool:
    """True when ``path`` is still what ``proof`` (a :func:`proof_of` record, or a bare SHA-256 as
    ``SNAPSHOT.json`` lists it) says was written."""
    if isinstance(proof, str):
        proof = {"sha256": proof}
    if not isinstance(proof, dict):
        return False  # an older list's bare name: nothing to check it against
    try:
        if "link" in proof:
            return path.is_symlink() and os.readlink(path) == proof["link"]
        if path.is_symlink():
            return False
        if not proof:
            return path.is_dir()
        if not isinstance(proof.get("sha256"), str) or not path.is_file():
            return False
        if "size" in proof and path.stat().st_size != proof["size"]:
            return False  # a cheap refusal before the hash
        return proof_of(path).get("sha256") == proof["sha256"]
    except OSError:
        return False


OwnNames = Callable[[str], bool]


def own_names(patterns: Iterable[str]) -> OwnNames:
    """Whether an entry (``a/b``, an empty folder ``a/``) has a name a stage writes, by ``patterns``: each a
    path of :func:`fnmatch.fnmatchcase` parts matched part by part (``*`` never crosses a ``/``), where a
    last part ``**`` takes anything beneath the folders before it (``data/**``: ``data/a/b``, and ``data/`` as
    an empty folder, but not a file ``data``; ``*/**``: nothing at the top but folders)."""
    compiled = [tuple(pattern.split("/")) for pattern in patterns]

    def matches(parts: tuple[str, ...], folder: bool, pattern: tuple[str, ...]) -> bool:
        if pattern[-1] == "**":
            head = pattern[:-1]
            deep_enough = len(parts) > len(head) or (folder and len(parts) == len(head))
            return deep_enough and all(map(fnmatchcase, parts, head))
        return len(parts) == len(pattern) and all(map(fnmatchcase, parts, pattern))

    def own(entry: str) -> bool:
        parts = PurePosixPath(entry.rstrip("/")).parts
        return any(matches(parts, entry.endswith("/"), pattern) for pattern in compiled)

    return own


def unproven(folder, record, accepted=(), *, own: OwnNames) -> list[str]:
    """What ``folder`` holds that ``record`` (entry -> :func:`proof_of`, as :func:`written_record` made it)
    does not prove the stage wrote, named as :func:`unwritten` names them: an entry not listed, one listed
    with other bytes or another link target, one listed under a name the stage never writes (``own``, from
    :func:`own_names`: a forged list with a user's file and its true hash), and every entry of a list without
    proofs (an older one, a list of bare names). ``accepted``: names the caller owns without a proof (the
    list itself, Snakemake's marks). A record that is not a mapping proves nothing."""
    folder = Path(folder)
    record = record if isinstance(record, dict) else {}
    proven = [
        entry
        for entry in folder_entries(folder)
        if entry in record and own(entry) and _proven(folder / entry, record[entry])
    ]
    return unwritten(folder, [*proven, *accepted])
