"""What a folder holds beyond the files a stage wrote into it, hidden ones included.

A stage that replaces a folder output whole (``tables``, a model directory, ``download-model``) may
delete only what it wrote there: :func:`folder_entries` lists everything under a folder, hidden names
and links included, and :func:`unwritten` names what is not in the stage's list, so that the stage
refuses the folder instead (docs/behaviour.md, "Outputs are never someone else's files").
"""

from __future__ import annotations

import os
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
