"""Atomic outputs: write to a hidden temporary file beside the target, then rename.

A stage that fails or is killed therefore never leaves a file under an output name, and
a rerun simply finishes the job. Stale temporaries of a killed run are removed when the
same target is written again.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Self


def _temp_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.tmp-{os.getpid()}")


def _remove_stale_temporaries(target: Path) -> None:
    for stale in target.parent.glob(f".{target.name}.tmp-*"):
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
        target = Path(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target not in self._pending:
            _remove_stale_temporaries(target)
            self._pending[target] = _temp_path(target)
        return self._pending[target]

    def commit(self) -> None:
        for target, temp in self._pending.items():
            if not temp.exists():
                raise RuntimeError(f"{target}: temporary output {temp} was never written")
        for target, temp in self._pending.items():
            os.replace(temp, target)
        self._pending.clear()

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
        else:
            self.abort()


def json_text(obj) -> str:
    """Indented, key-sorted JSON: stable across runs, readable in a diff."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_json(path, obj) -> None:
    """Write ``obj`` as JSON, atomically."""
    with AtomicFiles() as files:
        files.temp(path).write_text(json_text(obj))
