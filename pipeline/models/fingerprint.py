"""Which weights made a number: a checkpoint's files and their SHA-256 (for the metrics' provenance).

A checkpoint is a local directory or a hub id; a hub id is looked up in the local cache only
(evaluation never downloads). Without a local copy the fingerprint says so (``files: null``).
"""

from __future__ import annotations

from pathlib import Path

from pipeline.provenance import file_fingerprint

WEIGHT_PATTERNS = ("config.json", "*.safetensors", "*.bin")


def checkpoint_dir(path_or_id: str) -> Path | None:
    """The directory holding a checkpoint's files: the path itself, or the hub cache snapshot."""
    path = Path(path_or_id)
    if path.is_dir():
        return path
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(path_or_id, local_files_only=True))
    except Exception:  # noqa: BLE001 - any failure means "not in the cache": no fingerprint
        return None


def checkpoint_fingerprint(path_or_id: str) -> dict:
    """SHA-256 of the config and weight files, so a metrics JSON names the exact weights."""
    directory = checkpoint_dir(path_or_id)
    if directory is None:
        return {"path": path_or_id, "files": None}
    files = {
        file.name: file_fingerprint(file)["sha256"]
        for pattern in WEIGHT_PATTERNS
        for file in sorted(directory.glob(pattern))
    }
    return {"path": str(directory), "files": files}
