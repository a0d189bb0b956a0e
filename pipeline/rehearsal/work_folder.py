"""The rehearsal's work folder: made fresh for each rehearsal, and deleted by the next one only where it
provably holds nothing but what a rehearsal wrote (docs/stages/rehearsal.md, docs/behaviour.md).

A marker file that merely exists proves nothing (anyone can create an empty ``.rehearsal-work``), so the
marker is a record: :func:`seal`, run when a rehearsal ends, however it ends, lists every file of the
folder with the SHA-256 and size it had (:func:`pipeline.folder_contents.written_record`). :func:`claim`,
before the next rehearsal, deletes the folder only where that record proves every file in it
(:func:`pipeline.folder_contents.unproven`); a file added since, or changed, or a folder whose marker
records nothing (planted, or a rehearsal killed before it could seal), is refused with one line naming
what it holds, and nothing is touched.

The record proves a file unchanged, not that the stage wrote it (anyone can list a user's file with its true
SHA-256, issue 55 §1): each folder also names its own layout, the names the stage writes at its top
(``layout``, :func:`pipeline.folder_contents.own_names` patterns), and a listed file elsewhere is kept.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pipeline.atomic import json_text, write_json
from pipeline.errors import InputError
from pipeline.folder_contents import folder_entries, listing, own_names, unproven, written_record
from pipeline.small_files import MIB, read_small_text

MARKER_LIMIT = 64 * MIB  # a record of every file of a rehearsal's folder, each with its hash


class MarkedFolder:
    """A folder a stage makes and empties again on its next run: ``marker`` holds the record of what the
    stage wrote (module docstring); ``what`` names such a folder in an error (``a rehearsal's folder``);
    ``layout``: the names the stage writes in it (:func:`pipeline.folder_contents.own_names` patterns)."""

    def __init__(self, marker: str, made_by: str, what: str, layout: tuple[str, ...]) -> None:
        self.marker, self.made_by, self.what = marker, made_by, what
        self.own = own_names(layout)

    def _record(self, folder: Path) -> dict | None:
        """The files the marker proves (entry -> proof), None where it is not this stage's record."""
        # a small regular file (a FIFO would block the read, a link to /dev/zero never end it: one line each)
        text = read_small_text(folder / self.marker, MARKER_LIMIT, f"the {self.marker} record", missing=None)
        try:
            record = json.loads(text) if text is not None else None
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            return None
        if not isinstance(record, dict) or record.get("made_by") != self.made_by:
            return None
        return record["files"] if isinstance(record.get("files"), dict) else None

    def claim(self, folder: Path) -> None:
        """Make ``folder`` empty but for a fresh marker: new, empty, or an earlier run's folder whose marker
        proves every file in it (then emptied). Anything else is refused untouched, its files named."""
        folder = Path(folder)
        if folder.exists():
            if not folder.is_dir():
                raise InputError(folder, f"exists and is not {self.what}: move it away")
            entries = folder_entries(folder)
            record = self._record(folder) if entries else {}
            if record is None:
                planted = f" (its {self.marker} records no files)" if (folder / self.marker).exists() else ""
                raise InputError(folder, f"exists, is not empty and is not {self.what}{planted}: move it or give --out")
            strangers = unproven(folder, record, [self.marker], own=self.own) if entries else []
            if strangers:
                raise InputError(
                    folder,
                    f"holds files it did not write ({listing(strangers)}), or not with these bytes: refused, "
                    "nothing touched; move them out, or remove the folder if a killed run left it",
                )
            for child in folder.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / self.marker).write_text(json_text({"made_by": self.made_by, "files": {}}), encoding="utf-8")

    def seal(self, folder: Path) -> None:
        """Record every file the stage left in ``folder`` with its proof, for the next :meth:`claim`."""
        folder = Path(folder)
        if self._record(folder) is not None:  # never over a marker that is not this stage's own
            write_json(folder / self.marker, {"made_by": self.made_by, "files": written_record(folder, [self.marker])})


# What a rehearsal writes in its folder (pipeline/rehearsal/rehearsal.py, docs/stages/rehearsal.md "Outputs"):
# its servers' folders, its data roots and Hugging Face cache, each whole, and its listings, config and log.
REHEARSAL_LAYOUT = (
    *(f"{folder}/**" for folder in ("mirror", "sources", "hub", "data", "paper-data", "hf-home")),
    *("paper-dry-run.txt", "rehearsal-dry-run.txt", "rehearsal.yaml", "rehearsal.json", "snakemake.log"),
)
REHEARSAL = MarkedFolder(".rehearsal-work", "python -m pipeline rehearsal", "a rehearsal's folder", REHEARSAL_LAYOUT)
