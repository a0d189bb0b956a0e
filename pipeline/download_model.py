"""Stage ``download-model``: one commit of a Hugging Face hub model, fetched into the data root.

A backbone given as ``hub:ORG/NAME@REVISION`` (the paper configs) is pinned: REVISION is the
full 40-character commit hash, so every run of the config starts from the same weights, and the
compute jobs read a local folder (cluster nodes often have no internet). The download rule runs
where Snakemake runs and writes ``<data_root>/models/ORG/NAME@REVISION``
(:func:`pipeline.models.spec.hub_folder`, which also parses the spec).

Only what loading needs is fetched: the configuration, the tokenizer files and the weights, as
safetensors where the commit has them (a ``pytorch_model.bin`` only where it has none; it is then
loaded with ``torch.load(weights_only=True)`` by transformers, which runs no pickled code). The
folder also gets ``SNAPSHOT.json``: the repository, the commit and the SHA-256 of every file, so
a later run can tell that the weights are the ones recorded. The folder appears under its final
name only once complete. An existing ``--out`` is replaced only where it is empty or an earlier
snapshot holding nothing but the files its ``SNAPSHOT.json`` lists: anything else in it, hidden or
not, is refused before the download, and again before the rename, with nothing touched
(docs/behaviour.md, "Outputs are never someone else's files").

A backbone named without a commit (``hub:ORG/NAME``) is locked at its first download
(:mod:`pipeline.models.hub_lock`): with ``--lock FILE`` (the config's ``models.lock``), a commit that file
records is fetched as a pinned one is; otherwise the hub's current commit of ``main`` is resolved,
fetched, and recorded there once the folder is complete. A recorded commit the hub no longer serves
stops the run with one line naming the model, the commit and the lock file (exit 2). The lock file must
be writable before a first download fetches anything (a snapshot whose commit cannot be recorded is one
the workflow refuses), and is read as a small file (pipeline/small_files.py), as ``SNAPSHOT.json`` is.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

from pipeline.atomic import resolve_target
from pipeline.errors import InputError, os_message
from pipeline.folder_contents import folder_entries, listing, unproven
from pipeline.models import hub_lock
from pipeline.models.spec import REVISION, hub_reference, parse_hub
from pipeline.provenance import file_fingerprint
from pipeline.small_files import read_small_text

log = logging.getLogger("pipeline.download_model")
RECORD = hub_lock.SNAPSHOT
# Snakemake's mark in a directory() output it was asked to --touch (the download rule's output is one).
WORKFLOW_MARKS = (".snakemake_timestamp",)
# What from_pretrained reads for an encoder and its tokenizer (sentence-transformers' module files too).
CONFIG_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "added_tokens.json",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
)


_SAFETENSORS = re.compile(r"[^/]+\.safetensors|model\.safetensors\.index\.json")
_PYTORCH_WEIGHTS = re.compile(r"pytorch_model(-\d+-of-\d+)?\.bin(\.index\.json)?")


def snapshot_file(name: str) -> bool:
    """Whether ``name`` is one this stage fetches into a snapshot (:func:`wanted_files`): a hub repository's
    configuration, tokenizer or weights file. A ``SNAPSHOT.json`` is in the folder it describes, so anyone
    can write one: a file it lists under any other name (a user's thesis.txt with its true SHA-256) is no
    file of the snapshot's, and is never deleted with it (issue 55 §1)."""
    return name in CONFIG_FILES or bool(_SAFETENSORS.fullmatch(name) or _PYTORCH_WEIGHTS.fullmatch(name))


def wanted_files(files: list[str], spec: str = "hub") -> list[str]:
    """The files of a commit that loading needs: configuration, tokenizer and one weights format."""
    chosen = [name for name in files if name in CONFIG_FILES]
    safetensors = [name for name in files if _SAFETENSORS.fullmatch(name)]
    weights = safetensors or [name for name in files if _PYTORCH_WEIGHTS.fullmatch(name)]
    if not weights:
        raise InputError(spec, "the commit holds no model weights (model.safetensors or pytorch_model.bin)")
    if "config.json" not in chosen:
        raise InputError(spec, "the commit holds no config.json")
    return sorted(chosen + weights)


def _network_errors() -> tuple[type[Exception], ...]:
    """What a failed listing or download raises: hub errors are OSErrors; transport errors come from
    the HTTP client huggingface_hub uses (httpx, or its fork httpx2)."""
    errors: list[type[Exception]] = [OSError, ValueError]
    for client in ("httpx", "httpx2"):
        try:
            errors.append(importlib.import_module(client).HTTPError)
        except ImportError:
            continue
    return tuple(errors)


def _vanished(exc: Exception) -> bool:
    """Whether the hub answered that the commit does not exist (not a network or permission failure)."""
    return type(exc).__name__ == "RevisionNotFoundError"


def resolve_commit(spec: str, api) -> str:
    """The hub's current commit of ``main`` for ``hub:ORG/NAME`` (its first download)."""
    repo_id, _ = hub_reference(spec)
    try:
        commit = api.model_info(repo_id, revision="main").sha
    except _network_errors() as exc:
        raise InputError(spec, f"cannot resolve the current commit ({type(exc).__name__}: {exc})") from None
    if not isinstance(commit, str) or not REVISION.match(commit):
        raise InputError(spec, f"the hub answered {commit!r}, not a 40-character commit hash")
    return commit


def fetch_locked(spec: str, out: Path, lock: Path | None, api=None) -> dict:
    """Fetch ``spec`` into ``out``: a pinned spec as :func:`fetch`; ``hub:ORG/NAME`` at the commit ``lock``
    records, or (first download) at the hub's current commit, which is then recorded in ``lock``."""
    import huggingface_hub

    repo_id, revision = hub_reference(spec)
    if revision is not None:
        return fetch(spec, out, api)
    if lock is None:
        raise InputError(
            spec, "a hub model without a commit is locked at its first download: give --lock FILE (models.lock)"
        )
    api = api or huggingface_hub.HfApi()
    locked = hub_lock.locked(hub_lock.read_lock(lock), repo_id)
    if locked is not None:
        log.info("%s: the commit %s, locked in %s", repo_id, locked, lock)
        return fetch(f"hub:{repo_id}@{locked}", out, api, lock=lock)
    hub_lock.check_writable(lock, repo_id)  # before anything is fetched: its commit must be recordable
    commit = resolve_commit(spec, api)
    log.info("%s: first download, resolved to %s", repo_id, commit)
    record = fetch(f"hub:{repo_id}@{commit}", out, api)
    hub_lock.record(lock, repo_id, commit)
    log.info("%s: %s recorded in %s", repo_id, commit, lock)
    return record


def fetch(spec: str, out: Path, api=None, lock: Path | None = None) -> dict:
    """Fetch the commit named by ``spec`` into ``out`` (atomically) and return its ``SNAPSHOT.json``
    (``lock``: the file the commit came from, named by the error where the hub no longer serves it)."""
    import huggingface_hub

    repo_id, revision = parse_hub(spec)
    check_out(out)  # before anything is fetched: a folder of other files is never replaced
    api = api or huggingface_hub.HfApi()
    try:
        files = api.list_repo_files(repo_id, revision=revision)
    except _network_errors() as exc:  # network, unknown repository or commit: one line, nothing written
        if lock is not None and _vanished(exc):
            raise InputError(lock, f"{repo_id}: the locked commit {revision} is no longer served by the hub") from None
        raise InputError(spec, f"cannot list the commit's files ({type(exc).__name__}: {exc})") from None
    names = wanted_files(files, spec)
    real = resolve_target(out)  # a link to the folder is kept; the folder it points to is written
    real.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{real.name}.", dir=real.parent))
    try:
        for number, name in enumerate(names, 1):
            log.info("%s@%s: %s (%d of %d)", repo_id, revision[:10], name, number, len(names))
            try:
                api.hf_hub_download(repo_id, name, revision=revision, local_dir=scratch)
            except _network_errors() as exc:
                raise InputError(spec, f"cannot fetch {name} ({type(exc).__name__}: {exc})") from None
        shutil.rmtree(scratch / ".cache", ignore_errors=True)  # huggingface_hub's download metadata
        record = {
            "repo_id": repo_id,
            "revision": revision,
            "files": {name: file_fingerprint(scratch / name)["sha256"] for name in names},
        }
        (scratch / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        check_out(out)  # again: a file may have appeared in it during the download
        replace_snapshot(scratch, real)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    log.info("%s@%s: %d files in %s", repo_id, revision[:10], len(names), out)
    return record


def check_out(out: Path) -> None:
    """Refuse an ``--out`` this stage may not replace: anything but a new or empty folder or an earlier
    snapshot that holds only the files its ``SNAPSHOT.json`` lists (a user's file, hidden or not, a
    ``.git/``, or a folder that is no snapshot at all), before anything is written or removed."""
    real = resolve_target(out)
    if not real.exists():
        return
    if not real.is_dir():
        raise InputError(out, "exists and is not a folder: refused, nothing touched")
    text = read_small_text(real / RECORD, hub_lock.SNAPSHOT_LIMIT, f"the {RECORD} this stage writes", missing=None)
    try:
        record = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        record = None
    files = record.get("files") if isinstance(record, dict) else None
    try:
        if not folder_entries(real):
            return
        # hashes prove a file unchanged, and only a name this stage fetches makes it the snapshot's own
        found = unproven(real, files, [RECORD, *WORKFLOW_MARKS], own=snapshot_file) if isinstance(files, dict) else None
    except OSError as exc:
        raise InputError(out, f"cannot read the existing output folder: {os_message(exc)}") from exc
    if found is None:
        raise InputError(
            out,
            f"holds files this stage did not write (no {RECORD}: not a snapshot of download-model): "
            "refused, nothing touched; remove it or choose another folder",
        )
    if found:
        raise InputError(
            out,
            f"holds files this stage did not write ({listing(found)}): refused, nothing touched; "
            "move them out or choose another folder",
        )


def replace_snapshot(scratch: Path, real: Path) -> None:
    """``scratch`` renamed to ``real``; an earlier snapshot there is moved aside first, put back if the
    rename fails, and removed after it."""
    old = real.with_name(f".{real.name}.old-{os.getpid()}") if real.exists() else None
    if old is not None:
        os.replace(real, old)
    try:
        os.replace(scratch, real)
    except OSError:
        if old is not None:
            os.replace(old, real)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        required=True,
        help="hub:ORG/NAME@COMMIT (the full 40-character commit hash), or hub:ORG/NAME (with --lock)",
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="folder to write (the data root's models/ORG/NAME@COMMIT or @locked)"
    )
    parser.add_argument(
        "--lock",
        type=Path,
        help="the config's lock file (models.lock): the commit of a hub:ORG/NAME model, recorded at its first download",
    )


def run(args: argparse.Namespace) -> None:
    fetch_locked(args.model, args.out, args.lock)
