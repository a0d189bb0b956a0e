"""The lock file of a config's unpinned hub models: ``hub:ORG/NAME`` → the commit its first download resolved.

A backbone may be named without a commit (``hub:ORG/NAME``, :mod:`pipeline.models.spec`). The first
``python -m pipeline download-model --lock FILE`` of it asks the hub for the current commit of ``main``,
fetches that commit and records it here; every later run fetches the recorded commit, so a config
with its lock file committed beside it (``models.lock``, as ``requirements.lock`` pins the packages)
starts every run from the same weights, as a pinned spec does. The file is YAML, one line per model:

    google/electra-base-discriminator: "0123456789abcdef0123456789abcdef01234567"

The commit is written quoted, and read with PyYAML's ``BaseLoader`` (every scalar a string): a commit of
decimal digits only is a number to YAML's other loaders, and a lock must read back what it wrote. A model
named twice is refused (YAML keeps the last silently). Writes are atomic and serialised (an exclusive
``flock`` on the file's folder), so parallel ``download_model`` jobs each add their line; a line is added
to the text as it is, so the user's comments and order stay. The folder must be writable before the first
download starts (:func:`check_writable`): a snapshot whose commit cannot be recorded is one the workflow
then refuses. The snapshot folder (``<data_root>/models/ORG/NAME@locked``)
records its commit in ``SNAPSHOT.json``: :func:`check_snapshot` refuses a folder whose commit is not the
one the lock records, so a hand-edited lock never runs on other weights than it names.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from pathlib import Path

import yaml

from pipeline.atomic import AtomicFiles
from pipeline.errors import InputError, os_message
from pipeline.models.spec import HUB_PREFIX, LEXICAL, REPO_ID, REVISION
from pipeline.small_files import MIB, read_small_text

HEADER = (
    "# Hub commits of this config's unpinned backbones (hub:ORG/NAME), each recorded by download_model\n"
    "# at its first download (pipeline/models/hub_lock.py). Commit this file: every later run fetches these\n"
    "# commits. Delete a line to resolve that model again (and its <data_root>/models/ORG/NAME@locked folder).\n"
)
UNRESOLVED = "resolved at first download"


LOCK_LIMIT = MIB  # a line per model: some 100 bytes each
SNAPSHOT_LIMIT = 4 * MIB  # SNAPSHOT.json: a SHA-256 per file of one commit
SNAPSHOT = "SNAPSHOT.json"
HUB_NAME_MAX = 96  # the hub's longest repository (and organisation) name


class _Duplicate(yaml.YAMLError):
    """A key given twice in one mapping."""


class _UniqueKeys(yaml.BaseLoader):
    """YAML with every scalar a string (no implicit numbers: a commit of digits stays a commit), and a
    key given twice refused instead of the last one kept."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str) and key.casefold() in seen:  # the hub's ids ignore letter case
                first, line = seen[key.casefold()]
                also = "" if first == key else f" (as {first})"
                raise _Duplicate(f"{key} is given twice{also} (lines {line} and {key_node.start_mark.line + 1})")
            if isinstance(key, str):
                seen[key.casefold()] = (key, key_node.start_mark.line + 1)
        return super().construct_mapping(node, deep)


def parse_lock(text: str, path) -> dict[str, str]:
    """Repository id → commit of a lock file's ``text`` (``path`` names it in the errors)."""
    try:
        data = yaml.load(text, Loader=_UniqueKeys)  # BaseLoader: strings, lists and maps, nothing built
    except _Duplicate as exc:
        raise InputError(path, f"{exc}: one commit per model") from None
    except yaml.YAMLError as exc:
        raise InputError(path, f"not a YAML lock file ({' '.join(str(exc).split())})") from None
    except RecursionError:
        raise InputError(path, "not a YAML lock file (nested too deeply)") from None
    if data is None or data == "":
        return {}
    if not isinstance(data, dict):
        raise InputError(path, "a lock file maps ORG/NAME to a commit, one per line")
    for repo_id, commit in data.items():
        if not isinstance(repo_id, str) or not REPO_ID.match(repo_id):
            raise InputError(path, f"{repo_id!r} is not a hub repository id (ORG/NAME)")
        if not isinstance(commit, str) or not REVISION.match(commit):
            raise InputError(path, f"{repo_id}: {commit!r} is not a full 40-character commit hash")
    return dict(data)


def _lock_text(path) -> str:
    """The text of the lock file at ``path`` ("" where there is none yet): a regular file of at most
    :data:`LOCK_LIMIT` bytes (pipeline/small_files.py)."""
    return read_small_text(path, LOCK_LIMIT, "a lock file of hub commits", missing="")


def locked(entries: dict[str, str], repo_id: str) -> str | None:
    """The commit ``entries`` (a parsed lock) records for ``repo_id``, whatever the letter case of either: the
    hub's repository ids ignore it (``Google/electra-base-discriminator`` is ``google/...``), so one model
    has one commit."""
    wanted = repo_id.casefold()
    return next((commit for name, commit in entries.items() if name.casefold() == wanted), None)


def read_lock(path: str | Path | None) -> dict[str, str]:
    """Repository id → commit of the lock file at ``path`` ({} where there is none yet, or no path)."""
    if path is None:
        return {}
    return parse_lock(_lock_text(path), path)


def entry_line(repo_id: str, commit: str) -> str:
    """One model's line, the commit quoted (a commit of digits only is a number to YAML unquoted)."""
    return f'{repo_id}: "{commit}"\n'


def lock_text(entries: dict[str, str]) -> str:
    return HEADER + "".join(entry_line(repo_id, entries[repo_id]) for repo_id in sorted(entries))


def check_writable(path: str | Path, repo_id: str) -> None:
    """Refuse a lock file that cannot be written, before the first download of ``repo_id`` fetches anything:
    its folder is made where missing and a temporary file is created and removed in it (permissions alone
    do not say: root ignores them, a read-only file system does not)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(prefix=f".{path.name}.probe-", dir=path.parent):
            pass
    except OSError as exc:
        raise InputError(
            path,
            f"cannot be written ({os_message(exc)}): the first download of {repo_id} records its commit there; "
            "nothing downloaded",
        ) from None


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
    """Add ``repo_id: commit`` to the lock file (created where missing), as a line added to its text: the
    user's comments and order stay. A different commit already recorded for ``repo_id`` is refused: the
    lock is only ever extended, never rewritten behind the user."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(path.parent):
        text = _lock_text(path)
        entries = parse_lock(text, path)
        held = locked(entries, repo_id)
        if held is not None and held != commit:
            raise InputError(path, f"{repo_id} is locked to {held}, not {commit}")
        if held is not None:
            return
        if not text.strip():
            text = HEADER
        text += ("" if text.endswith("\n") else "\n") + entry_line(repo_id, commit)
        if _parsed(text, path) != {**entries, repo_id: commit}:  # a flow mapping ({...}) takes no line
            raise InputError(path, f"cannot add a line to it: add '{entry_line(repo_id, commit).strip()}' yourself")
        with AtomicFiles() as files:
            files.temp(path).write_text(text, encoding="utf-8")


def _parsed(text: str, path) -> dict[str, str] | None:
    try:
        return parse_lock(text, path)
    except InputError:
        return None


def snapshot_commit(folder: str | Path) -> str | None:
    """The commit a snapshot folder holds (its ``SNAPSHOT.json``), None where there is no snapshot."""
    manifest = Path(folder) / SNAPSHOT
    text = read_small_text(manifest, SNAPSHOT_LIMIT, "the snapshot record download_model writes", missing=None)
    if text is None:
        return None
    try:
        return json.loads(text).get("revision")
    except (json.JSONDecodeError, AttributeError, RecursionError):
        raise InputError(manifest, "not the JSON record download_model writes") from None


def check_snapshot(folder: str | Path, repo_id: str, lock_path: str | Path) -> None:
    """Refuse an ``@locked`` snapshot folder whose commit is not the one ``lock_path`` records for ``repo_id``
    (an edited lock, or data fetched under another lock): one line saying which to remove."""
    held = snapshot_commit(folder)
    if held is None:
        return
    recorded = locked(read_lock(lock_path), repo_id)
    if recorded is None:
        raise InputError(
            folder,
            f"holds {repo_id} at {held}, which {lock_path} does not record: add '{entry_line(repo_id, held).strip()}' "
            "to it, "
            "or remove the folder to resolve the commit again",
        )
    if recorded != held:
        raise InputError(
            folder,
            f"holds {repo_id} at {held}, but {lock_path} locks {recorded}: remove the folder to fetch {recorded}",
        )


def hub_spec(spec) -> str | None:
    """The ``hub:`` form of a config's model spec where it names a hub model: a ``hub:`` spec as given, and a
    plain hub id (``ORG/NAME`` or ``NAME`` where no local folder has that name) as ``hub:ID``, so that it is
    locked at its first download as one is, never loaded unpinned at job time (issue 46 §3); None for
    anything else (a local path, ``package:``, ``tiny``, a lexical scorer)."""
    if not isinstance(spec, str):
        return None
    if spec.startswith(HUB_PREFIX):
        return spec
    if ":" in spec or spec in (*LEXICAL, "tiny") or not REPO_ID.match(spec):
        return None
    if any(len(part) > HUB_NAME_MAX for part in spec.split("/")):  # a path, as no hub names a repository
        return None
    try:
        return None if Path(spec).exists() else HUB_PREFIX + spec
    except OSError:  # a name the file system cannot even look up is left as given
        return None


def check_one_commit_per_model(specs, lock_path: str | Path | None, where: str) -> None:
    """Refuse two ``hub:`` specs of one model (its id in any letter case: the hub ignores it) that name two
    commits, pinned or locked: one model, one commit, wherever a config names it (``where``, for the error)."""
    from pipeline.models.spec import hub_reference

    entries = read_lock(lock_path)  # once, not once a spec
    seen: dict[str, tuple[str, str | None]] = {}
    for spec in specs:
        repo_id, revision = hub_reference(spec)
        commit = revision or locked(entries, repo_id)
        first = seen.setdefault(repo_id.casefold(), (spec, commit))
        if first[1] is not None and commit is not None and first[1] != commit:
            raise InputError(where, f"{first[0]} and {spec} are one hub model at two commits: one commit per model")


def commit_text(spec: str, lock_path: str | Path | None) -> str:
    """What the plan shows for a hub backbone's commit: the pinned one, the locked one, or "resolved at
    first download"."""
    from pipeline.models.spec import hub_reference

    repo_id, revision = hub_reference(spec)
    if revision:
        return f"{revision} (pinned)"
    recorded = locked(read_lock(lock_path), repo_id)
    return f"{recorded} (locked in {lock_path})" if recorded else UNRESOLVED
