"""An output never overwrites an input of its stage: the one check every stage that takes ``--out`` calls.

A stage's ``--out`` may name anything: the model it loads (its folder or a file in it, ``config.json``),
the data file it reads, a new file inside the data root. Each is refused before anything is written,
with one line naming the output and the input (docs/behaviour.md, "Outputs never overwrite inputs"):

- :func:`refuse_inputs` before any work: an ``--out`` that is, or lies inside, the data root or a model's
  folder or file (links followed as the writer follows them, :func:`pipeline.atomic.resolve_target`, and
  a hard link known by its inode);
- :func:`refuse_read_files` once the stage knows the files it read (a data root may link to a file
  elsewhere, which the first check cannot see): an ``--out`` that is one of them, or holds one of them.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.atomic import resolve_target
from pipeline.errors import InputError


class FileIdentity:
    """What an output path writes to: the file its links lead to (:func:`pipeline.atomic.resolve_target`,
    ``..`` taken after the links, as the kernel does) and, where it exists, its device and inode (a hard link);
    and the device and inode of every folder on its way, so that a second path to a folder (a bind mount, a
    second mount of one file system) is known as that folder, whatever its name."""

    def __init__(self, path) -> None:
        self.real = resolve_target(Path(path))
        self.inode = _inode(self.real)
        self.on_the_way = {inode for inode in map(_inode, (self.real, *self.real.parents)) if inode is not None}

    def same(self, other: FileIdentity) -> bool:
        return self.real == other.real or (self.inode is not None and self.inode == other.inode)

    def within(self, folder: Path) -> bool:
        """Whether this path is ``folder`` or lies inside it: by name, or by the folder's device and inode
        among the folders on its way."""
        if self.real == folder or folder in self.real.parents:
            return True
        inode = _inode(folder)
        return inode is not None and inode in self.on_the_way


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


def model_location(spec) -> Path | None:
    """The model's folder or file on this machine (links resolved); None for a hub id, a lexical baseline,
    or a spec that does not load (the loader says why, later)."""
    from pipeline.models.spec import model_path

    if not spec:
        return None
    try:
        path = model_path(str(spec))
    except InputError:
        return None
    return Path(os.path.realpath(path)) if path is not None and os.path.exists(path) else None


def refuse_inputs(out, data=None, models=(), files=()) -> None:
    """Before any work: refuse ``out`` where it is, or lies inside, the data root ``data`` or one of the
    ``models`` (specs as ``--model`` takes them: a folder, a vector file, ``word2vec:FILE``), or where it is,
    lies inside or holds one of the input ``files`` (files or folders of them: ``--input``, ``--data``)."""
    identity = FileIdentity(out)
    for path in files:
        given = FileIdentity(path)
        if identity.same(given) or identity.within(given.real) or given.within(identity.real):
            where = "is" if identity.same(given) else "lies inside" if identity.within(given.real) else "holds"
            raise InputError(out, f"{where} {path}, an input of this stage: an output never overwrites its input")
    if data is not None and identity.within(Path(os.path.realpath(data))):
        raise InputError(out, f"lies inside the data root {data}: an output never overwrites the data")
    for spec in models:
        model = model_location(spec)
        if model is None:
            continue
        alias = identity.same(FileIdentity(model))  # a hard link to the vector file, or the folder itself
        if alias or identity.within(model):
            where = "is" if alias or identity.real == model else "lies inside"
            raise InputError(out, f"{where} the model {spec}: an output never overwrites the model")


def refuse_read_files(outs, read, stage: str = "this stage") -> None:
    """After the inputs are read, before anything is written: refuse an output that is one of the files
    ``read`` (a link or a hard link to one included) or a folder that holds one of them."""
    inputs = [(Path(path), FileIdentity(path)) for path in read]
    for out in outs:
        identity = FileIdentity(out)
        for path, input_identity in inputs:
            if identity.same(input_identity):
                raise InputError(out, f"is {path}, an input of {stage}: an output never overwrites its input")
            if input_identity.within(identity.real):
                raise InputError(out, f"holds {path}, an input of {stage}: an output never overwrites its input")


def refuse_mapped_outputs(out_dir, inputs, stage: str = "this stage") -> None:
    """A stage that writes each input ``X.parquet`` as ``out_dir/X.parquet`` (:func:`pipeline.shards.map_files`):
    refuse the ``out_dir`` where one of those outputs would be its own input (the folder the inputs are
    read from, or a link to it); a folder that merely holds the inputs deeper down is fine."""
    from pipeline.shards import input_files

    files = input_files(list(inputs))
    for path in files:
        if FileIdentity(Path(out_dir) / path.name).same(FileIdentity(path)):
            raise InputError(
                out_dir, f"would write over {path}, an input of {stage}: an output never overwrites its input"
            )
