"""Finding a task's files under the data root (layout of ``docs/data.md``).

Every file a task reads goes through :meth:`DataRoot.file`, which fails with an
:class:`~pipeline.errors.InputError` naming the missing path and records the file, so the
metrics JSON can list each input with its SHA-256. :meth:`DataRoot.load` runs a task's
loader and turns text that is not UTF-8 into an error naming the file and line (the
decoder itself names neither).
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.errors import InputError, translate
from pipeline.provenance import file_fingerprint


def leaves_root(relative: str) -> str | None:
    """Why ``relative``, a path meant to lie under the data root, would leave it; None if it stays.

    ``os.path.join(root, "/etc/x")`` drops the root, and ``root/../../etc/x`` climbs out of it:
    a path from a config or a task is refused for either, before anything joins or opens it.
    The check is lexical (what the path says); a link inside the data root is the data's own.
    """
    if os.path.isabs(relative):
        return "is an absolute path; paths here are relative to the data root"
    normal = os.path.normpath(relative)
    if normal == os.pardir or normal.startswith(os.pardir + os.sep):
        return "leaves the data root ('..')"
    return None


class DataRoot:
    def __init__(self, root) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise InputError(self.root, "data root is not a directory")
        self.used: list[Path] = []

    def file(self, relative: str, what: str = "") -> Path:
        path = self.root / relative
        if reason := leaves_root(str(relative)):
            raise InputError(path, reason)
        if not path.is_file():
            raise InputError(path, f"missing {what or 'data file'} (expected under the data root {self.root})")
        if path not in self.used:
            self.used.append(path)
        return path

    def package_file(self, path: Path) -> Path:
        """A file of the package a task reads instead of a data-root file (the printed analogy examples):
        recorded with the data files, so that its fingerprint is among the metrics' inputs."""
        if path not in self.used:
            self.used.append(path)
        return path

    def folder(self, relative: str, what: str = "") -> Path:
        path = self.root / relative
        if reason := leaves_root(str(relative)):
            raise InputError(path, reason)
        if not path.is_dir():
            raise InputError(path, f"missing {what or 'data folder'} (expected under the data root {self.root})")
        return path

    def load(self, loader):
        """``loader(self)``; a file that is not UTF-8 fails naming itself (the first recorded
        file that does not decode: files are recorded as they are opened)."""
        try:
            return loader(self)
        except UnicodeDecodeError as exc:
            for path in self.used:
                try:
                    path.read_bytes().decode("utf-8")
                except UnicodeDecodeError:
                    raise translate(exc, path) from exc
            raise InputError(self.root, "a data file under this root is not UTF-8 text") from exc

    def fingerprints(self) -> list[dict]:
        return [file_fingerprint(path) for path in self.used]
