"""What made an output: code version, stage parameters and input checksums.

Every stage stores this dict in its Parquet metadata and its stats JSON, so any number in a
result table can be traced back to the run that made it.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path

import pipeline


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """Package version plus the git commit of the checkout (``+dirty`` when modified)."""
    root = Path(pipeline.__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", "pipeline"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return pipeline.__version__
    return f"{pipeline.__version__}+g{commit}{'.dirty' if dirty else ''}"


def portable_path(path) -> str:
    """``path`` as provenance records it: relative to the working directory when it lies
    under it (Snakemake runs every job from the repository root), so that the same run in
    another folder writes byte-identical outputs; other paths as given."""
    path = Path(path)
    if path.is_absolute():
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)
    return str(path)


def file_fingerprint(path) -> dict:
    """Size and modification-independent identity of an input file (SHA-256 of its bytes)."""
    path = Path(path)
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"path": portable_path(path), "bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def make(stage: str, params: dict, inputs: list | None = None, seed: int | None = None) -> dict:
    record = {"stage": stage, "code_version": code_version(), "params": params}
    if inputs is not None:
        record["inputs"] = inputs
    if seed is not None:
        record["seed"] = seed
    return record
