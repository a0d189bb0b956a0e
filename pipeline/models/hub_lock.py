"""The lock file of a config's unpinned hub models: ``hub:ORG/NAME`` → the commit its first download resolved.

A backbone may be named without a commit (``hub:ORG/NAME``, :mod:`pipeline.models.spec`). The first
``python -m pipeline download-model --lock FILE`` of it asks the hub for the current commit of ``main``,
fetches that commit and records it here; every later run fetches the recorded commit, so a config
with its lock file committed beside it (``models.lock``, as ``requirements.lock`` pins the packages)
starts every run from the same weights, as a pinned spec does. The file is YAML, one line per model:

    google/electra-base-discriminator: 0123456789abcdef0123456789abcdef01234567

Writes are atomic and serialised (an exclusive ``flock`` on the file's folder), so parallel
``download_model`` jobs each add their line. The snapshot folder (``<data_root>/models/ORG/NAME@locked``)
records its commit in ``SNAPSHOT.json``: :func:`check_snapshot` refuses a folder whose commit is not the
one the lock records, so a hand-edited lock never runs on other weights than it names.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

import yaml

from pipeline.atomic import AtomicFiles
from pipeline.errors import InputError
from pipeline.models.spec import REPO_ID, REVISION

HEADER = (
    "# Hub commits of this config's unpinned backbones (hub:ORG/NAME), each recorded by download_model\n"
    "# at its first download (pipeline/models/hub_lock.py). Commit this file: every later run fetches these\n"
    "# commits. Delete a line to resolve that model again (and its <data_root>/models/ORG/NAME@locked folder).\n"
)
UNRESOLVED = "resolved at first download"


def read_lock(path: str | Path | None) -> dict[str, str]:
    """Repository id → commit of the lock file at ``path`` ({} where there is none yet, or no path)."""
    if path is None or not Path(path).exists():
        return {}
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(path, f"not a YAML lock file ({' '.join(str(exc).split())})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(path, "a lock file maps ORG/NAME to a commit, one per line")
    for repo_id, commit in data.items():
        if not isinstance(repo_id, str) or not REPO_ID.match(repo_id):
            raise InputError(path, f"{repo_id!r} is not a hub repository id (ORG/NAME)")
        if not isinstance(commit, str) or not REVISION.match(commit):
            raise InputError(path, f"{repo_id}: {commit!r} is not a full 40-character commit hash")
    return dict(data)


def lock_text(entries: dict[str, str]) -> str:
    return HEADER + "".join(f"{repo_id}: {entries[repo_id]}\n" for repo_id in sorted(entries))


@contextlib.contextmanager
def _exclusive(folder: Path):
    """Hold an exclusive lock on ``folder`` (no stray lock file beside the config)."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def record(path: str | Path, repo_id: str, commit: str) -> None:
    """Add ``repo_id: commit`` to the lock file (created where missing). A different commit already
    recorded for ``repo_id`` is refused: the lock is only ever extended, never rewritten behind the user."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(path.parent):
        entries = read_lock(path)
        if entries.get(repo_id, commit) != commit:
            raise InputError(path, f"{repo_id} is locked to {entries[repo_id]}, not {commit}")
        entries[repo_id] = commit
        with AtomicFiles() as files:
            files.temp(path).write_text(lock_text(entries), encoding="utf-8")


def snapshot_commit(folder: str | Path) -> str | None:
    """The commit a snapshot folder holds (its ``SNAPSHOT.json``), None where there is no snapshot."""
    manifest = Path(folder) / "SNAPSHOT.json"
    if not manifest.is_file():
        return None
    try:
        return json.loads(manifest.read_text(encoding="utf-8")).get("revision")
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        raise InputError(manifest, "not the JSON record download_model writes") from None


def check_snapshot(folder: str | Path, repo_id: str, lock_path: str | Path) -> None:
    """Refuse an ``@locked`` snapshot folder whose commit is not the one ``lock_path`` records for ``repo_id``
    (an edited lock, or data fetched under another lock): one line saying which to remove."""
    held = snapshot_commit(folder)
    if held is None:
        return
    locked = read_lock(lock_path).get(repo_id)
    if locked is None:
        raise InputError(
            folder,
            f"holds {repo_id} at {held}, which {lock_path} does not record: add '{repo_id}: {held}' to it, "
            "or remove the folder to resolve the commit again",
        )
    if locked != held:
        raise InputError(
            folder, f"holds {repo_id} at {held}, but {lock_path} locks {locked}: remove the folder to fetch {locked}"
        )


def commit_text(spec: str, lock_path: str | Path | None) -> str:
    """What the plan shows for a hub backbone's commit: the pinned one, the locked one, or "resolved at
    first download"."""
    from pipeline.models.spec import hub_reference

    repo_id, revision = hub_reference(spec)
    if revision:
        return f"{revision} (pinned)"
    locked = read_lock(lock_path).get(repo_id)
    return f"{locked} (locked in {lock_path})" if locked else UNRESOLVED
